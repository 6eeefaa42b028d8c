// spyre-gen: the generator list, generating every generator (the .spyre reads back, the report
// parses), and each error path's message and exit code.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "device/layout.h"
#include "../channel_floor.h"
#include "device/program_io.h"
#include "test_paths.h"
#include "tool_test_util.h"

namespace fs = std::filesystem;
using namespace spyre::tools_testing;

namespace {

std::string bytes(const fs::path &p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

TEST(SpyreGen, ListsGeneratorsAndSchedules) {
    CommandResult r = run_command(quote(kGen) + " -l");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const char *g : {"softmax:", "layernorm:", "rmsnorm:", "gelu:"}) EXPECT_NE(r.output.find(g), std::string::npos) << g;
    EXPECT_NE(r.output.find("stage1, stage2, stage3, stage4, cores32"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("schedules: tiles, cores32"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("schedules: root, tiles, cores32"), std::string::npos) << r.output;
}

// schedule=auto: the autoscheduler's choice is compiled, and its directives are written as C++
// beside the kernel (NAME.schedule.cpp).
TEST(SpyreGen, ScheduleAutoWritesTheChosenDirectivesAsCpp) {
    fs::path dir = scratch_dir("tools_test", "auto");
    CommandResult r = run_command(quote(kGen) + " -g layernorm -o " + quote(dir.string()) +
                                  " -n ln schedule=auto cols=256 rows=64");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("ln.{spyre,h,s,json,schedule.cpp}"), std::string::npos) << r.output;
    std::ifstream f(dir / "ln.schedule.cpp");
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_EQ(text.str().rfind("// Spyre schedule of layernorm chosen by spyre::auto_schedule (seed 1): ", 0), 0u)
        << text.str();
    EXPECT_NE(text.str().find("spyre::schedule(layernorm, m)."), std::string::npos) << text.str();
    EXPECT_TRUE(fs::exists(dir / "ln.spyre"));
}

// softmax's `cores`: a named schedule splits its columns over that many cores, and schedule=auto
// uses at most that many (the dim-0 softmax IBM measured on 1 and 4 cores).
TEST(SpyreGen, SoftmaxCoresParamSplitsANamedScheduleAndBoundsAuto) {
    fs::path dir = scratch_dir("tools_test", "softmax_cores");
    CommandResult named = run_command(quote(kGen) + " -g softmax -o " + quote(dir.string()) +
                                      " -n s4 schedule=stage4 dim=0 cores=4 cols=512 rows=64");
    ASSERT_EQ(named.exit_code, 0) << named.output;
    EXPECT_NE(named.output.find(", 4 core(s),"), std::string::npos) << named.output;
    CommandResult searched = run_command(quote(kGen) + " -g softmax -o " + quote(dir.string()) +
                                         " -n a1 schedule=auto dim=0 cores=1 cols=512 rows=64");
    ASSERT_EQ(searched.exit_code, 0) << searched.output;
    EXPECT_NE(searched.output.find(", 1 core(s),"), std::string::npos) << searched.output;
}

// --free-layouts: the search may choose the named arguments' layouts; the program and the report
// record the ones compiled, and spyre-run checks the kernel against the CPU in them.
TEST(SpyreGen, FreeLayoutsAreRecordedAndTheKernelMatchesTheCpu) {
    fs::path dir = scratch_dir("tools_test", "free_layouts");
    CommandResult r = run_command(quote(kGen) + " -g bmm -o " + quote(dir.string()) +
                                  " --free-layouts a,bmm batch=4 rows=64 inner=256 cols=512 schedule=auto");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    spyre::DeviceProgram p = spyre::read_program_file((dir / "bmm.spyre").string());
    std::ifstream f(dir / "bmm.json");
    nlohmann::json j = nlohmann::json::parse(f);
    ASSERT_EQ(j["buffers"].size(), p.buffers.size());
    for (size_t i = 0; i < p.buffers.size(); i++)
        EXPECT_EQ(j["buffers"][i]["layout"], spyre::layout_to_string(p.buffers[i].layout)) << p.buffers[i].name;
    CommandResult run = run_command(quote(std::string(SPYRE_RUN)) + " " + quote((dir / "bmm.spyre").string()));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("): ok"), std::string::npos) << run.output;
}

// --layout: the arguments in the layouts given (torch-spyre's default, and the batch outermost) with
// a named schedule; the program, its KTIR and the report carry them, and the kernel run from the
// .spyre and from the .ktir matches the CPU and writes the same bytes.
TEST(SpyreGen, LayoutsGivenByNameAreCompiledRecordedAndExportedAndTheKernelMatchesTheCpu) {
    fs::path dir = scratch_dir("tools_test", "layouts");
    CommandResult r = run_command(quote(kGen) + " -g bmm -o " + quote(dir.string()) +
                                  " -e ktir --layout a=torch_spyre --layout w=torch_spyre --layout bmm=d2,s,d1"
                                  " batch=2 rows=40 inner=130 cols=100 schedule=pe");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    spyre::DeviceProgram p = spyre::read_program_file((dir / "bmm.spyre").string());
    ASSERT_EQ(p.buffers.size(), 3u);
    EXPECT_EQ(p.buffers[0].layout, (spyre::DeviceLayout{0, {1, 0, 2}}));  // torch-spyre's [B, M, K]: [M, K/64, B, 64]
    EXPECT_EQ(p.buffers[1].layout, (spyre::DeviceLayout{0, {0, 1}}));
    EXPECT_EQ(p.buffers[2].layout, (spyre::DeviceLayout{0, {2, 0, 1}}));
    std::ifstream f(dir / "bmm.json");
    nlohmann::json j = nlohmann::json::parse(f);
    EXPECT_EQ(j["buffers"][2]["layout"], "sticks(d0) order[d2,d0,d1]");
    for (const char *file : {"bmm.spyre", "bmm.ktir"}) {
        CommandResult run = run_command(quote(std::string(SPYRE_RUN)) + " " + quote((dir / file).string()) + " -o " +
                                        quote((dir / (std::string(file) + ".out")).string()));
        ASSERT_EQ(run.exit_code, 0) << file << ": " << run.output;
        EXPECT_NE(run.output.find("(tolerance 0 ULP): ok"), std::string::npos) << file << ": " << run.output;
    }
    EXPECT_EQ(bytes(dir / "bmm.spyre.out"), bytes(dir / "bmm.ktir.out"));
}

TEST(SpyreGen, LayoutsNamingNoArgumentOrMalformedAreErrors) {
    fs::path dir = scratch_dir("tools_test", "layout_errors");
    auto gen = [&](const std::string &layout) {
        return run_command(quote(kGen) + " -g bmm -o " + quote(dir.string()) + " --layout " + layout + " schedule=pe");
    };
    CommandResult r = gen("nope=torch_spyre");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--layout names 'nope', which is not an argument of bmm (its arguments: a, w, bmm)"),
              std::string::npos) << r.output;
    r = gen("a=d1,s");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--layout a: layout 'd1,s' names 2 dims; the tensor has 3 (its stick count s and its other dims)"),
              std::string::npos) << r.output;
    r = gen("a=d1,d0,d2");
    EXPECT_NE(r.output.find("--layout a: layout 'd1,d0,d2': d0 is the stick dim, held in sticks; write its stick count 's'"),
              std::string::npos) << r.output;
    r = gen("a=d1,s,d1");
    EXPECT_NE(r.output.find("--layout a: layout 'd1,s,d1': layout order {1,0,1} is not a permutation of the 3 dims"),
              std::string::npos) << r.output;
    r = gen("a=x,s,d1");
    EXPECT_NE(r.output.find("'x' is not a dim (d1, d2, ...) or the stick count (s); or give row_major or torch_spyre"),
              std::string::npos) << r.output;
    r = gen("a");
    EXPECT_NE(r.output.find("--layout a: give NAME=LAYOUT"), std::string::npos) << r.output;
    r = gen("a=row_major --layout a=torch_spyre");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--layout: argument 'a' given twice"), std::string::npos) << r.output;
}

