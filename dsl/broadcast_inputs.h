// Broadcast parameters staged by the compiler. A small 1-D input read as one value per row or head
// by every lane of a vector (a dequantisation scale per row, a mean and rstd, ALiBi slopes:
// out(x, y) = in(x, y) * scale(y)) is read at an element that does not start a stick, which a DMA
// cannot fetch on its own. When a schedule as written is refused, compiling copies each such input
// whole into each core's LX (stage_all_in_lx(p, out, Var::outermost()), what a user would write and
// what auto_schedule does) and tries once more, so that every core reads its values from LX. So it
// does for a small input of any rank that only Funcs without a vectorized loop read, one element at
// a time at positions no DMA of whole sticks fetches (in(x / 2, y) in an unvectorized Func). A
// schedule that compiles as written is kept as written.
#pragma once

#include <vector>

#include "Halide.h"
#include "compile.h"
#include "device/error.h"

namespace spyre {

// Stages the inputs of `output`'s pipeline of at most kBroadcastInputBytes that are 1-D and read by
// vector Funcs alone, each read a broadcast (no index of it follows a vectorized loop), or of any
// rank and read by Funcs without a vectorized loop alone; none read as an index into another buffer; `specs` are the inputs' shapes, in order. Leaves an input a schedule
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
