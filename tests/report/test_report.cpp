// spyre-report on a tiny configuration (every app x schedule, kernels through spyre-gen, checked
// against the CPU reference) writes a non-empty report.md, one SVG chart per app, a Chrome trace
// per kernel and spyre-gen's files; spyre-bench lists a benchmark for every app x schedule; the
// catalogue's tolerances are ULPs for the elementwise apps and bmm, absolute for mlp and attention.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "device/error.h"
#include "device/half.h"
#include "kernel_catalog.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

struct CommandResult {
    int exit_code = -1;
    std::string output;
};

CommandResult run(const std::string &command) {
    CommandResult r;
    FILE *p = popen((command + " 2>&1").c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
    int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string read(const fs::path &p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// Three apps (a row kernel checked in ULP, a matmul chain checked in abs error, attention) at tiny
// shapes: the report's files and tables for each; every app of the catalogue runs through the same
// code in the catalogue sweeps (Catalogue/*), so the whole report is not run again here.
TEST(Report, TinyConfigurationWritesEveryFile) {
    const fs::path out = fs::path(SPYRE_TEST_OUT_DIR) / "report_tiny";
    fs::remove_all(out);
    const std::vector<std::string> apps = {"softmax", "mlp", "attention"};
    CommandResult r = run(std::string("'") + SPYRE_REPORT + "' --out '" + out.string() + "' --spyre-gen '" +
                          SPYRE_GEN + "' --shape 64x128 --mlp-shape 64x256x64 --mlp-cores 2 " +
                          "--attention-shape 64x128 --max-trace-events 1000 --apps softmax mlp attention");
    ASSERT_EQ(r.exit_code, 0) << r.output;

    const std::string md = read(out / "report.md");
    ASSERT_FALSE(md.empty());
    for (const std::string &app : apps) {
        SCOPED_TRACE(app);
        EXPECT_NE(md.find("## " + app + " "), std::string::npos);
        EXPECT_NE(r.output.find(app + " "), std::string::npos);  // its console table
        const std::string svg = read(out / (app + ".svg"));
        EXPECT_EQ(svg.rfind("<svg", 0), 0u);
        EXPECT_NE(svg.find("</svg>"), std::string::npos);
        EXPECT_NE(md.find("](" + app + ".svg)"), std::string::npos);
        for (const std::string &sched : spyre::report::app_schedules(app)) {
            SCOPED_TRACE(sched);
            const std::string name = app + "_" + sched;
            EXPECT_GT(fs::file_size(out / "traces" / (name + ".json")), 0u);
            EXPECT_NE(md.find("| " + sched + " |"), std::string::npos);
            if (!spyre::report::app_generator(app).empty()) {
                for (const char *ext : {".spyre", ".s", ".h", ".json"})
                    EXPECT_GT(fs::file_size(out / "kernels" / (name + ext)), 0u) << ext;
            }
        }
    }
    EXPECT_EQ(md.find("FAILED"), std::string::npos) << md;
    // The error column is in the kind of each app's tolerance.
    EXPECT_NE(md.find("## mlp 64x256x64 (dim x hidden x rows), 2 cores, fp16"), std::string::npos) << md;
    EXPECT_NE(md.find("## attention 64x128 (dim x seq), fp16"), std::string::npos) << md;
    EXPECT_NE(md.find(" ULP |"), std::string::npos) << md;
    EXPECT_NE(md.find(" abs |"), std::string::npos) << md;
    // 64 x 128 fp16 softmax moves at most 16 KiB per transfer: its rows are outside the calibrated
    // short-tile range, named in the column and with the full message below the table.
    EXPECT_NE(md.find("| outside calibration |"), std::string::npos) << md;
    EXPECT_NE(md.find(" short_tiles |"), std::string::npos) << md;
    EXPECT_NE(md.find("- outside calibration, `short_tiles` (stage1"), std::string::npos) << md;
    EXPECT_NE(md.find("validated from 32 KiB per core per transfer"), std::string::npos) << md;
}

TEST(Report, CatalogListsEveryApp) {
    const std::vector<std::string> want = {"softmax", "layernorm", "rmsnorm",   "gelu",      "bmm",
                                           "linear",  "mlp",       "gated_mlp", "attention", "flash_attention",
                                           "causal_attention", "transpose", "qlinear", "stencil", "conv1d", "rope",
                                           "rope_interleaved"};
    // Collected from the apps' folders: these in this order (AppInfo::order), and whatever a new
    // folder adds around them.
    const std::vector<std::string> &got = spyre::report::app_names();
    size_t at = 0;
    for (const std::string &n : got) at += at < want.size() && n == want[at];
    EXPECT_EQ(at, want.size()) << "missing or out of order: " << (at < want.size() ? want[at] : "");
    EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size()) << "a name twice";
    EXPECT_EQ(spyre::report::app_schedules("mlp"),
              (std::vector<std::string>{"matched", "dram", "single_split", "tiled", "pe_ring", "auto"}));
    EXPECT_EQ(spyre::report::app_schedules("attention"), (std::vector<std::string>{"fused", "unfused", "auto"}));
    // Its state is a Tuple, which the autoscheduler's fold family searches (auto_fold.h).
    EXPECT_EQ(spyre::report::app_schedules("flash_attention"), (std::vector<std::string>{"kv_stream", "kv_resident", "auto"}));
    EXPECT_EQ(spyre::report::app_schedules("causal_attention"),
              (std::vector<std::string>{"kv_stream", "kv_resident", "kv_chunked", "auto"}));
    // causal_attention is the flash_attention generator with mask=causal.
    EXPECT_EQ(spyre::report::app_generator("causal_attention"), "flash_attention");
    EXPECT_EQ(spyre::report::parse_shape("flash_attention", "128x2048x32").dims, (std::vector<int>{128, 2048, 32}));
    EXPECT_THROW(spyre::report::parse_shape("flash_attention", "128x2048"), std::exception);
    EXPECT_EQ(spyre::report::parse_shape("mlp", "64x256x32").dims, (std::vector<int>{64, 256, 32}));
    EXPECT_EQ(spyre::report::parse_shape("attention", "64x128").dims, (std::vector<int>{64, 128}));
    EXPECT_THROW(spyre::report::parse_shape("mlp", "64x256"), std::exception);
    EXPECT_THROW(spyre::report::parse_shape("attention", "64x128x2"), std::exception);
    // Every app has a spyre-gen generator, given its shape as that generator's parameters; the
    // generator has the app's name but for causal_attention's (flash_attention with mask=causal).
    for (const std::string &app : want)
        EXPECT_EQ(spyre::report::app_generator(app), app == "causal_attention" ? "flash_attention" : app);
    spyre::report::Shape bmm = spyre::report::parse_shape("bmm", "2x8x64x128");
    bmm.cores = 4;
    EXPECT_EQ(spyre::report::generator_params("bmm", bmm),
              (std::vector<std::string>{"batch=2", "rows=8", "inner=64", "cols=128", "cores=4"}));
    spyre::report::Shape mlp = spyre::report::parse_shape("mlp", "64x256x32");
    mlp.cores = 1;
    EXPECT_EQ(spyre::report::generator_params("mlp", mlp),
              (std::vector<std::string>{"dim=64", "hidden=256", "rows=32", "cores=1"}));
    EXPECT_EQ(spyre::report::generator_params("attention", spyre::report::parse_shape("attention", "64x128")),
              (std::vector<std::string>{"dim=64", "seq=128"}));
    EXPECT_EQ(spyre::report::generator_params("softmax", spyre::report::parse_shape("softmax", "64x128")),
              (std::vector<std::string>{"cols=128", "rows=64"}));
    EXPECT_EQ(spyre::report::output_shape("mlp", spyre::report::parse_shape("mlp", "64x256x32")),
              (std::vector<int>{64, 32}));
    EXPECT_TRUE(spyre::report::app_takes_cores("mlp"));
    EXPECT_FALSE(spyre::report::app_takes_cores("attention"));
}

// Buffers of fp16 values for the tolerance checks.
Halide::Runtime::Buffer<> half_buffer(const std::vector<float> &v) {
    Halide::Runtime::Buffer<> b(halide_type_t(halide_type_float, 16), {int(v.size())});
    for (size_t i = 0; i < v.size(); i++) static_cast<uint16_t *>(b.data())[i] = spyre::float_to_half(v[i]);
    return b;
}

TEST(Report, CatalogTolerancesAreUlpOrAbsolute) {
    using spyre::report::check_error;
    using spyre::report::tolerance;
    EXPECT_EQ(tolerance("softmax").ulp, 2);
    EXPECT_FALSE(tolerance("softmax").absolute());
    EXPECT_FALSE(tolerance("bmm").absolute());
    EXPECT_EQ(tolerance("bmm").ulp, 0);
    EXPECT_TRUE(tolerance("mlp").absolute());
    EXPECT_DOUBLE_EQ(tolerance("mlp").abs, 1e-3);
    EXPECT_DOUBLE_EQ(tolerance("attention").abs, 1e-4);
    EXPECT_EQ(tolerance("softmax").text(), "2 ULP");
    EXPECT_EQ(tolerance("attention").text(), "1e-04 abs");

    // Near zero, 3e-5 is many fp16 ULPs but within attention's absolute bound; not within bmm's 0 ULP.
    const auto want = half_buffer({0.0f, 0.5f}), got = half_buffer({3e-5f, 0.5f});
    spyre::report::ErrorCheck a = check_error("attention", got, want);
    EXPECT_TRUE(a.ok) << a.text;
    EXPECT_GT(a.ulp, 100);
    EXPECT_NEAR(a.abs, 3e-5, 1e-6);
    EXPECT_NE(a.text.find("abs"), std::string::npos) << a.text;
    spyre::report::ErrorCheck b = check_error("bmm", got, want);
    EXPECT_FALSE(b.ok);
    EXPECT_NE(b.text.find("ULP"), std::string::npos) << b.text;
    // Beyond the bound, and a NaN where the CPU has a number.
    EXPECT_FALSE(check_error("attention", half_buffer({0.0f, 0.501f}), want).ok);
    spyre::report::ErrorCheck n = check_error("mlp", half_buffer({NAN, 0.5f}), want);
    EXPECT_FALSE(n.ok);
    EXPECT_EQ(n.text, "NaN");
    EXPECT_TRUE(check_error("mlp", want, want).ok);
}

// Each AppInfo entry is whole and agrees with itself: its shapes parse in its dims' order, its
// algorithm takes as many inputs as its buffer list has and writes an output of the listed rank, and
// its generator parameters name every dim's value. The sweeps trust these entries for their cases.
TEST(Report, EveryCatalogueEntryIsConsistent) {
    using namespace spyre::report;
    ASSERT_EQ(app_infos().size(), app_names().size());
    for (const AppInfo &a : app_infos()) {
        SCOPED_TRACE(a.name);
        EXPECT_FALSE(a.generator.empty());
        EXPECT_FALSE(a.schedules().empty());
        EXPECT_FALSE(a.report_shape_option.empty());
        EXPECT_GT(a.input_range, 0.0f);
        for (const std::string &text : {a.shapes.report, a.shapes.small}) EXPECT_NO_THROW(parse_shape(a.name, text)) << text;
        for (const std::string &text : a.shapes.odd) EXPECT_NO_THROW(parse_shape(a.name, text)) << text;
        for (const std::string &text : a.shapes.odd_large) EXPECT_NO_THROW(parse_shape(a.name, text)) << text;
        const Shape s = parse_shape(a.name, a.shapes.small);
        const AppKernel k = a.kernel(s);
        EXPECT_EQ(k.inputs.size(), a.inputs(s).size());
        for (size_t i = 0; i < k.inputs.size() && i < a.inputs(s).size(); i++)
            EXPECT_EQ(size_t(k.inputs[i].dimensions()), a.inputs(s)[i].size()) << "input " << i;
        EXPECT_EQ(size_t(k.out.dimensions()), a.output(s).size());
        for (size_t i : a.int8_inputs) EXPECT_LT(i, k.inputs.size());
        const std::vector<std::string> params = a.generator_params(s);
        for (int d : s.dims) {
            const bool named = std::any_of(params.begin(), params.end(), [&](const std::string &p) {
                return p.size() > std::to_string(d).size() && p.substr(p.find('=') + 1) == std::to_string(d);
            });
            EXPECT_TRUE(named) << "no generator parameter has the value " << d;
        }
    }
    EXPECT_THROW(app_info("nosuch"), spyre::Error);
    // The CPU reference given fewer inputs than the app takes names both counts.
    try {
        cpu_reference("layernorm", parse_shape("layernorm", "4x64"), random_inputs("softmax", parse_shape("softmax", "4x64")));
        ADD_FAILURE() << "no error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("layernorm: 1 inputs given for the CPU reference, it takes 3"), std::string::npos)
            << e.what();
    }
}

// The catalogue's entry and spyre-gen's GeneratorInfo describe the same generator: each app's
// generator is registered and offers every schedule the catalogue runs it with.
TEST(Report, EveryAppsGeneratorOffersItsSchedules) {
    CommandResult r = run(std::string("'") + SPYRE_GEN + "' -l");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const spyre::report::AppInfo &a : spyre::report::app_infos()) {
        const size_t at = r.output.find("\n" + a.generator + ": ");
        const size_t line = at == std::string::npos && r.output.rfind(a.generator + ": ", 0) == 0 ? 0 : at;
        ASSERT_NE(line, std::string::npos) << a.name << ": spyre-gen has no generator " << a.generator;
        const size_t s = r.output.find("schedules:", line), e = r.output.find('\n', s);
        std::stringstream listed(r.output.substr(s, e - s));
        std::set<std::string> names;
        for (std::string w; listed >> w;) names.insert(w.back() == ',' ? w.substr(0, w.size() - 1) : w);
        for (const std::string &sched : spyre::report::app_schedules(a.name))
            EXPECT_TRUE(names.count(sched)) << a.name << "/" << sched << " in: " << r.output.substr(s, e - s);
    }
}

TEST(Report, UnknownAppIsAnError) {
    CommandResult r = run(std::string("'") + SPYRE_REPORT + "' --out '" +
                          (fs::path(SPYRE_TEST_OUT_DIR) / "report_bad").string() + "' --apps nosuch --no-traces");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("unknown app 'nosuch'"), std::string::npos) << r.output;
}

