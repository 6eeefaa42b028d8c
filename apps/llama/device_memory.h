// Device memory shared by the kernels of one model run: named tensors, each a device image that
// stays resident between kernel launches (a layer's weights, the KV cache, the activations), and
// windows of them bound to a device program's arguments. A kernel that writes a window writes the
// tensor in place: a decode step's projections append their new K and V rows to the cache, and a
// kernel reads the last row of the activations without a copy.
//
// The tensors are the byte images of layout.h; two kernels share a tensor when the bytes one
// writes are the layout the other reads (a {heads * dim, seq} matrix is a {dim, seq, heads}
// tensor stored head by head within a position). In timing-only mode no bytes are held: the
// windows are checked all the same.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "device/machine_desc.h"
#include "device/program.h"
#include "sim/simulator.h"

namespace spyre::llama {

struct TensorView {
    std::string tensor;
    int64_t offset = 0;  // bytes
    int64_t bytes = 0;
};

class DeviceMemory {
public:
    explicit DeviceMemory(bool timing_only, MachineDesc machine = {});

    bool timing_only() const { return timing_only_; }
    const MachineDesc &machine() const { return machine_; }

    // A zeroed tensor of `bytes`; spyre::Error if the name is taken.
    void allocate(const std::string &name, int64_t bytes);
    // The tensor, allocated (zeroed) or grown to at least `bytes` (its old contents then dropped).
    void ensure(const std::string &name, int64_t bytes);
    bool has(const std::string &name) const { return sizes_.count(name) != 0; }
    int64_t size(const std::string &name) const;
    int64_t allocated_bytes() const;

    TensorView whole(const std::string &name) const;
    // `bytes` from `offset`; spyre::Error naming the tensor when it reaches past its end.
    TensorView window(const std::string &name, int64_t offset, int64_t bytes) const;

    // Host access (the driver's inputs and the results it reads back); not in timing-only mode.
    std::vector<uint8_t> read(const TensorView &view) const;
    void write(const TensorView &view, const std::vector<uint8_t> &bytes);

    // Runs `program` with its arguments (every buffer but its temporaries, in buffer order) bound
    // to `args`: inputs and in-out buffers take the windows' bytes, outputs and in-out buffers are
    // written back to them. spyre::Error naming the kernel and argument when a window's size is not
    // the argument's device image size or the count differs.
    SimResult run(const DeviceProgram &program, const std::vector<TensorView> &args, SimOptions options = {});

private:
    bool timing_only_;
    MachineDesc machine_;
    std::map<std::string, int64_t> sizes_;
    std::map<std::string, std::vector<uint8_t>> images_;
};

}  // namespace spyre::llama
