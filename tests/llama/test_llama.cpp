// The llama app (apps/llama): a reduced Llama decoder (llama_tiny: hidden 256, 4 query and 2 KV
// heads of 64, intermediate 704, vocabulary 1024, 2 layers) prefilled with 64 tokens and decoded
// greedily, kernel by kernel on one simulated device, against Halide's CPU realisation of the same
// kernels on the same device memory and against a plain C++ decoder (llama_reference.h). Also the
// device memory's windows, the driver's refusals, and Llama 3.1's RoPE frequencies.
#include <filesystem>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "../channel_floor.h"
#include "device/error.h"
#include "device/fp8.h"
#include "device/half.h"
#include "device_memory.h"
#include "llama_config.h"
#include "llama_figures.h"
#include "llama_model.h"
#include "llama_reference.h"
#include "llama_stages.h"
#include "llama_test_util.h"
#include "sim/ibm_kernel.h"
#include "step_trace.h"

namespace spyre::llama {
namespace {

std::vector<int> prompt_ids(int n, int vocab) {
    std::vector<int> ids;
    for (int i = 0; i < n; i++) ids.push_back(int((uint32_t(i) * 2654435761u >> 7) % uint32_t(vocab)));
    return ids;
}

// A 64-token prefill then 8 greedy decode steps: the device's logits stay within one fp16 ULP of
// the CPU realisation's of the same kernels (not bit for bit: measured 9.8e-4, one ULP; the bound,
// 2e-3, is one ULP at the logits' size, about 2), and within two fp16 ULPs (4e-3) of the plain
// decoder's (its attention is the one-pass softmax in fp32; measured: 9.8e-4, one ULP); the greedy
// tokens are the same in all three.
TEST(LlamaTiny, PrefillAndGreedyDecodeMatchTheCpuAndThePlainDecoder) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.max_context = 96;
    LlamaModel device(c, o);
    ModelOptions oc = o;
    oc.cpu = true;
    LlamaModel cpu(c, oc);
    ReferenceLlama plain(c, device);
    const std::vector<int> ids = prompt_ids(64, c.vocab);
    std::vector<int> next = device.prefill(ids).tokens, cpu_next = cpu.prefill(ids).tokens;
    std::vector<float> plain_logits = plain.step(ids);
    double worst_cpu = 0, worst_plain = 0;
    for (int s = 0; s <= 8; s++) {
        const std::vector<float> logits = device.logits(0);
        worst_cpu = std::max(worst_cpu, test::max_abs_diff(logits, cpu.logits(0)));
        worst_plain = std::max(worst_plain, test::max_abs_diff(logits, plain_logits));
        ASSERT_EQ(next.size(), 1u);
        EXPECT_EQ(next[0], cpu_next[0]) << "step " << s;
        EXPECT_EQ(next[0], argmax_of(plain_logits)) << "step " << s;
        EXPECT_EQ(next[0], argmax_of(logits)) << "the device's argmax is its logits' (step " << s << ")";
        if (s == 8) break;
        plain_logits = plain.step({next[0]});
        next = device.decode(next).tokens;
        cpu_next = cpu.decode(cpu_next).tokens;
    }
    EXPECT_LE(worst_cpu, 2e-3);
    EXPECT_LE(worst_plain, 4e-3);
    EXPECT_EQ(device.position(0), 72);
}

// Every kernel scheduled by the autoscheduler instead (label sweep: each of some 20 kernels is a
// search): the same greedy tokens, and logits within an fp16 ULP of the CPU's. A kernel it finds
// no schedule for (the decode step's attention over 65 keys) runs its named schedule, as its label
// says.
TEST(SweepLlamaTiny, AutoScheduledKernelsMatchTheCpu) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.max_context = 96;
    o.schedules = ModelOptions::Schedules::Auto;
    o.auto_evaluations = 8;
    LlamaModel device(c, o);
    ModelOptions oc = o;
    oc.cpu = true;
    LlamaModel cpu(c, oc);
    const std::vector<int> ids = prompt_ids(64, c.vocab);
    StepResult d = device.prefill(ids);
    std::vector<int> next = d.tokens, cpu_next = cpu.prefill(ids).tokens;
    int auto_kernels = 0;
    for (const KernelRun &k : d.runs) auto_kernels += k.schedule.rfind("auto: ", 0) == 0;
    EXPECT_GE(auto_kernels, int(d.runs.size()) / 2);
    for (int s = 0; s < 2; s++) {
        EXPECT_EQ(next, cpu_next) << "step " << s;
        EXPECT_LE(test::max_abs_diff(device.logits(0), cpu.logits(0)), 2e-3) << "step " << s;
        next = device.decode(next).tokens;
        cpu_next = cpu.decode(cpu_next).tokens;
    }
}

