// int8 weights through the llama app (ModelOptions::weights): the layers' projections quantised
// per output column as they are written, run by schedules/qlinear.h's kernel with the scale and
// the epilogue fused. The device's tokens and logits are the plain decoder's on the same
// (dequantised) weights; a decode step streams about half the bytes of fp16's.
#include <gtest/gtest.h>

#include <cmath>

#include "device/error.h"
#include "llama_config.h"
#include "llama_figures.h"
#include "llama_model.h"
#include "llama_reference.h"
#include "llama_test_util.h"

namespace spyre::llama {
namespace {

// llama_tiny with an MLP of whole int8 sticks (768 columns; qlinear takes N in sticks of 128).
LlamaConfig tiny_int8() {
    LlamaConfig c = llama_tiny();
    c.intermediate = 768;
    return c;
}

std::vector<int> int8_prompt(int n, int vocab) {
    std::vector<int> ids;
    for (int i = 0; i < n; i++) ids.push_back(int((uint32_t(i + 5) * 2654435761u >> 9) % uint32_t(vocab)));
    return ids;
}

// A 24-token prefill and 4 greedy decode steps with int8 and with fp8 weights: within two fp16
// ULPs (4e-3) of the plain decoder run on the dequantised weights (q * scale), the same tokens;
// every projection ran the byte kernel. The fp16 model of the same seed differs from it by the
// quantisation alone (measured: 0.004 for int8, 0.030 for fp8 E4M3, whose 3 mantissa bits round
// each weight by up to 1/16), far less than the logits' size.
class LlamaByteWeights : public ::testing::TestWithParam<Weights> {};

TEST_P(LlamaByteWeights, PrefillAndDecodeMatchThePlainDecoderOnTheDequantisedWeights) {
    const LlamaConfig c = tiny_int8();
    ModelOptions o;
    o.max_context = 32;
    ModelOptions of = o;
    o.weights = GetParam();
    LlamaModel device(c, o), fp16(c, of);
    ReferenceLlama plain(c, device);
    const std::vector<float> wq = device.weights("L0.wqkv"), wf = fp16.weights("L0.wqkv");
    ASSERT_EQ(wq.size(), wf.size());
    EXPECT_GT(test::max_abs_diff(wq, wf), 0.0) << "the int8 weights are the fp16 ones quantised";
    const std::vector<int> prompt = int8_prompt(24, c.vocab);
    const StepResult first = device.prefill(prompt);
    int int8_runs = 0;
    const std::string label = std::string(weights_name(GetParam())) + " weights";
    for (const KernelRun &k : first.runs) int8_runs += k.schedule.find(label) != std::string::npos;
    EXPECT_EQ(int8_runs, 5 * c.layers) << "qkv, o, gate, up and down of every layer";
    fp16.prefill(prompt);
    std::vector<int> next = first.tokens;
    std::vector<float> p = plain.step(prompt);
    double quantisation = 0;
    for (int s = 0; s < 5; s++) {
        EXPECT_LE(test::max_abs_diff(device.logits(0), p), 4e-3) << "step " << s;
        EXPECT_EQ(next[0], argmax_of(p)) << "step " << s;
        quantisation = std::max(quantisation, test::max_abs_diff(device.logits(0), fp16.logits(0)));
        if (s == 4) break;
        p = plain.step(next);
        fp16.decode(next);  // the same tokens: the logits differ by the weights alone
        next = device.decode(next).tokens;
    }
    EXPECT_GT(quantisation, 0.0);
    EXPECT_LT(quantisation, 0.25);
}

INSTANTIATE_TEST_SUITE_P(Formats, LlamaByteWeights, ::testing::Values(Weights::Int8, Weights::Fp8),
                         [](const auto &i) { return std::string(weights_name(i.param)); });

// Llama-3.1-8B's decode step (timing only, one layer): the int8 layer streams about half the
// bytes of the fp16 one, is modelled faster, and its speed of light counts the int8 bytes (so its
// fraction stays at most 1).
TEST(LlamaInt8, An8bDecodeLayerWithInt8WeightsReadsHalfTheBytes) {
    struct Layer {
        double us = 0, bytes = 0, sol = 0;
    };
    auto layer = [](Weights w) {
        ModelOptions o;
        o.timing_only = true;
        o.layers = 1;
        o.max_context = 2048;
        o.weights = w;
        o.schedules = ModelOptions::Schedules::Named;
        LlamaModel m(llama31_8b(), o);
        m.set_context(2047);
        const StepResult r = m.decode({0});
        Layer l;
        for (const KernelRun &k : r.runs)
            if (k.layer == 0) l.us += k.stats.us, l.bytes += double(k.stats.dram_read_bytes);
        l.sol = step_figures(m.card_config(), {1, 1, 2048, w}, r, o.machine).layer.sol_frac();
        return l;
    };
    const Layer f16 = layer(Weights::F16), i8 = layer(Weights::Int8);
    EXPECT_LT(i8.bytes, 0.55 * f16.bytes);
    EXPECT_GT(i8.bytes, 0.45 * f16.bytes);
    EXPECT_LT(i8.us, f16.us);
    EXPECT_LE(i8.sol, 1.0);
    EXPECT_GT(i8.sol, 0.3);
}

TEST(LlamaInt8Errors, ColumnsNotInWholeInt8SticksAndUnknownWeightTypesAreRefusedByName) {
    ModelOptions o;
    o.timing_only = true;
    o.weights = Weights::Int8;
    std::string msg = "(no error)";
    try {
        LlamaModel m(llama_tiny(), o);
    } catch (const spyre::Error &e) {
        msg = e.what();
    }
    EXPECT_NE(msg.find("llama: int8 weights take a projection's columns in whole byte sticks of 128; intermediate is 704"),
              std::string::npos)
        << msg;
    msg = "(no error)";
    try {
        weights_by_name("int4");
    } catch (const spyre::Error &e) {
        msg = e.what();
    }
    EXPECT_NE(msg.find("llama: weights 'int4'; known: fp16, int8"), std::string::npos) << msg;
    EXPECT_EQ(weights_by_name("int8"), Weights::Int8);
}

}  // namespace
}  // namespace spyre::llama
