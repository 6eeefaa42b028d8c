// spyre-gen with the generators that declare their own integer GeneratorParams (bmm, linear, mlp,
// attention, qlinear): listed with their parameters, generated at a small shape (the .spyre reads back with
// the cores and buffers the parameters give), and a bad parameter of each rejected by name.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../channel_floor.h"
#include "device/program_io.h"
#include "test_paths.h"
#include "tool_test_util.h"

namespace fs = std::filesystem;
using namespace spyre::tools_testing;

namespace {



TEST(SpyreGenApps, ListsGeneratorsWithTheirParams) {
    CommandResult r = run_command(quote(kGen) + " -l");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const char *want :
         {"bmm: ", "linear: ", "mlp: ", "attention: ", "schedules: pe, pe_ring, vector, auto (and cpu",
          "schedules: matched, dram, single_split, tiled, pe_ring, auto (and cpu", "schedules: fused, unfused, auto (and cpu",
          "params:    batch=4, cols=512, cores=32, inner=256, machine=\"\", rows=64, schedule=cpu",
          "params:    cols=256, cores=4, inner=192, machine=\"\", rows=64, schedule=cpu",
          "params:    cores=32, dim=256, hidden=2048, machine=\"\", rows=256, schedule=cpu",
          "params:    dim=128, machine=\"\", schedule=cpu, seq=512",
          // The cols x rows generators keep their parameters.
          "params:    cols=1024, machine=\"\", rows=512, schedule=cpu"})
        EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
}

struct AppCase {
    std::string generator, schedule, params;
    int cores;
    std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;
    std::vector<int64_t> output;
};

void PrintTo(const AppCase &c, std::ostream *os) { *os << c.generator << " " << c.schedule << " " << c.params; }

class GenerateApp : public ::testing::TestWithParam<AppCase> {};

TEST_P(GenerateApp, ProgramHasTheCoresAndBuffersOfItsParams) {
    const AppCase &c = GetParam();
    fs::path dir = scratch_dir("tools_apps_test", c.generator + "_" + c.schedule);
    CommandResult r = run_command(quote(kGen) + " -g " + c.generator + " -o " + quote(dir.string()) +
                                  " schedule=" + c.schedule + " " + c.params);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(c.generator + " schedule=" + c.schedule + " "), std::string::npos) << r.output;
    for (const char *ext : {".spyre", ".h", ".s", ".json"})
        EXPECT_TRUE(fs::exists(dir / (c.generator + ext))) << c.generator << ext;

    spyre::DeviceProgram p = spyre::read_program_file((dir / (c.generator + ".spyre")).string());
    EXPECT_EQ(p.kernel_name, c.generator);
    EXPECT_EQ(p.num_cores, c.cores);
    std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;
    int outputs = 0;
    int64_t input_bytes = 0;  // as the case's shapes and these types say
    for (const spyre::BufferDecl &b : p.buffers) {
        if (b.kind == spyre::BufferKind::Input) {
            // qlinear's weights are int8; every other input is fp16.
            const bool int8 = c.generator == "qlinear" && b.name == "w";
            EXPECT_EQ(b.type, int8 ? spyre::DType::I8 : spyre::DType::F16) << b.name;
            inputs.emplace_back(b.name, b.shape);
            int64_t n = int8 ? 1 : 2;
            for (int64_t e : b.shape) n *= e;
            input_bytes += n;
        }
        if (b.kind == spyre::BufferKind::Output) {
            outputs++;
            EXPECT_EQ(b.type, spyre::DType::F16) << b.name;
            EXPECT_EQ(b.shape, c.output) << b.name;
        }
    }
    EXPECT_EQ(outputs, 1);
    EXPECT_EQ(inputs, c.inputs);

    std::ifstream jf(dir / (c.generator + ".json"));
    nlohmann::json j = nlohmann::json::parse(jf);
    EXPECT_EQ(j["generator"], c.generator);
    EXPECT_EQ(j["schedule"], c.schedule);
    EXPECT_EQ(j["cores"], c.cores);
    EXPECT_EQ(j["lx_peak_bytes_per_core"].size(), size_t(c.cores));
    // At least the channel's time for reading the inputs and writing the fp16 output once.
    int64_t output_bytes = 2;
    for (int64_t e : c.output) output_bytes *= e;
    EXPECT_GE(j["modelled_us"].get<double>(), spyre::testing_floor::channel_floor_us(input_bytes, output_bytes));

    std::ifstream hf(dir / (c.generator + ".h"));
    std::string header((std::istreambuf_iterator<char>(hf)), std::istreambuf_iterator<char>());
    EXPECT_NE(header.find("inline int " + c.generator + "("), std::string::npos) << header;
}