// ModelOptions::tuning_db: the first model searches each kernel and stores it, a second model on
// the same file applies every stored schedule without searching, to the same programs.
TEST(LlamaTiny, AutoSchedulesComeFromTheTuningDatabaseTheSecondTime) {
    const std::string db = (std::filesystem::temp_directory_path() /
                            ("llama_tune_" + std::to_string(::getpid()) + ".db")).string();
    std::filesystem::remove(db);
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.timing_only = true;
    o.max_context = 96;
    o.schedules = ModelOptions::Schedules::Auto;
    o.auto_evaluations = 4;
    o.tuning_db = db;
    auto run = [&] {
        LlamaModel m(c, o);
        return m.prefill(std::vector<int>(64, 0));
    };
    const StepResult first = run(), second = run();
    ASSERT_EQ(first.runs.size(), second.runs.size());
    const std::string hit = " (tuning db)";
    auto searched_as = [&](const std::string &label) {
        const size_t at = label.find(hit);
        return at == std::string::npos ? label : label.substr(0, at);
    };
    int searched = 0, hits_first = 0, hits_second = 0;
    for (size_t i = 0; i < first.runs.size(); i++) {
        const KernelRun &a = first.runs[i], &b = second.runs[i];
        if (a.schedule.rfind("auto: ", 0) != 0) continue;  // the named schedule where auto found none
        searched++;
        // The first run finds in the file only the kernels it searched already (ffn_norm is
        // attn_norm's pipeline on the same shapes).
        hits_first += a.schedule.find(hit) != std::string::npos;
        hits_second += b.schedule.find(hit) != std::string::npos;
        EXPECT_EQ(searched_as(a.schedule), searched_as(b.schedule)) << a.stage;
        EXPECT_EQ(a.stats.us, b.stats.us) << a.stage;
    }
    EXPECT_GT(searched, 10);
    EXPECT_LT(hits_first, searched / 2);
    EXPECT_EQ(hits_second, searched);
    std::filesystem::remove(db);
}

// Two sequences decoded together: each token's K and V rows are appended to its own sequence's
// cache and each attends to its own cache, as two decoders run alone would.
TEST(LlamaTiny, ABatchOfTwoDecodesEachSequenceAsAloneWould) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.max_context = 8;
    o.batch = 2;
    LlamaModel device(c, o);
    ReferenceLlama first(c, device), second(c, device);
    std::vector<int> tokens = {5, 900};
    for (int s = 0; s < 4; s++) {
        const std::vector<int> next = device.decode(tokens).tokens;
        const std::vector<float> a = first.step({tokens[0]}), b = second.step({tokens[1]});
        EXPECT_LE(test::max_abs_diff(device.logits(0), a), 4e-3) << "step " << s;
        EXPECT_LE(test::max_abs_diff(device.logits(1), b), 4e-3) << "step " << s;
        EXPECT_EQ(next[0], argmax_of(a)) << "step " << s;
        EXPECT_EQ(next[1], argmax_of(b)) << "step " << s;
        tokens = next;
    }
}

// Timing-only runs hold no weights, compile the same kernels and report every launch.
TEST(LlamaTiny, TimingOnlyStepsReportEveryKernelOfEveryLayer) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.timing_only = true;
    o.max_context = 128;
    LlamaModel m(c, o);
    const StepResult p = m.prefill(std::vector<int>(64, 0));
    // embedding; 2 x (attn_norm, qkv, rope q, rope k, v to the cache, attention, o_proj, ffn_norm,
    // gate, up, down); final norm, lm_head, argmax
    EXPECT_EQ(p.runs.size(), 1u + 2 * 11 + 3);
    double sum = 0;
    for (const KernelRun &k : p.runs) {
        // Each kernel moved data and took at least the channel's time for what it moved.
        EXPECT_GT(k.stats.dram_read_bytes, 0) << k.stage;
        EXPECT_GT(k.stats.dram_write_bytes, 0) << k.stage;
        EXPECT_GE(k.stats.us, testing_floor::channel_floor_us(k.stats.dram_read_bytes, k.stats.dram_write_bytes, o.machine))
            << k.stage;
        sum += k.stats.us;
    }
    EXPECT_NEAR(p.us, sum, 1e-9 * sum);
    m.set_context(100);
    const StepResult d = m.decode({0});
    EXPECT_EQ(d.runs.size(), p.runs.size());
    EXPECT_EQ(m.position(0), 101);
    // The figures name the stages spyre-bench registers, each with a speed of light under its time.
    for (auto [step, shape] : {std::pair{&p, StepShape{64, 1, 64}}, {&d, StepShape{1, 1, 101}}}) {
        const StepFigures f = step_figures(c, shape, *step, o.machine);
        std::vector<std::string> names;
        for (const auto *list : {&f.layer_stages, &f.outside})
            for (const Figure &g : *list) {
                names.push_back(g.name);
                EXPECT_GT(g.sol_us, 0) << g.name;
                EXPECT_LE(g.sol_frac(), 1.0) << g.name;
            }
        EXPECT_EQ(names, step_stage_names(1, shape.tokens > 1));
        EXPECT_LE(f.layer.sol_frac(), 1.0);
        EXPECT_NEAR(f.model_us, f.layer.us * c.layers + f.outside[0].us + f.outside[1].us + f.outside[2].us +
                                    f.outside[3].us, 1e-6 * f.model_us);
        // Every launch of the step (all layers were run) pays the host's launch cost once, beside the
        // device time; each stage carries IBM's formula for its kernels.
        EXPECT_EQ(f.launches, int(step->runs.size()));
        EXPECT_DOUBLE_EQ(f.host_us, f.launches * o.machine.host_launch_ns / 1000.0);
        EXPECT_GT(f.host_us, 0);
        EXPECT_DOUBLE_EQ(f.model_with_host_us(), f.model_us + f.host_us);
        for (const Figure &g : f.layer_stages) {
            EXPECT_GT(g.formula_us, 0) << g.name;
            EXPECT_EQ(g.faster_than_formula(), g.us < 0.8 * g.formula_us) << g.name;
        }
        // IBM's formula for the whole step, summed as the device time is.
        double outside_formula = 0;
        for (const Figure &g : f.outside) outside_formula += g.formula_us;
        EXPECT_NEAR(f.model_formula_us, f.layer.formula_us * c.layers + outside_formula, 1e-9 * f.model_formula_us);
        MachineDesc no_host = o.machine;
        no_host.host_launch_ns = 0;
        EXPECT_DOUBLE_EQ(step_figures(c, shape, *step, no_host).model_with_host_us(), f.model_us);
    }
}

