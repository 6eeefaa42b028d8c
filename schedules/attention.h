// Scaled-dot-product attention for one head: out = softmax(Q K^T * scale) V, with Q, K, V {D, S}
// fp16 (sticked on the head dimension D), scores and softmax in fp32, probabilities fp16, out
// {D, S} fp16. Both matmuls run on the PE array (K^T is restickified on the way). Schedules:
// "fused" keeps a query tile's scores, softmax and probabilities in LX; "unfused" puts scores and
// probabilities through device memory.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct AttentionKernel {
    Halide::ImageParam q, k, v;
    Halide::Func scores, mx, e, sum, probs, acc, out;
    Halide::Var d, s, t;  // head dim, query, key
    Halide::RDom rd, rt;   // over D and over the keys
    int dim = 64, seq = 128;
};

AttentionKernel make_attention(int dim, int seq);
const std::vector<std::string> &attention_schedules();
void schedule_attention(AttentionKernel &k, const std::string &name, const MachineDesc &machine = {});

}  // namespace spyre
