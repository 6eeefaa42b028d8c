// Rotary position embedding (RoPE), in two formulations. RopeStyle::RotateHalf (GPT-NeoX, Llama
// in Hugging Face): the "rotate half" formulation, on an fp16 {heads * head_dim,
// seq} tensor with cos and sin tables of {head_dim, seq}: within each head, element i pairs with
// i + head_dim / 2,
//   out(x, p) = in(x, p) * cos(i, p) + rot(x, p) * sin(i, p),   i = x % head_dim,
//   rot(x, p) = -in(x + head_dim/2, p) for i < head_dim/2, in(x - head_dim/2, p) otherwise.
// The select of rot becomes two reads with a zero edge on their halves, added: at head_dim 64 each
// is a VSHIFT by 32 within the stick; at head_dim 128 (and other multiples of 128) the halves are
// whole sticks and the reads aligned. RopeStyle::Interleaved (GPT-J, the original Llama): element
// 2k pairs with 2k + 1,
//   out(x, p) = x even ? in(x) * cos(i) - in(x + 1) * sin(i) : in(x) * cos(i) + in(x - 1) * sin(i),
// with the tables holding each pair's angle twice. Halide computes the two sides on every other
// element and interleaves them; the back end computes each side on whole sticks (the partner a
// VSHIFT by one) and picks even lanes from one and odd lanes from the other (VLSEL). Pairs never
// cross a stick. head_dim must be whole sticks (a multiple of 64) in both. Schedules
// (the sequence positions are the rows; x is split by heads, each head a run of sticks):
//   "root":    one core; the back end stages the rows and the tables.
//   "tiles":   one core; tiles of positions, the input and the tables' rows copied into LX once.
//   "cores32": the positions split over up to 32 cores, then the same tiles on each core.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

enum class RopeStyle { RotateHalf, Interleaved };

struct RopeKernel {
    Halide::ImageParam in;        // {heads * head_dim, seq}
    Halide::ImageParam cos, sin;  // {head_dim, seq}
    Halide::Func out;
    Halide::Var x, p;
    int heads = 0, head_dim = 0, seq = 0;
};

// Throws spyre::Error when head_dim is not a positive multiple of 64 or cols is not whole heads.
// With in_cols > 0, `in` is a wider {in_cols, seq} tensor and the rotated columns are cols of it from
// in_offset (a whole number of heads; a fused projection's queries or keys, say).
RopeKernel make_rope(int cols, int seq, int head_dim, RopeStyle style = RopeStyle::RotateHalf, int in_cols = 0,
                     int in_offset = 0);
const std::vector<std::string> &rope_schedules();
// Throws spyre::Error listing the names on an unknown one.
void schedule_rope(RopeKernel &k, const std::string &name, const MachineDesc &machine = {});

}  // namespace spyre