// spyre-llama's figures and its choice among schedules come from timing-only runs that summarise
// steady loops; on every kernel of an 8B layer (prefill of 512, decode at batch 1 and 16) the
// summary must agree with running every iteration (the issue that asked for this saw the prefill's
// gate and up projections 4-5% short; on 2026-12-06 the largest gap was 0.36%).
TEST(LlamaTimingSummary, EveryKernelOfAn8bLayerAgreesWithExactTimingWithinOnePercent) {
    const LlamaConfig c = llama31_8b();
    struct Step {
        const char *name;
        int batch, tokens;
    };
    for (const Step &s : {Step{"prefill", 1, 512}, Step{"decode", 1, 1}, Step{"decode", 16, 1}}) {
        std::vector<StepResult> results;
        for (bool summarize : {true, false}) {
            ModelOptions o;
            o.timing_only = true;
            o.layers = 1;
            o.batch = s.batch;
            o.max_context = 2048;
            o.summarize_loops = summarize;
            LlamaModel m(c, o);
            if (s.tokens > 1) {
                results.push_back(m.prefill(std::vector<int>(size_t(s.tokens), 0)));
            } else {
                m.set_context(1024);
                results.push_back(m.decode(std::vector<int>(size_t(s.batch), 0)));
            }
        }
        const StepResult &summ = results[0], &exact = results[1];
        ASSERT_EQ(summ.runs.size(), exact.runs.size()) << s.name;
        for (size_t i = 0; i < summ.runs.size(); i++) {
            const KernelRun &a = summ.runs[i], &b = exact.runs[i];
            ASSERT_EQ(a.stage, b.stage);
            // The same program ran both times, so they moved the same bytes.
            EXPECT_EQ(a.stats.dram_read_bytes, b.stats.dram_read_bytes) << s.name << " " << a.stage;
            EXPECT_NEAR(a.stats.us / b.stats.us, 1.0, 0.01)
                << s.name << " batch " << s.batch << " " << a.stage << ": summarised " << a.stats.us << " us, exact "
                << b.stats.us << " us";
        }
    }
}

// A layer's speed of light at Llama-3.1-8B's decode step is streaming its weights once (and the
// cache it reads): 436 MB at 150 GB/s under IBM's read law is 2.9 ms; a prefill's is its MACs.
TEST(LlamaFigures, TheLayersSpeedOfLightIsItsWeightsAtDecodeAndItsMacsAtPrefill) {
    const LlamaConfig c = llama31_8b();
    const LayerWork decode = layer_work(c, {1, 1, 2048});
    EXPECT_NEAR(decode.read_bytes, 436224000.0 + 8192 + 2047.0 * 1024 * 4, 1.0);
    EXPECT_NEAR(decode.macs, 218103808.0 + 32.0 * 2048 * 128 * 2, 1.0);
    const LayerWork prefill = layer_work(c, {2048, 1, 2048});
    EXPECT_NEAR(prefill.macs, 2048.0 * 218103808 + 32.0 * 128 * 2 * (2048.0 * 2049 / 2), 1.0);
}

// IBM's formula reads a kernel that copies or rotates a window of the fused QKV projection's rows
// (v_to_cache: 1024 of 6144 columns; rope_q: 4096), or gathers rows of a table (the embedding), as
// the pointwise kernel it is: it writes as many elements as it reads. Read as a row reduction (its output is smaller
// than the input buffer), the formula priced it at the reduction rate of its few cores, 3.2x slower
// than its traffic at the channel law. RMSNorm stays a fused reduction.
TEST(LlamaFigures, TheFormulaReadsWindowsOfTheFusedProjectionAsPointwise) {
    const LlamaConfig c = llama31_8b();
    const MachineDesc m;
    const int rows = 64, qkv = c.q_width() + 2 * c.kv_width();
    auto kernel_of = [&](StageKernel k) {
        return ibm_kernel(compile_for_spyre(k.output, k.inputs, k.options), m);
    };
    const IbmKernel v = kernel_of(copy_stage("v_to_cache", c.kv_width(), rows, qkv, c.q_width() + c.kv_width(), Backend::Spyre));
    EXPECT_EQ(v.kind, IbmKernelKind::Pointwise) << ibm_kernel_kind_name(v.kind);
    const IbmKernel q = kernel_of(rope_stage("rope_q", c, c.q_width(), rows, qkv, 0, Backend::Spyre));
    EXPECT_EQ(q.kind, IbmKernelKind::Pointwise) << ibm_kernel_kind_name(q.kind);
    const IbmKernel e = kernel_of(embedding_stage(c, rows, 32768, Backend::Spyre));
    EXPECT_EQ(e.kind, IbmKernelKind::Pointwise) << ibm_kernel_kind_name(e.kind);
    EXPECT_EQ(kernel_of(rmsnorm_stage("attn_norm", c, rows, Backend::Spyre)).kind, IbmKernelKind::FusedReduction);
}