INSTANTIATE_TEST_SUITE_P(
    Generators, GenerateApp,
    ::testing::Values(AppCase{"bmm", "pe", "batch=2 rows=64 inner=128 cols=256 cores=8", 8,
                              {{"a", {128, 64, 2}}, {"w", {256, 128}}}, {256, 64, 2}},
                      AppCase{"bmm", "vector", "batch=2 rows=16 inner=64 cols=128 cores=2", 2,
                              {{"a", {64, 16, 2}}, {"w", {128, 64}}}, {128, 16, 2}},
                      AppCase{"linear", "pe", "rows=64 inner=128 cols=128 cores=2", 2,
                              {{"x", {128, 64, 1}}, {"w", {128, 128}}, {"bias", {128}}}, {128, 64, 1}},
                      AppCase{"mlp", "matched", "dim=64 hidden=256 rows=64 cores=1", 1,
                              {{"x", {64, 64}}, {"w1", {256, 64}}, {"b1", {256}}, {"w2", {64, 256}}, {"b2", {64}}},
                              {64, 64}},
                      AppCase{"attention", "fused", "dim=64 seq=128", 1,
                              {{"q", {64, 128}}, {"k", {64, 128}}, {"v", {64, 128}}}, {64, 128}},
                      AppCase{"flash_attention", "kv_resident", "dim=64 seq=256 heads=3 cores=2", 2,
                              {{"q", {64, 256, 3}}, {"k", {64, 256, 3}}, {"v", {64, 256, 3}}}, {64, 256, 3}},
                      AppCase{"flash_attention", "kv_stream", "dim=64 seq=192 heads=2 cores=2 mask=causal", 2,
                              {{"q", {64, 192, 2}}, {"k", {64, 192, 2}}, {"v", {64, 192, 2}}}, {64, 192, 2}},
                      AppCase{"transpose", "cores32", "cols=256 rows=128", 4, {{"in", {256, 128}}}, {128, 256}},
                      AppCase{"qlinear", "pe", "rows=64 inner=256 cols=512 cores=8", 8,
                              {{"a", {256, 64}}, {"w", {512, 256}}, {"scale", {512}}}, {512, 64}},
                      AppCase{"stencil", "cores32", "cols=200 rows=64", 32, {{"in", {200, 64}}}, {200, 64}},
                      AppCase{"conv1d", "tiles", "cols=300 rows=20 taps=5 padding=centred", 1,
                              {{"in", {300, 20}}, {"w", {20, 5}}}, {300, 20}},
                      AppCase{"rope", "cores32", "cols=256 rows=64 head_dim=128", 32,
                              {{"in", {256, 64}}, {"cos", {128, 64}}, {"sin", {128, 64}}}, {256, 64}},
                      AppCase{"rope_interleaved", "tiles", "cols=192 rows=33 head_dim=64", 1,
                              {{"in", {192, 33}}, {"cos", {64, 33}}, {"sin", {64, 33}}}, {192, 33}}),
    [](const auto &info) { return info.param.generator + "_" + info.param.schedule; });

TEST(SpyreGenAppsErrors, TransposeRowsNotWholeSticks) {
    CommandResult r = run_command(quote(kGen) + " -g transpose -o /tmp/spyre_gen_transpose_reject schedule=tiles "
                                  "cols=256 rows=100");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("transpose: the input's 100 rows are not whole sticks of 64"), std::string::npos)
        << r.output;
}

TEST(SpyreGenAppsErrors, FlashAttentionUnknownMaskNamesTheKnownOnes) {
    CommandResult r = run_command(quote(kGen) + " -g flash_attention -o /tmp/spyre_gen_flash_reject schedule=kv_stream "
                                  "dim=64 seq=128 heads=1 cores=1 mask=triangle");
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("flash_attention: mask='triangle' (known: none, causal)"), std::string::npos) << r.output;
}

TEST(SpyreGenAppsErrors, Conv1dUnknownPaddingNamesTheKnownOnes) {
    CommandResult r = run_command(quote(kGen) + " -g conv1d -o /tmp/spyre_gen_conv1d_reject schedule=tiles "
                                  "cols=256 rows=8 padding=both");
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("conv1d: padding='both' (known: causal, centred)"), std::string::npos) << r.output;
}

TEST(SpyreGenAppsErrors, Conv1dTapsOutOfRange) {
    CommandResult r = run_command(quote(kGen) + " -g conv1d -o /tmp/spyre_gen_conv1d_reject schedule=tiles "
                                  "cols=256 rows=8 taps=17");
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("taps"), std::string::npos) << r.output;
}

TEST(SpyreGenAppsErrors, BmmBadShapeValue) {
    CommandResult r = run_command(quote(kGen) + " -g bmm -o /tmp schedule=pe batch=0");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("parameter batch=0: expected an integer in [1, 1048576]"), std::string::npos) << r.output;
}

TEST(SpyreGenAppsErrors, LinearHasNoBatch) {
    CommandResult r = run_command(quote(kGen) + " -g linear -o /tmp schedule=pe batch=2");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("generator linear has no parameter 'batch' (known: cols, cores, inner, machine, rows, "
                            "schedule)"),
              std::string::npos)
        << r.output;
}

TEST(SpyreGenAppsErrors, MlpNonIntegerHidden) {
    CommandResult r = run_command(quote(kGen) + " -g mlp -o /tmp schedule=matched hidden=2k");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("parameter hidden=2k: expected an integer"), std::string::npos) << r.output;
}

TEST(SpyreGenAppsErrors, AttentionTakesNoCores) {
    CommandResult r = run_command(quote(kGen) + " -g attention -o /tmp schedule=fused cores=4");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("generator attention has no parameter 'cores' (known: dim, machine, schedule, seq)"),
              std::string::npos)
        << r.output;
}

TEST(SpyreGenAppsErrors, BmmSplitTheScheduleRejects) {
    // The schedule's own error (pe_ring asked of one core) is passed through, exit 1.
    CommandResult r = run_command(quote(kGen) + " -g bmm -o /tmp/spyre_gen_bmm_reject schedule=pe_ring batch=2 rows=16 "
                                  "inner=64 cols=128 cores=1");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("bmm: schedule pe_ring shares A or W tiles between cores, but with 1 core(s)"),
              std::string::npos)
        << r.output;
}

}  // namespace
