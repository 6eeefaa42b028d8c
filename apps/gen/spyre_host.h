// Running a .spyre device program from host code with Halide buffers, without Halide.h: what the
// headers spyre-gen writes (out/<name>.h) call. The program file is read once per path and cached.
//
//   #include "softmax_stage4.h"                 // written by spyre-gen / add_spyre_kernel
//   Halide::Runtime::Buffer<> in(halide_type_t(halide_type_float, 16), 1024, 512), out(...);
//   int err = softmax_stage4(in, out);          // 0 on success; the error is printed otherwise
#pragma once

#include <string>
#include <vector>

#include "HalideBuffer.h"
#include "HalideRuntime.h"
#include "device/machine_desc.h"
#include "device/program.h"
#include "sim/simulator.h"

namespace spyre::host {

// Device image of a host buffer for buffer `decl` (type and extents must match; any strides), and
// the dense host buffer of a device image. Throw spyre::Error naming the buffer on a mismatch.
std::vector<uint8_t> to_device_image(const halide_buffer_t &host, const BufferDecl &decl, const MachineDesc &m);
Halide::Runtime::Buffer<> from_device_image(const std::vector<uint8_t> &image, const BufferDecl &decl,
                                            const MachineDesc &m);

// Runs `program` on the simulator: `inputs` in the program's input order (in-out buffers among
// them), the result (the first output or in-out buffer) copied into `output` (allocated by the
// caller with the output's type and extents). Throws spyre::Error.
SimStats run_program(const DeviceProgram &program, const std::vector<const halide_buffer_t *> &inputs,
                     halide_buffer_t *output, const MachineDesc &machine = {}, const SimOptions &options = {});
// The same for every result: `outputs` one per output (or in-out) buffer, in the program's order
// (a Pipeline({a, b}) writes a then b).
SimStats run_program(const DeviceProgram &program, const std::vector<const halide_buffer_t *> &inputs,
                     const std::vector<halide_buffer_t *> &outputs, const MachineDesc &machine = {},
                     const SimOptions &options = {});

// The entry point of generated headers: reads (and caches) the program at `program_path` and the
// machine description at `machine_path` (empty: the default machine), then run_program. Returns 0,
// or -1 after printing "spyre: <kernel>: <error>" to stderr. `stats` (optional) receives the stats.
int run_kernel_file(const std::string &program_path, const std::string &machine_path,
                    const std::vector<const halide_buffer_t *> &inputs, halide_buffer_t *output,
                    SimStats *stats = nullptr);
// The same for a kernel with several outputs (every output, in the program's order).
int run_kernel_file(const std::string &program_path, const std::string &machine_path,
                    const std::vector<const halide_buffer_t *> &inputs, const std::vector<halide_buffer_t *> &outputs,
                    SimStats *stats = nullptr);

}  // namespace spyre::host