// Runs `dev` compiled for Spyre and `cpu` realised by Halide's CPU on the same arguments in `mem`,
// each writing a new output of `out_type`; returns the two outputs' bytes (device first).
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> device_and_cpu(StageKernel &dev, StageKernel &cpu,
                                                                     DeviceMemory &mem,
                                                                     const std::vector<TensorView> &args,
                                                                     Halide::Type out_type) {
    const int64_t out_bytes = argument_bytes(dev.options.output, out_type, {});
    mem.allocate("dev", out_bytes);
    mem.allocate("cpu", out_bytes);
    CompileOptions o = dev.options;
    o.kernel_name = "p";
    std::vector<TensorView> dargs = args, cargs = args;
    dargs.push_back(mem.whole("dev"));
    cargs.push_back(mem.whole("cpu"));
    mem.run(compile_for_spyre(dev.output, dev.inputs, o), dargs);
    realize_on_cpu(cpu, mem, cargs);
    return {mem.read(mem.whole("dev")), mem.read(mem.whole("cpu"))};
}

// The byte-weight projections (Weights::Int8 and Fp8: schedules/qlinear.h with the per-column scale
// and the epilogue), under each schedule that applies, at a decode step's row, a few rows and a
// prefill's tile: the same fp16 values as Halide's CPU realisation, within a rounding.
TEST(LlamaProjections, EveryScheduleOfAnInt8OrFp8ProjectionMatchesTheCpu) {
    struct Shape {
        int rows, inner, cols;
    };
    int checked = 0;
    for (Weights wt : {Weights::Int8, Weights::Fp8})
    for (Shape sh : {Shape{1, 1024, 1024}, Shape{2, 512, 384}, Shape{64, 256, 512}})
        for (const std::string &sched : projection_schedules(sh.rows, sh.inner, sh.cols, wt))
            for (Epilogue e : {Epilogue::None, Epilogue::Residual, Epilogue::SiluGate, Epilogue::Partial}) {
                // fp8 at the decode row and the prefill tile; every epilogue is int8's.
                if (wt == Weights::Fp8 && (sh.rows == 2 || e == Epilogue::Partial || e == Epilogue::Residual)) continue;
                SCOPED_TRACE(std::string(weights_name(wt)) + " " + sched + " " + std::to_string(sh.rows) + "x" +
                             std::to_string(sh.inner) + "x" + std::to_string(sh.cols) + " epilogue " +
                             std::to_string(int(e)));
                StageKernel dev = projection_stage("p", sh.rows, sh.inner, sh.cols, e, Backend::Spyre, sched, wt);
                StageKernel cpu = projection_stage("p", sh.rows, sh.inner, sh.cols, e, Backend::Cpu, sched, wt);
                ASSERT_EQ(dev.inputs.at(1).type(), wt == Weights::Fp8 ? Halide::UInt(8) : Halide::Int(8));
                DeviceMemory mem(false);
                std::vector<TensorView> args;
                uint32_t state = 11;
                for (size_t i = 0; i < dev.inputs.size(); i++) {
                    const Halide::Type t = dev.inputs[i].type();
                    const int64_t bytes = argument_bytes(dev.options.inputs[i], t, {});
                    mem.allocate("in" + std::to_string(i), bytes);
                    std::vector<uint8_t> img(static_cast<size_t>(bytes));
                    for (size_t b = 0; b < img.size(); b += size_t(t.bytes())) {
                        state = state * 1664525u + 1013904223u;
                        const int r = int(state >> 9) % 2001 - 1000;  // -1000 .. 1000
                        if (t == Halide::Int(8)) {
                            img[b] = uint8_t(int8_t(r * 127 / 1000));
                        } else if (t == Halide::UInt(8)) {  // fp8 E4M3 codes of values up to 448
                            img[b] = fp8_encode(float(r) * 0.448f, Fp8Format::E4M3);
                        } else {
                            // Scales near 1/127 (1/448 for fp8: a weight of up to 1), activations up to 0.05.
                            const float top = wt == Weights::Fp8 ? 448.0f : 127.0f;
                            const float v = i == 2 ? (1.5f + float(r) / 2000.0f) / top : float(r) / 1000.0f * 0.05f;
                            const uint16_t h = float_to_half(v);
                            img[b] = uint8_t(h), img[b + 1] = uint8_t(h >> 8);
                        }
                    }
                    mem.write(mem.whole("in" + std::to_string(i)), img);
                    args.push_back(mem.whole("in" + std::to_string(i)));
                }
                const Halide::Type out_t = e == Epilogue::Partial ? Halide::Float(32) : Halide::Float(16);
                const auto [a, b] = device_and_cpu(dev, cpu, mem, args, out_t);
                double worst = 0, largest = 0;
                for (size_t i = 0; i + out_t.bytes() <= a.size(); i += size_t(out_t.bytes())) {
                    float x, y;
                    if (out_t == Halide::Float(32)) {
                        std::memcpy(&x, &a[i], 4);
                        std::memcpy(&y, &b[i], 4);
                    } else {
                        x = half_to_float(uint16_t(a[i] | a[i + 1] << 8));
                        y = half_to_float(uint16_t(b[i] | b[i + 1] << 8));
                    }
                    worst = std::max(worst, double(std::fabs(x - y)));
                    largest = std::max(largest, double(std::fabs(y)));
                }
                EXPECT_GT(largest, 0.01) << "not a product of zeros";
                // The same products summed in another order: within an fp16 rounding of the values.
                EXPECT_LE(worst, 2e-3 * std::max(1.0, largest));
                checked++;
            }
    EXPECT_EQ(checked, 3 * 2 * 4 + 2 * 2 * 2);
}