TEST(SpyreGen, FreeLayoutsNamingNoArgumentNoneOrWithANamedScheduleAreErrors) {
    fs::path dir = scratch_dir("tools_test", "free_layouts_errors");
    CommandResult r = run_command(quote(kGen) + " -g bmm -o " + quote(dir.string()) + " --free-layouts nope schedule=auto");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("free_layouts names 'nope', which is not an argument of the pipeline (its arguments: a, w, bmm)"),
              std::string::npos) << r.output;
    r = run_command(quote(kGen) + " -g bmm -o " + quote(dir.string()) + " --free-layouts , schedule=auto");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--free-layouts: no argument named"), std::string::npos) << r.output;
    r = run_command(quote(kGen) + " -g bmm -o " + quote(dir.string()) + " --free-layouts a schedule=pe");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--free-layouts lets schedule=auto choose layouts; schedule=pe is a named schedule"),
              std::string::npos) << r.output;
}

// --tuning-db: the first schedule=auto searches and stores its result; the second, in another
// process, applies it from the file and writes the same program.
TEST(SpyreGen, TuningDbSearchesOnceThenAppliesTheStoredSchedule) {
    fs::path dir = scratch_dir("tools_test", "tuning_db");
    const std::string db = (dir / "tune.db").string();
    auto gen = [&](const std::string &out) {
        return run_command(quote(kGen) + " -g softmax -o " + quote((dir / out).string()) + " --tuning-db=" + quote(db) +
                           " schedule=auto cols=256 rows=64");
    };
    CommandResult first = gen("first");
    ASSERT_EQ(first.exit_code, 0) << first.output;
    EXPECT_NE(first.output.find("schedule=auto searched, stored in the tuning database " + db), std::string::npos)
        << first.output;
    CommandResult second = gen("second");
    ASSERT_EQ(second.exit_code, 0) << second.output;
    EXPECT_NE(second.output.find("schedule=auto from the tuning database " + db), std::string::npos) << second.output;
    EXPECT_EQ(bytes(dir / "second" / "softmax.spyre"), bytes(dir / "first" / "softmax.spyre"));
    CommandResult empty = run_command(quote(kGen) + " -g softmax -o " + quote(dir.string()) + " --tuning-db= schedule=auto");
    EXPECT_EQ(empty.exit_code, 2) << empty.output;
    EXPECT_NE(empty.output.find("--tuning-db=: no file named"), std::string::npos) << empty.output;
    CommandResult named = run_command(quote(kGen) + " -g softmax -o " + quote(dir.string()) + " --tuning-db schedule=stage4");
    EXPECT_EQ(named.exit_code, 2) << named.output;
    EXPECT_NE(named.output.find("--tuning-db stores and reuses schedule=auto's searches; schedule=stage4 is a named schedule"),
              std::string::npos) << named.output;
}

