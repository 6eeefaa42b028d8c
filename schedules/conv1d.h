// A depthwise 1-D convolution along the sequence, the stick dimension of an fp16 {seq, channels}
// tensor: each channel c has its own K taps w(c, k), and outside the sequence the input is zero
// (constant_exterior). Causal (the output at t sees t - K + 1 .. t, the zero padding on the left)
// or centred (t - K/2 .. t + K - 1 - K/2):
//   causal:   out(t, c) = sum_k w(c, k) * in(t - k, c)
//   centred:  out(t, c) = sum_k w(c, k) * in(t + k - K/2, c)
// summed in fp16 in the order of k. Each tap is one shifted read of the staged rows (VSHIFT with a
// zero edge) times the channel's weight. Every schedule keeps all the weights in each core's LX
// (the channels are their stick dimension); the channels are the rows:
//   "root":    one core; the back end stages the input rows (with their halo).
//   "tiles":   one core; tiles of channels, each tile's input rows copied into LX once.
//   "cores32": the channels split over up to 32 cores, then the same tiles on each core.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct Conv1dKernel {
    Halide::ImageParam in;  // {seq, channels}
    Halide::ImageParam w;   // {channels, taps}: a tap's weights are consecutive, one per row
    Halide::Func out;
    Halide::Var t, c;
    int seq = 0, channels = 0, taps = 0;
    bool causal = true;
};

// Throws spyre::Error on taps outside 1..16.
Conv1dKernel make_conv1d(int seq, int channels, int taps, bool causal);
const std::vector<std::string> &conv1d_schedules();
// Throws spyre::Error listing the names on an unknown one.
void schedule_conv1d(Conv1dKernel &k, const std::string &name, const MachineDesc &machine = {});

}  // namespace spyre