// A decode step's attention as one kernel per window of 256 positions (`bucket`: the keys past the
// context weighed 0 by a bias the caller writes) gives the kernel compiled for the context (its
// keys bounded at compile time) bit for bit, under every schedule that applies: the same tiles in
// the same order, the extra tiles folded in with weight 0.
TEST(LlamaAttention, ADecodeBucketKernelGivesThePerContextKernelsOutputBitForBit) {
    const LlamaConfig c = llama_tiny();
    int checked = 0;
    for (int context : {70, 300})
        for (const std::string &sched : attention_schedules(1, context)) {
            SCOPED_TRACE(sched + " context " + std::to_string(context));
            StageKernel fixed = attention_stage(c, 1, context, Backend::Spyre, sched);
            StageKernel bucket = attention_stage(c, 1, context, Backend::Spyre, sched, true);
            ASSERT_EQ(bucket.inputs.size(), 4u);
            DeviceMemory mem(false);
            std::vector<TensorView> args;
            uint32_t state = 3;
            for (size_t i = 0; i < 3; i++) {
                const int64_t bytes = argument_bytes(fixed.options.inputs[i], Halide::Float(16), {});
                mem.allocate("in" + std::to_string(i), bytes);
                std::vector<uint8_t> img(static_cast<size_t>(bytes));
                for (size_t b = 0; b + 1 < img.size(); b += 2) {
                    state = state * 1664525u + 1013904223u;
                    const uint16_t h = float_to_half(float(int(state >> 9) % 2001 - 1000) / 1000.0f);
                    img[b] = uint8_t(h), img[b + 1] = uint8_t(h >> 8);
                }
                mem.write(mem.whole("in" + std::to_string(i)), img);
                args.push_back(mem.whole("in" + std::to_string(i)));
            }
            const int window = decode_key_window(context);
            mem.allocate("bias", argument_bytes(bucket.options.inputs[3], Halide::Float(16), {}));
            std::vector<uint8_t> bias(size_t(mem.size("bias")), 0);
            for (int p = context; p < window; p++) {
                const uint16_t lowest = float_to_half(-65504.0f);
                bias[size_t(2 * p)] = uint8_t(lowest), bias[size_t(2 * p + 1)] = uint8_t(lowest >> 8);
            }
            mem.write(mem.whole("bias"), bias);
            const int64_t out_bytes = argument_bytes(fixed.options.output, Halide::Float(16), {});
            mem.allocate("fixed", out_bytes);
            mem.allocate("bucket", out_bytes);
            std::vector<TensorView> fargs = args, bargs = args;
            fargs.push_back(mem.whole("fixed"));
            bargs.push_back(mem.whole("bias"));
            bargs.push_back(mem.whole("bucket"));
            mem.run(compile_for_spyre(fixed.output, fixed.inputs, fixed.options), fargs);
            mem.run(compile_for_spyre(bucket.output, bucket.inputs, bucket.options), bargs);
            EXPECT_EQ(mem.read(mem.whole("bucket")), mem.read(mem.whole("fixed")));
            checked++;
        }
    EXPECT_GE(checked, 8);
}

