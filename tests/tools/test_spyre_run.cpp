// spyre-run on a kernel built by add_spyre_kernel: text and JSON stats, a trace, inputs from files,
// and its errors (corrupt program, wrong input size, unknown input); the check against Halide's CPU
// reference on kernels spyre-gen writes (ok, FAILED against the wrong generator, skipped, none).
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../channel_floor.h"
#include "test_paths.h"
#include "tool_test_util.h"

namespace fs = std::filesystem;
using namespace spyre::tools_testing;

namespace {

const std::string kRun = SPYRE_RUN;
const std::string kSoftmax = SOFTMAX_STAGE4_SPYRE;  // 256 x 64 (tests/CMakeLists.txt)

fs::path scratch(const std::string &name) {
    fs::path d = fs::temp_directory_path() / ("spyre_run_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d / name;
}

// Runs spyre-gen into the scratch directory; returns NAME.spyre's path.
fs::path generate(const std::string &name, const std::string &args) {
    fs::path dir = scratch("gen");
    CommandResult r = run_command(quote(kGen) + " -o " + quote(dir.string()) + " -n " + name + " " + args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return dir / (name + ".spyre");
}

TEST(SpyreRun, PrintsModelledTimeAndStats) {
    CommandResult r = run_command(quote(kRun) + " " + quote(kSoftmax));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("kernel softmax_stage4"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("modelled time"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("(random)"), std::string::npos) << r.output;
}

TEST(SpyreRun, JsonParsesAndTraceIsWritten) {
    fs::path trace = scratch("trace.json");
    CommandResult r = run_command(quote(kRun) + " " + quote(kSoftmax) + " --json --trace " + quote(trace.string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    nlohmann::json j = nlohmann::json::parse(r.output);
    EXPECT_EQ(j["kernel"], "softmax_stage4");
    EXPECT_EQ(j["mode"], "functional");
    // The 256 x 64 fp16 input read and output written at least once, in at least the channel's time.
    EXPECT_GE(j["stats"]["dram_read_bytes"].get<int64_t>(), 256 * 64 * 2);
    EXPECT_GE(j["stats"]["dram_write_bytes"].get<int64_t>(), 256 * 64 * 2);
    EXPECT_GE(j["stats"]["us"].get<double>(), spyre::testing_floor::channel_floor_us(256 * 64 * 2, 256 * 64 * 2));
    // The static work of a generated kernel (constant loop counts) is what the run did.
    ASSERT_TRUE(j.contains("static_work")) << r.output;
    EXPECT_TRUE(j["static_work"]["counts_known"].get<bool>());
    EXPECT_EQ(j["static_work"]["dma_bytes"].get<int64_t>(),
              j["stats"]["dram_read_bytes"].get<int64_t>() + j["stats"]["dram_write_bytes"].get<int64_t>());
    EXPECT_EQ(j["static_work"]["vector_bytes"].get<int64_t>(), j["stats"]["vector_sticks"].get<int64_t>() * 128);
    std::ifstream tf(trace);
    ASSERT_TRUE(tf.good());
    EXPECT_NO_THROW(nlohmann::json::parse(tf));
}

// A kernel inside the calibrated range says so; one streaming 16 KiB tiles (64 rows of 128 fp16
// columns, one core) gets the short_tiles note, in the text and in the JSON.
TEST(SpyreRun, PrintsTheModelValidityNotes) {
    CommandResult in = run_command(quote(kRun) + " " + quote(kSoftmax) + " --timing-only");
    ASSERT_EQ(in.exit_code, 0) << in.output;
    EXPECT_NE(in.output.find("model validity  within the calibrated range"), std::string::npos) << in.output;
    nlohmann::json jin = nlohmann::json::parse(run_command(quote(kRun) + " " + quote(kSoftmax) + " --json").output);
    ASSERT_TRUE(jin.contains("model_validity"));
    EXPECT_TRUE(jin["model_validity"].empty());

    fs::path k = generate("validity_short_tiles", "-g softmax schedule=stage4 cols=128 rows=64");
    CommandResult out = run_command(quote(kRun) + " " + quote(k.string()) + " --timing-only");
    ASSERT_EQ(out.exit_code, 0) << out.output;
    EXPECT_NE(out.output.find("model validity  short_tiles: 16 KiB per core per transfer"), std::string::npos)
        << out.output;
    EXPECT_EQ(out.output.find("within the calibrated range"), std::string::npos) << out.output;
    nlohmann::json j = nlohmann::json::parse(run_command(quote(kRun) + " " + quote(k.string()) + " --json").output);
    ASSERT_EQ(j["model_validity"].size(), 1u) << j.dump(2);
    EXPECT_EQ(j["model_validity"][0]["key"], "short_tiles");
    EXPECT_NE(j["model_validity"][0]["message"].get<std::string>().find("validated from 32 KiB"), std::string::npos);
}

TEST(SpyreRun, TimingOnlyMatchesFunctionalTime) {
    CommandResult a = run_command(quote(kRun) + " " + quote(kSoftmax) + " --json");
    CommandResult b = run_command(quote(kRun) + " " + quote(kSoftmax) + " --json --timing-only");
    ASSERT_EQ(a.exit_code, 0) << a.output;
    ASSERT_EQ(b.exit_code, 0) << b.output;
    nlohmann::json ja = nlohmann::json::parse(a.output), jb = nlohmann::json::parse(b.output);
    EXPECT_EQ(jb["mode"], "timing_only");
    EXPECT_NEAR(ja["stats"]["us"].get<double>(), jb["stats"]["us"].get<double>(), 1e-6 + 1e-3 * ja["stats"]["us"].get<double>());
}

TEST(SpyreRun, InputFromFileAndOutputToFile) {
    fs::path in = scratch("in.bin"), out = scratch("out.bin");
    {
        std::ofstream f(in, std::ios::binary);
        std::vector<uint16_t> zeros(256 * 64, 0);  // softmax of a zero row: 1/256 everywhere
        f.write(reinterpret_cast<const char *>(zeros.data()), zeros.size() * 2);
    }
    CommandResult r = run_command(quote(kRun) + " " + quote(kSoftmax) + " --input in=" + quote(in.string()) +
                                  " --output " + quote(out.string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::ifstream f(out, std::ios::binary);
    std::vector<uint16_t> y(256 * 64);
    f.read(reinterpret_cast<char *>(y.data()), y.size() * 2);
    ASSERT_EQ(f.gcount(), std::streamsize(y.size() * 2));
    for (uint16_t v : y) ASSERT_EQ(v, 0x1C00) << "1/256 in fp16";
}

TEST(SpyreRun, Disassembles) {
    CommandResult r = run_command(quote(kRun) + " " + quote(kSoftmax) + " --dis");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("softmax_stage4"), std::string::npos) << r.output.substr(0, 400);
}

TEST(SpyreRunReference, AddSpyreKernelOutputMatchesCpu) {
    // add_spyre_kernel runs spyre-gen, so softmax_stage4.json names the generator and its params.
    CommandResult r = run_command(quote(kRun) + " " + quote(kSoftmax));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("(tolerance 2 ULP): ok"), std::string::npos) << r.output;
}

TEST(SpyreRunReference, SpyreGenKernelsMatchCpu) {
    struct Case {
        std::string name, args, tolerance;
    };
    for (const Case &c : {Case{"ref_softmax", "-g softmax schedule=stage4 cols=128 rows=64", "2 ULP"},
                          Case{"ref_layernorm", "-g layernorm schedule=tiles cols=128 rows=64", "0 ULP"},
                          Case{"ref_mlp", "-g mlp schedule=matched dim=64 hidden=256 rows=64 cores=1", "1e-03 abs"},
                          // int8 weights: spyre-run's random inputs take every code
                          Case{"ref_qlinear", "-g qlinear schedule=pe rows=16 inner=256 cols=256 cores=2", "0 ULP"},
                          // inputs in [-1, 1], the range flash attention's tolerance is stated for
                          Case{"ref_causal", "-g flash_attention schedule=kv_resident dim=128 seq=512 heads=2 "
                                             "cores=2 mask=causal", "3e-04 abs"}}) {
        fs::path k = generate(c.name, c.args);
        CommandResult r = run_command(quote(kRun) + " " + quote(k.string()));
        ASSERT_EQ(r.exit_code, 0) << c.name << ": " << r.output;
        EXPECT_NE(r.output.find("reference: max error "), std::string::npos) << c.name << ": " << r.output;
        EXPECT_NE(r.output.find("(tolerance " + c.tolerance + "): ok"), std::string::npos) << c.name << ": " << r.output;
        if (c.name != "ref_qlinear") continue;  // the JSON report once: it states what the text does

        r = run_command("(" + quote(kRun) + " " + quote(k.string()) + " --json 2>/dev/null)");
        ASSERT_EQ(r.exit_code, 0) << r.output;
        nlohmann::json j = nlohmann::json::parse(r.output);
        EXPECT_EQ(j["reference"]["status"], "ok") << c.name;
        EXPECT_EQ(j["reference"]["tolerance"], c.tolerance) << c.name;
    }
}

TEST(SpyreRunReference, InputsFromFilesAreTheReferenceInputs) {
    // Zero rows: softmax is exactly 1/128 on both sides.
    fs::path k = generate("ref_softmax_zero", "-g softmax schedule=stage4 cols=128 rows=64");
    fs::path in = scratch("zeros128.bin");
    {
        std::ofstream f(in, std::ios::binary);
        std::vector<uint16_t> zeros(128 * 64, 0);
        f.write(reinterpret_cast<const char *>(zeros.data()), zeros.size() * 2);
    }
    CommandResult r = run_command(quote(kRun) + " " + quote(k.string()) + " --input in=" + quote(in.string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("reference: max error 0 ULP (tolerance 2 ULP): ok"), std::string::npos) << r.output;
}

TEST(SpyreRunReference, AReportNamingAGeneratorOfOtherOutputsIsAnError) {
    // An rmsnorm kernel whose report names fused_add_rmsnorm (its inputs among the other's, but
    // two outputs where the kernel writes one).
    fs::path k = generate("ref_outputs", "-g rmsnorm schedule=tiles cols=128 rows=8");
    fs::path json = fs::path(k).replace_extension(".json");
    nlohmann::json rep;
    {
        std::ifstream f(json);
        rep = nlohmann::json::parse(f);
    }
    rep["generator"] = "fused_add_rmsnorm";
    std::ofstream(json) << rep.dump(2);
    CommandResult r = run_command(quote(kRun) + " " + quote(k.string()));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("reference: generator fused_add_rmsnorm has 2 outputs, the kernel writes 1"), std::string::npos)
        << r.output;
}

TEST(SpyreRunReference, WrongGeneratorInReportFails) {
    // A softmax kernel whose report names gelu (same buffers): the CPU reference is gelu's, so the
    // check fails and spyre-run exits 1.
    fs::path k = generate("ref_wrong", "-g softmax schedule=stage4 cols=128 rows=64");
    fs::path json = fs::path(k).replace_extension(".json");
    nlohmann::json rep;
    {
        std::ifstream f(json);
        rep = nlohmann::json::parse(f);
    }
    rep["generator"] = "gelu";
    rep["params"]["schedule"] = "tiles";
    rep["params"].erase("dim");  // softmax's own parameters
    rep["params"].erase("cores");
    std::ofstream(json) << rep.dump(2);
    CommandResult r = run_command(quote(kRun) + " " + quote(k.string()));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("(tolerance 0 ULP): FAILED"), std::string::npos) << r.output;

    r = run_command("(" + quote(kRun) + " " + quote(k.string()) + " --json 2>/dev/null)");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_EQ(nlohmann::json::parse(r.output)["reference"]["status"], "failed");

    r = run_command(quote(kRun) + " " + quote(k.string()) + " --no-reference");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("reference: skipped (--no-reference)"), std::string::npos) << r.output;
}

TEST(SpyreRunReference, NoReportMeansNoReference) {
    fs::path bare = scratch("bare.spyre");
    fs::copy_file(kSoftmax, bare, fs::copy_options::overwrite_existing);
    CommandResult r = run_command(quote(kRun) + " " + quote(bare.string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("reference: none (no spyre-gen report next to the kernel)"), std::string::npos) << r.output;

    // A .json next to it that is not a spyre-gen report (no generator) is no report either.
    std::ofstream(scratch("bare.json")) << R"({"kernel": "softmax_stage4"})";
    r = run_command(quote(kRun) + " " + quote(bare.string()) + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(nlohmann::json::parse(r.output)["reference"]["status"], "none");

    r = run_command(quote(kRun) + " " + quote(kSoftmax) + " --timing-only");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("reference: none (timing-only run)"), std::string::npos) << r.output;
}

TEST(SpyreRunErrors, WrongInputSize) {
    fs::path in = scratch("short.bin");
    std::ofstream(in, std::ios::binary) << "abcd";
    CommandResult r = run_command(quote(kRun) + " " + quote(kSoftmax) + " --input in=" + quote(in.string()));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("input 'in': '" + in.string() + "' has 4 bytes, the kernel expects 32768 (f16 {256, 64})"),
              std::string::npos)
        << r.output;
}

TEST(SpyreRunErrors, UnknownInputName) {
    CommandResult r = run_command(quote(kRun) + " " + quote(kSoftmax) + " --input x=/dev/null");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("kernel softmax_stage4 has no input 'x' (inputs: in)"), std::string::npos) << r.output;
}

TEST(SpyreRunErrors, CorruptProgram) {
    std::ifstream f(kSoftmax, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    fs::path bad = scratch("truncated.spyre");
    std::ofstream(bad, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    CommandResult r = run_command(quote(kRun) + " " + quote(bad.string()));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("spyre-run: error:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("offset"), std::string::npos) << r.output;

    fs::path garbage = scratch("garbage.spyre");
    std::ofstream(garbage, std::ios::binary) << "not a spyre program";
    r = run_command(quote(kRun) + " " + quote(garbage.string()));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("spyre-run: error:"), std::string::npos) << r.output;
}

TEST(SpyreRunErrors, MissingFileAndHelp) {
    CommandResult r = run_command(quote(kRun) + " /nonexistent/k.spyre");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("/nonexistent/k.spyre"), std::string::npos) << r.output;
    r = run_command(quote(kRun) + " --help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.output.find("--timing-only"), std::string::npos) << r.output;
}

}  // namespace
