// A device program: the only contract between the compiler and the device. It holds the kernel's
// buffers (arguments and device-memory temporaries, each with shape, type and device layout), the
// DMA and matmul descriptor tables, and one SPMD instruction stream that every core runs (CORE_ID
// tells cores apart). Loops stay loops, so the program grows with the schedule, not the data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dtype.h"
#include "isa.h"
#include "layout.h"

namespace spyre {

// Input: its contents are given before the run. Output: its contents after the run are a result
// (it starts as zeros). InOut: both, e.g. a kernel that updates a tensor in place; a run must be
// given its initial contents. Temp: device-memory scratch, neither given nor returned.
enum class BufferKind : uint8_t { Input = 0, Output = 1, Temp = 2, InOut = 3 };
const char *buffer_kind_name(BufferKind k);

constexpr int kMaxBufferRank = 4;  // dimensions of a device buffer (the file format's limit too)

struct BufferDecl {
    std::string name;
    BufferKind kind = BufferKind::Input;
    DType type = DType::F16;
    std::vector<int64_t> shape;  // logical extents, Halide order (dim 0 innermost)
    DeviceLayout layout;
};

struct DeviceProgram {
    // 2: int8/uint8 element types, VROUND, VSHIFT; 3: VCVTF8, VSHIFT mirror edges, VLSEL; 4: VSELIDX;
    // 5: BufferKind::InOut; 6: VREDARGMAX, VREDARGMIN, VSCANSUM; 7: LDLX; 8: VCMPLT, VCMPLE, VCMPEQ, VSELM;
    // 9: DMA_LD's shared mode (kDmaShared); 10: kSrc1Row, kFoldGroups; 11: VSTRIDE
    static constexpr uint32_t kFormatVersion = 11;

    std::string kernel_name;
    int32_t num_cores = 1;
    std::vector<BufferDecl> buffers;
    std::vector<DmaDesc> dma;
    std::vector<MatmulDesc> mm;
    std::vector<Instr> code;

    // Device image size of buffer i under the given stick size.
    int64_t buffer_bytes(size_t i, int64_t stick_bytes) const;
};

}  // namespace spyre
