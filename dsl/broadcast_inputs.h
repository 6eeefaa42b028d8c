// Broadcast parameters staged by the compiler. A small 1-D input read as one value per row or head
// by every lane of a vector (a dequantisation scale per row, a mean and rstd, ALiBi slopes:
// out(x, y) = in(x, y) * scale(y)) is read at an element that does not start a stick, which a DMA
// cannot fetch on its own. When a schedule as written is refused, compiling copies each such input
// whole into each core's LX (stage_all_in_lx(p, out, Var::outermost()), what a user would write and
// what auto_schedule does) and tries once more, so that every core reads its values from LX. A
// schedule that compiles as written is kept as written.
#pragma once

#include <vector>

#include "Halide.h"
#include "compile.h"
#include "device/error.h"

namespace spyre {

// Stages the 1-D inputs of `output`'s pipeline that only vector Funcs read, each read a broadcast
// (no index of it follows a vectorized loop) and none an index into another buffer, and that hold at
// most kBroadcastInputBytes; `specs` are the inputs' shapes, in order. Leaves an input a schedule
// staged itself (a wrapper of it), or one that a Func computed at root reads, as it is. Returns
// whether it staged any.
bool stage_broadcast_inputs(const Halide::Func &output, const std::vector<Halide::ImageParam> &inputs,
                            const std::vector<TensorSpec> &specs, const MachineDesc &machine);

// The most bytes of an input the compiler copies into each core's LX as a broadcast parameter.
constexpr int64_t kBroadcastInputBytes = 64 * 1024;

// compile(), and where it throws spyre::Error and stage_broadcast_inputs stages an input, compile()
// once more; the first error stands when nothing is staged or the second attempt fails too.
// Only with options.stage_broadcast_inputs.
template <typename Compile>
auto compile_staging_broadcasts(const Halide::Func &output, const std::vector<Halide::ImageParam> &inputs,
                                const CompileOptions &options, Compile &&compile) {
    try {
        return compile();
    } catch (const Error &first) {
        if (!options.stage_broadcast_inputs || !stage_broadcast_inputs(output, inputs, options.inputs, options.machine))
            throw;
        try {
            return compile();
        } catch (const Error &) {
            throw first;
        }
    }
}

}  // namespace spyre