// The validity counter and the notes' keys in the label: 0 and no keys inside the calibrated range;
// bmm's vector schedule does its MACs on the vector unit, whose rates no calibration point isolates.
TEST(Bench, CountsAndNamesTheModelValidityNotes) {
    CommandResult in = run(std::string("'") + SPYRE_BENCH +
                           "' --benchmark_filter='^softmax/cores32/4096x1024$' --benchmark_min_time=0.0001 "
                           "--benchmark_format=json");
    ASSERT_EQ(in.exit_code, 0) << in.output;
    EXPECT_NE(in.output.find("\"outside_calibration\": 0"), std::string::npos) << in.output;
    EXPECT_EQ(in.output.find("outside calibration:"), std::string::npos) << in.output;
    CommandResult out = run(std::string("'") + SPYRE_BENCH +
                            "' --benchmark_filter='^bmm/vector/4x64x256x512$' --benchmark_min_time=0.0001 "
                            "--benchmark_format=json");
    ASSERT_EQ(out.exit_code, 0) << out.output;
    EXPECT_NE(out.output.find("\"outside_calibration\": 1"), std::string::npos) << out.output;
    EXPECT_NE(out.output.find("outside calibration: vector_rates"), std::string::npos) << out.output;
}

// peer/<op>/<shape> rows: with SPYRE_PEER_KTIR_CPU naming a ktir-cpu checkout, each of IBM's kernels
// found there is imported and timed beside the catalogue app at the shape its buffers give. IBM's
// files are not in this repository, so a stand-in checkout holds one of our kernels (our 64 x 256
// softmax, given the scalar argument IBM's softmax takes) at the softmax's path; the layernorm and
// matmul files it lacks are skipped with a note. Without the variable there are no peer rows.
TEST(Bench, PeerRowsTimeIbmsKernelBesideOursAtItsShape) {
    const fs::path root = fs::path(SPYRE_TEST_OUT_DIR) / "peer_root";
    fs::remove_all(root);
    fs::create_directories(root / "examples" / "triton-ktir");
    std::ifstream in(std::string(KTIR_KERNELS) + "/softmax.ktir");
    std::stringstream text;
    text << in.rdbuf();
    std::string k = text.str();
    const std::string sig = "%y_ptr: index)";
    ASSERT_NE(k.find(sig), std::string::npos);
    k.replace(k.find(sig), sig.size(), "%y_ptr: index, %n_rows: index)");
    std::ofstream(root / "examples" / "triton-ktir" / "softmax_fwd_ktir.mlir") << k;
    CommandResult r = run("SPYRE_PEER_KTIR_CPU='" + root.string() + "' '" + SPYRE_BENCH +
                          "' --benchmark_filter='^peer/' --benchmark_format=json 2>&1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("\"name\": \"peer/softmax/64x256/iterations:1\""), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("\"ibm_us\""), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("\"ours_us\""), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("ours: softmax/"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("peer/layernorm: " + (root / "examples/triton-ktir/layernorm_fwd_ktir.mlir").string() +
                            " not found, skipped"),
              std::string::npos)
        << r.output;
    CommandResult none = run(std::string("'") + SPYRE_BENCH + "' --benchmark_list_tests");
    EXPECT_EQ(none.output.find("peer/"), std::string::npos) << none.output;
}