// A generator with two outputs (fused_add_rmsnorm: the residual sum and its RMSNorm): schedule=auto
// schedules it, the header's function takes both outputs, and spyre-run writes each from the
// program and from its KTIR export, the same bytes.
TEST(SpyreGen, TwoOutputGeneratorTakesAutoAndBothOutputsRunFromSpyreAndKtir) {
    fs::path dir = scratch_dir("tools_test", "two_outputs");
    CommandResult r = run_command(quote(kGen) + " -g fused_add_rmsnorm -o " + quote(dir.string()) +
                                  " -e ktir schedule=auto cols=256 rows=40");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::ifstream hf(dir / "fused_add_rmsnorm.h");
    const std::string header((std::istreambuf_iterator<char>(hf)), std::istreambuf_iterator<char>());
    EXPECT_NE(header.find("halide_buffer_t *added_buffer, halide_buffer_t *norm_buffer, spyre::SimStats *stats"),
              std::string::npos) << header;
    EXPECT_NE(header.find("{added_buffer, norm_buffer}, stats)"), std::string::npos) << header;
    for (const char *ext : {".spyre", ".ktir"}) {
        const std::string tag = std::string(ext).substr(1);
        CommandResult run = run_command(quote(std::string(SPYRE_RUN)) + " " + quote((dir / ("fused_add_rmsnorm" + std::string(ext))).string()) +
                                        " --output added=" + quote((dir / ("added_" + tag)).string()) +
                                        " --output norm=" + quote((dir / ("norm_" + tag)).string()));
        ASSERT_EQ(run.exit_code, 0) << run.output;
        // Both outputs against Halide's CPU reference of the generator (its own tolerance: 1 ULP).
        EXPECT_NE(run.output.find("(tolerance 1 ULP): ok"), std::string::npos) << run.output;
    }
    EXPECT_EQ(bytes(dir / "added_spyre").size(), 256u * 40 * 2);
    EXPECT_EQ(bytes(dir / "norm_spyre").size(), 256u * 40 * 2);
    EXPECT_EQ(bytes(dir / "added_spyre"), bytes(dir / "added_ktir"));
    EXPECT_EQ(bytes(dir / "norm_spyre"), bytes(dir / "norm_ktir"));
    EXPECT_NE(bytes(dir / "added_spyre"), bytes(dir / "norm_spyre"));
}