// A decode step's attention reading a paged cache in place (pool_blocks: each key tile a block of
// the pool, named by the block table) gives the attention over the same rows laid out in order bit
// for bit: 8 blocks of 64 positions, a window of 4 tiles in blocks 5, 2, 7 and 0, context 200.
TEST(LlamaAttention, ADecodeReadingAPagedPoolInPlaceGivesTheContiguousCachesOutputBitForBit) {
    const LlamaConfig c = llama_tiny();
    const int context = 200, block = 64, pool_blocks = 8;
    const std::vector<int> table = {5, 2, 7, 0};
    StageKernel paged = attention_stage(c, 1, context, Backend::Spyre, "kv_stream/64", true, pool_blocks);
    StageKernel ordered = attention_stage(c, 1, context, Backend::Spyre, "kv_stream/64", true);
    ASSERT_EQ(paged.inputs.size(), 5u);
    DeviceMemory mem(false);
    uint32_t state = 9;
    auto random_f16 = [&](const std::string &name, int64_t bytes) {
        mem.allocate(name, bytes);
        std::vector<uint8_t> img(static_cast<size_t>(bytes));
        for (size_t b = 0; b + 1 < img.size(); b += 2) {
            state = state * 1664525u + 1013904223u;
            const uint16_t h = float_to_half(float(int(state >> 9) % 2001 - 1000) / 1000.0f);
            img[b] = uint8_t(h), img[b + 1] = uint8_t(h >> 8);
        }
        mem.write(mem.whole(name), img);
        return img;
    };
    random_f16("q", argument_bytes(paged.options.inputs[0], Halide::Float(16), {}));
    const int64_t row = argument_bytes(paged.options.inputs[1], Halide::Float(16), {}) / (pool_blocks * block);
    const std::vector<uint8_t> kpool = random_f16("kpool", row * pool_blocks * block);
    const std::vector<uint8_t> vpool = random_f16("vpool", row * pool_blocks * block);
    // The window's rows in order: block table[j]'s rows for key tile j.
    for (const auto &[name, pool] : {std::pair<std::string, const std::vector<uint8_t> *>{"k", &kpool}, {"v", &vpool}}) {
        std::vector<uint8_t> rows;
        for (int blk : table) rows.insert(rows.end(), pool->begin() + blk * block * row, pool->begin() + (blk + 1) * block * row);
        mem.allocate(name, int64_t(rows.size()));
        mem.write(mem.whole(name), rows);
    }
    mem.allocate("bias", argument_bytes(paged.options.inputs[3], Halide::Float(16), {}));
    std::vector<uint8_t> bias(size_t(mem.size("bias")), 0);
    const uint16_t lowest = float_to_half(-65504.0f);
    for (int p = context; p < 256; p++) std::memcpy(bias.data() + 2 * p, &lowest, 2);
    mem.write(mem.whole("bias"), bias);
    mem.allocate("table", argument_bytes(paged.options.inputs[4], Halide::Int(32), {}));
    std::vector<uint8_t> ids(size_t(mem.size("table")), 0);
    std::memcpy(ids.data(), table.data(), 4 * table.size());
    mem.write(mem.whole("table"), ids);
    const int64_t out = argument_bytes(paged.options.output, Halide::Float(16), {});
    mem.allocate("out_paged", out);
    mem.allocate("out_ordered", out);
    mem.run(compile_for_spyre(paged.output, paged.inputs, paged.options),
            {mem.whole("q"), mem.whole("kpool"), mem.whole("vpool"), mem.whole("bias"), mem.whole("table"),
             mem.whole("out_paged")});
    mem.run(compile_for_spyre(ordered.output, ordered.inputs, ordered.options),
            {mem.whole("q"), mem.whole("k"), mem.whole("v"), mem.whole("bias"), mem.whole("out_ordered")});
    EXPECT_EQ(mem.read(mem.whole("out_paged")), mem.read(mem.whole("out_ordered")));
    EXPECT_NE(test::refusal_of([&] { attention_stage(c, 1, context, Backend::Spyre, "kv_resident/64", true, pool_blocks); })
                  .find("a paged cache (pool_blocks) is read a key tile at a time through its block table: take kv_stream"),
              std::string::npos);
    EXPECT_NE(test::refusal_of([&] { attention_stage(c, 4, 8, Backend::Spyre, "kv_resident", false, pool_blocks); })
                  .find("reads a paged cache in place for a single-token decode only"),
              std::string::npos);
}

// Every schedule the driver may pick for a decode step's projection (split-K with the share whole,
// in K panels, in N tiles; pe; pe_ring) computes what Halide's CPU realisation does, with each
// epilogue, through the driver's own path (device memory, compile, simulate).
TEST(LlamaProjections, EveryScheduleOfADecodeProjectionMatchesTheCpu) {
    struct Shape {
        int rows, inner, cols;
    };
    int split_k_tiles = 0;
    for (Shape sh : {Shape{1, 1024, 14336}, Shape{1, 2048, 256}, Shape{2, 1024, 512}})
        for (const std::string &sched : projection_schedules(sh.rows, sh.inner, sh.cols))
            for (Epilogue e : {Epilogue::None, Epilogue::SiluGate}) {
                // The wide shape is there for split-K's N tiles (pe and pe_ring have the others).
                if (sh.cols > 4096 && (sched.rfind("split_k", 0) != 0 || e == Epilogue::None)) continue;
                SCOPED_TRACE(sched + " " + std::to_string(sh.rows) + "x" + std::to_string(sh.inner) + "x" +
                             std::to_string(sh.cols));
                split_k_tiles += sched.find('x') != std::string::npos;
                StageKernel dev = projection_stage("p", sh.rows, sh.inner, sh.cols, e, Backend::Spyre, sched);
                StageKernel cpu = projection_stage("p", sh.rows, sh.inner, sh.cols, e, Backend::Cpu);
                DeviceMemory mem(false);
                std::vector<TensorView> args;
                uint32_t state = 7;
                for (size_t i = 0; i < dev.inputs.size(); i++) {
                    const int64_t bytes = argument_bytes(dev.options.inputs[i], dev.inputs[i].type(), {});
                    mem.allocate("in" + std::to_string(i), bytes);
                    std::vector<uint8_t> img(static_cast<size_t>(bytes));
                    for (size_t b = 0; b + 1 < img.size(); b += 2) {
                        state = state * 1664525u + 1013904223u;
                        const uint16_t h = float_to_half(float(int(state >> 9) % 2001 - 1000) / 1000.0f * 0.05f);
                        img[b] = uint8_t(h), img[b + 1] = uint8_t(h >> 8);
                    }
                    mem.write(mem.whole("in" + std::to_string(i)), img);
                    args.push_back(mem.whole("in" + std::to_string(i)));
                }
                const auto [a, b] = device_and_cpu(dev, cpu, mem, args, Halide::Float(16));
                double worst = 0;
                for (size_t i = 0; i + 1 < a.size(); i += 2)
                    worst = std::max(worst, double(std::fabs(half_to_float(uint16_t(a[i] | a[i + 1] << 8)) -
                                                             half_to_float(uint16_t(b[i] | b[i + 1] << 8)))));
                // Split-K adds the cores' partials in another order than the CPU's sum: at most a
                // rounding of the fp16 result (values below 1 here: 1e-3 is an ULP).
                EXPECT_LE(worst, 1e-3);
            }
    EXPECT_GE(split_k_tiles, 2) << "the wide projection takes split-K in N tiles";
}