TEST(Bench, ListsEveryAppAndSchedule) {
    CommandResult r = run(std::string("'") + SPYRE_BENCH + "' --benchmark_list_tests");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const char *name :
         {"softmax/stage1/512x1024", "softmax/stage2/512x1024", "softmax/stage3/512x1024", "softmax/stage4/512x1024",
          "softmax/cores32/512x1024", "softmax/cores32/4096x1024", "layernorm/tiles/512x1024",
          "layernorm/cores32/512x1024", "rmsnorm/tiles/512x1024", "rmsnorm/cores32/512x1024", "gelu/root/512x1024",
          "gelu/tiles/512x1024", "gelu/cores32/512x1024", "bmm/pe/4x64x256x512", "bmm/vector/4x64x256x512",
          "linear/pe/512x4096x4096", "linear/vector/512x4096x11008", "bmm/pe/2x512x4096x12800",
          "bmm/pe/8x512x4096x25600", "bmm/vector/4x512x4096x12800",
          "bmm/pe_batch_outermost/8x512x4096x12800", "bmm/pe_batch_innermost/8x512x4096x12800",
          "mlp/matched/256x2048x512", "mlp/dram/256x2048x512", "mlp/single_split/256x2048x512", "mlp/pe_ring/4096x16384x512", "mlp/tiled/4096x16384x512", "gated_mlp/tiled/4096x11008x512",
          "gated_mlp/pe_ring/4096x11008x512", "attention/fused/128x512", "attention/unfused/128x512",
          "calibration/softmax_512x1024_compiled/stage/4", "llama/layer/decode/iterations:1",
          "llama/model/prefill/iterations:1", "llama/qkv_proj/decode_b8/iterations:1"})
        EXPECT_NE(r.output.find(std::string(name) + "\n"), std::string::npos) << name << "\n" << r.output;
    // Every app x schedule has at least one benchmark.
    for (const std::string &app : spyre::report::app_names())
        for (const std::string &sched : spyre::report::app_schedules(app))
            EXPECT_NE(r.output.find(app + "/" + sched + "/"), std::string::npos) << app << "/" << sched;
}

}  // namespace