TEST(SpyreGen, Help) {
    CommandResult r = run_command(quote(kGen) + " --help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.output.find("usage:"), std::string::npos);
}

struct GenCase {
    std::string generator, schedule;
    int cols, rows, inputs, cores;
};

void PrintTo(const GenCase &c, std::ostream *os) { *os << c.generator << " " << c.schedule << " " << c.cols << "x" << c.rows; }

class GenerateEach : public ::testing::TestWithParam<GenCase> {};

TEST_P(GenerateEach, WritesAllFilesAndTheProgramReadsBack) {
    const GenCase &c = GetParam();
    fs::path dir = scratch_dir("tools_test", c.generator + "_" + c.schedule);
    CommandResult r = run_command(quote(kGen) + " -g " + c.generator + " -o " + quote(dir.string()) +
                                  " schedule=" + c.schedule + " cols=" + std::to_string(c.cols) +
                                  " rows=" + std::to_string(c.rows));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const char *ext : {".spyre", ".h", ".s", ".json"})
        EXPECT_TRUE(fs::exists(dir / (c.generator + ext))) << c.generator << ext;

    spyre::DeviceProgram p = spyre::read_program_file((dir / (c.generator + ".spyre")).string());
    EXPECT_EQ(p.kernel_name, c.generator);
    EXPECT_EQ(p.num_cores, c.cores);
    int inputs = 0;
    for (const spyre::BufferDecl &b : p.buffers) {
        if (b.kind == spyre::BufferKind::Input) inputs++;
        if (b.kind == spyre::BufferKind::Output) {
            EXPECT_EQ(b.shape, (std::vector<int64_t>{c.cols, c.rows}));
        }
    }
    EXPECT_EQ(inputs, c.inputs);

    std::ifstream jf(dir / (c.generator + ".json"));
    nlohmann::json j = nlohmann::json::parse(jf);
    EXPECT_EQ(j["kernel"], c.generator);
    EXPECT_EQ(j["schedule"], c.schedule);
    EXPECT_EQ(j["cores"], c.cores);
    EXPECT_EQ(j["lx_peak_bytes_per_core"].size(), size_t(c.cores));
    EXPECT_GT(j["lx_peak_bytes"].get<int64_t>(), 0);
    EXPECT_GE(j["dma_read_bytes"].get<int64_t>(), int64_t(c.cols) * c.rows * 2);
    EXPECT_GE(j["dma_write_bytes"].get<int64_t>(), int64_t(c.cols) * c.rows * 2);
    // At least the channel's time for reading the fp16 input and writing the fp16 output once.
    const int64_t tensor_bytes = int64_t(c.cols) * c.rows * 2;
    EXPECT_GE(j["modelled_us"].get<double>(), spyre::testing_floor::channel_floor_us(tensor_bytes, tensor_bytes));

    std::ifstream hf(dir / (c.generator + ".h"));
    std::string header((std::istreambuf_iterator<char>(hf)), std::istreambuf_iterator<char>());
    EXPECT_NE(header.find("inline int " + c.generator + "("), std::string::npos) << header;
    std::ifstream sf(dir / (c.generator + ".s"));
    std::string listing((std::istreambuf_iterator<char>(sf)), std::istreambuf_iterator<char>());
    EXPECT_FALSE(listing.empty());
}