TEST(DeviceMemory, WindowsAreCheckedAndWritesLandInPlace) {
    DeviceMemory mem(false);
    mem.allocate("t", 256);
    mem.write(mem.window("t", 128, 2), {7, 9});
    const std::vector<uint8_t> all = mem.read(mem.whole("t"));
    EXPECT_EQ(all[128], 7);
    EXPECT_EQ(all[129], 9);
    EXPECT_EQ(all[0], 0);
    EXPECT_NE(test::refusal_of([&] { mem.window("t", 200, 100); }).find("outside tensor 't' of 256 bytes"), std::string::npos);
    EXPECT_NE(test::refusal_of([&] { mem.allocate("t", 8); }).find("'t' is allocated already"), std::string::npos);
    EXPECT_NE(test::refusal_of([&] { mem.whole("u"); }).find("no tensor 'u'"), std::string::npos);
    mem.ensure("t", 512);
    EXPECT_EQ(mem.size("t"), 512);
}

TEST(DeviceMemory, AWindowOfTheWrongSizeForAnArgumentIsRefusedByName) {
    DeviceProgram p;
    p.kernel_name = "k";
    p.buffers = {BufferDecl{"in", BufferKind::Input, DType::F16, {64, 2}, {}},
                 BufferDecl{"out", BufferKind::Output, DType::F16, {64, 2}, {}}};
    DeviceMemory mem(true);
    mem.allocate("a", 1024);
    const std::string e = test::refusal_of([&] { mem.run(p, {mem.window("a", 0, 256), mem.window("a", 256, 128)}); });
    EXPECT_NE(e.find("kernel k: argument out needs 256 bytes"), std::string::npos) << e;
    EXPECT_NE(test::refusal_of([&] { mem.run(p, {mem.window("a", 0, 256)}); }).find("1 tensors bound to its 2 arguments"),
              std::string::npos);
}

TEST(LlamaModelErrors, MisuseIsRefusedByName) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.timing_only = true;
    o.max_context = 16;
    o.batch = 2;
    LlamaModel m(c, o);
    EXPECT_NE(test::refusal_of([&] { m.decode({1}); }).find("one token per sequence (2), got 1"), std::string::npos);
    EXPECT_NE(test::refusal_of([&] { m.set_context(16); }).find("outside the cache of 16 positions"), std::string::npos);
    m.set_context(15);
    m.decode({1, 2});
    EXPECT_NE(test::refusal_of([&] { m.decode({1, 2}); }).find("has no room for 1 more in a cache of 16"), std::string::npos);
    EXPECT_NE(test::refusal_of([] { llama_config("70b"); }).find("known: 8b, tiny"), std::string::npos);
    ModelOptions f;
    f.max_context = 8;
    LlamaModel functional(c, f);
    EXPECT_NE(test::refusal_of([&] { functional.set_context(4); }).find("only in timing-only mode"), std::string::npos);
    EXPECT_NE(test::refusal_of([&] { functional.logits(0); }).find("no logits for sequence 0"), std::string::npos);
}

TEST(DeviceMemory, BadSizesAndTimingOnlyReadsAreRefused) {
    DeviceMemory mem(false);
    EXPECT_NE(test::refusal_of([&] { mem.allocate("z", 0); }).find("tensor 'z' of 0 bytes"), std::string::npos);
    mem.allocate("t", 64);
    EXPECT_NE(test::refusal_of([&] { mem.write(mem.whole("t"), {1, 2}); }).find("2 bytes written to a window of 64 of 't'"),
              std::string::npos);
    DeviceMemory timing(true);
    timing.allocate("t", 64);
    EXPECT_NE(test::refusal_of([&] { timing.read(timing.whole("t")); }).find("no contents to read in timing-only mode ('t')"),
              std::string::npos);
}

TEST(LlamaModelErrors, OptionsOutOfRangeAreRefusedByName) {
    const LlamaConfig c = llama_tiny();
    auto refused = [&](ModelOptions o) {
        o.timing_only = o.timing_only || !o.cpu;
        return test::refusal_of([&] { LlamaModel m(c, o); });
    };
    ModelOptions o;
    o.batch = 0;
    EXPECT_NE(refused(o).find("batch 0 (at least one sequence)"), std::string::npos);
    o = {};
    o.max_context = 0;
    EXPECT_NE(refused(o).find("max_context 0"), std::string::npos);
    o = {};
    o.layers = 3;
    EXPECT_NE(refused(o).find("layers 3 of a model of 2"), std::string::npos);
    o = {};
    o.cpu = true;
    o.timing_only = true;
    EXPECT_NE(test::refusal_of([&] { LlamaModel m(c, o); }).find("the CPU backend has no timing-only mode"), std::string::npos);
    o = {};
    o.tuning_db = "unused.db";
    EXPECT_NE(refused(o).find("tuning_db holds auto_schedule's searches; the named schedules run none"), std::string::npos);
    o = {};
    o.schedules = ModelOptions::Schedules::Auto;
    o.auto_evaluations = 0;
    EXPECT_NE(refused(o).find("auto_evaluations 0 (each search times at least one candidate)"), std::string::npos);
    ModelOptions t;
    t.timing_only = true;
    LlamaModel m(c, t);
    EXPECT_NE(test::refusal_of([&] { m.prefill({}); }).find("a step of no tokens"), std::string::npos);
    EXPECT_NE(test::refusal_of([] { ModelOptions::schedules_by_name("best"); }).find("known: named, auto, fastest"),
              std::string::npos);
    EXPECT_EQ(ModelOptions::schedules_by_name("fastest"), ModelOptions::Schedules::Fastest);
}

TEST(LlamaStageErrors, BadStageArgumentsAreRefusedByName) {
    LlamaConfig wide = llama_tiny();
    wide.hidden = 1 << 28;  // a 512 MiB row: no part of the vocabulary fits one core's span
    EXPECT_NE(test::refusal_of([&] { vocab_split(wide, MachineDesc{}); }).find("fits one core's span"), std::string::npos);
    EXPECT_NE(test::refusal_of([] { projection_stage("p", 1, 2048, 256, Epilogue::None, Backend::Spyre, "split_k/999"); })
                  .find("no schedule split_k/999 for 1 rows of 2048 x 256"),
              std::string::npos);
    EXPECT_NE(test::refusal_of([] { attention_stage(llama_tiny(), 1, 70, Backend::Spyre, "kv_stream/100"); })
                  .find("attention schedule 'kv_stream/100': key tiles of 100; a decode step takes 64, 128 or 256"),
              std::string::npos);
    EXPECT_NE(test::refusal_of([] { argument_bytes(TensorSpec{{64}, {}}, Halide::Float(64), MachineDesc{}); })
                  .find("has no device type"),
              std::string::npos);
    StageKernel k = copy_stage("copy", 64, 2, 64, 0, Backend::Cpu);
    DeviceMemory mem(false);
    mem.allocate("a", 256);
    EXPECT_NE(test::refusal_of([&] { realize_on_cpu(k, mem, {mem.whole("a")}); }).find("1 tensors bound to its 2 arguments"),
              std::string::npos);
    EXPECT_NE(test::refusal_of([&] { realize_on_cpu(k, mem, {mem.window("a", 0, 128), mem.window("a", 128, 128)}); })
                  .find("argument in bound to 128 bytes"),
              std::string::npos);
}

TEST(StepTraceErrors, UnreadableOrMalformedKernelTracesAndUnwritablePathsAreNamed) {
    StepTrace t;
    EXPECT_NE(test::refusal_of([&] { t.add("/nonexistent/k.json", "k", 0, 1); }).find("cannot read the kernel trace"),
              std::string::npos);
    const std::string bad = ::testing::TempDir() + "/bad_trace.json";
    std::ofstream(bad) << "{not json";
    EXPECT_NE(test::refusal_of([&] { t.add(bad, "k", 0, 1); }).find("is not JSON"), std::string::npos);
    std::remove(bad.c_str());
    EXPECT_NE(test::refusal_of([&] { t.write("/nonexistent/dir/step.json"); }).find("cannot open '/nonexistent/dir/step.json'"),
              std::string::npos);
}

// Llama 3.1's scaled frequencies (rope_scaling of its config.json): wavelengths under 2048
// positions as trained, over 8192 divided by 8, a blend between; for head_dim 128 and theta 500000.
TEST(LlamaRope, Llama31ScalingKeepsHighFrequenciesAndStretchesLowOnes) {
    const LlamaConfig c = llama31_8b();
    const std::vector<double> inv = rope_inverse_frequencies(c);
    ASSERT_EQ(inv.size(), 64u);
    const double pi = std::acos(-1.0);
    for (size_t i = 0; i < inv.size(); i++) {
        const double f = std::pow(500000.0, -2.0 * double(i) / 128), wavelen = 2 * pi / f;
        if (wavelen < 2048) {
            EXPECT_DOUBLE_EQ(inv[i], f) << i;
        }
        if (wavelen > 8192) {
            EXPECT_DOUBLE_EQ(inv[i], f / 8) << i;
        }
        if (wavelen >= 2048 && wavelen <= 8192) {
            EXPECT_LT(inv[i], f) << i;
            EXPECT_GT(inv[i], f / 8) << i;
        }
    }
    EXPECT_DOUBLE_EQ(inv[0], 1.0);
    const RopeTables t = rope_tables(c, {0, 5});
    EXPECT_EQ(t.cos[0], 1.0f);
    EXPECT_FLOAT_EQ(t.cos[128 + 0], float(std::cos(5.0)));
    EXPECT_FLOAT_EQ(t.sin[128 + 64], float(std::sin(5.0)));  // each frequency twice (rotate half)
}

TEST(LlamaConfigs, VocabularyPartsFitOneCoresSpanAndSplitOverEveryCore) {
    const VocabSplit big = vocab_split(llama31_8b(), MachineDesc{});
    EXPECT_EQ(big.parts, 4);
    EXPECT_EQ(big.part_cols, 32768);  // 512 sticks: 16 on each of 32 cores
    EXPECT_EQ(int64_t(big.part_cols) * 4096 * 2, MachineDesc{}.max_span_bytes);
    const VocabSplit tiny = vocab_split(llama_tiny(), MachineDesc{});
    EXPECT_EQ(tiny.parts, 1);
    EXPECT_EQ(tiny.padded(), 1024);
    EXPECT_EQ(llama31_8b().layer_weight_bytes(), 436224000);  // 218.1M fp16 weights and two gains
}

}  // namespace
}  // namespace spyre::llama