INSTANTIATE_TEST_SUITE_P(Generators, GenerateEach,
                         ::testing::Values(GenCase{"softmax", "stage4", 256, 128, 1, 1},
                                           GenCase{"softmax", "cores32", 256, 2048, 1, 32},
                                           GenCase{"layernorm", "tiles", 320, 100, 3, 1},
                                           GenCase{"rmsnorm", "tiles", 320, 100, 2, 1},
                                           GenCase{"gelu", "tiles", 200, 70, 1, 1}),
                         [](const auto &info) { return info.param.generator + "_" + info.param.schedule; });

TEST(SpyreGenErrors, UnknownGenerator) {
    CommandResult r = run_command(quote(kGen) + " -g sofmax -o /tmp schedule=stage4");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("unknown generator 'sofmax' (known: attention, bmm, conv1d, flash_attention, fused_add_rmsnorm, gated_mlp, gelu, layernorm, linear, mlp, "
                            "qlinear, rmsnorm, rope, rope_interleaved, softmax, stencil, transpose)"), std::string::npos)
        << r.output;
}

TEST(SpyreGenErrors, UnknownParam) {
    CommandResult r = run_command(quote(kGen) + " -g softmax -o /tmp schedule=stage4 colz=64");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("generator softmax has no parameter 'colz' (known: cols, cores, dim, machine, rows, schedule)"),
              std::string::npos)
        << r.output;
}

TEST(SpyreGenErrors, BadParamValue) {
    CommandResult r = run_command(quote(kGen) + " -g softmax -o /tmp schedule=stage4 cols=abc");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("parameter cols=abc: expected an integer"), std::string::npos) << r.output;
}

TEST(SpyreGenErrors, UnknownSchedule) {
    CommandResult r = run_command(quote(kGen) + " -g softmax -o /tmp schedule=stage9");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("generator softmax has no schedule 'stage9' (known: stage1, stage2, stage3, stage4, cores32, phased, auto)"),
              std::string::npos)
        << r.output;
}

TEST(SpyreGenErrors, MissingSchedule) {
    CommandResult r = run_command(quote(kGen) + " -g layernorm -o /tmp cols=64");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("generator layernorm needs schedule=S (one of: tiles, cores32, phased, auto)"), std::string::npos)
        << r.output;
}

TEST(SpyreGenErrors, CpuScheduleIsNotASpyreSchedule) {
    CommandResult r = run_command(quote(kGen) + " -g softmax -o /tmp schedule=cpu");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("schedule=cpu is the CPU reference schedule"), std::string::npos) << r.output;
}

TEST(SpyreGenErrors, UnwritableOutputDir) {
    fs::path dir = scratch_dir("tools_test", "unwritable");
    fs::path file = dir / "a_file";
    std::ofstream(file) << "x";
    CommandResult r = run_command(quote(kGen) + " -g softmax -o " + quote((file / "out").string()) +
                                  " schedule=stage4 cols=64 rows=64");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("cannot create output directory '" + (file / "out").string() + "'"), std::string::npos)
        << r.output;
}

TEST(SpyreGenErrors, MissingMachineFile) {
    CommandResult r = run_command(quote(kGen) + " -g softmax -o /tmp schedule=stage4 machine=/nonexistent/m.json");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("machine description '/nonexistent/m.json' does not exist"), std::string::npos) << r.output;
}

TEST(SpyreGenErrors, UnexpectedArgumentAndMissingFlags) {
    CommandResult r = run_command(quote(kGen) + " -g softmax schedule=stage4");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("missing -o DIR"), std::string::npos) << r.output;
    r = run_command(quote(kGen) + " --frobnicate");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("unexpected argument '--frobnicate'"), std::string::npos) << r.output;
}

TEST(SpyreGenErrors, ScheduleTheBackEndRejects) {
    // mlp's matched schedule keeps all of W2 in every core's LX, which at dim 1024 x hidden 4096
    // does not fit; the compile error from the back end is passed through.
    CommandResult r = run_command(quote(kGen) +
                                  " -g mlp -o /tmp/spyre_gen_reject schedule=matched dim=1024 hidden=4096 rows=512");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("spyre-gen: error: Func w2: LX overflow"), std::string::npos) << r.output;
}

}  // namespace
