// spyre-run on .ktir files (scalar --arg, several --output NAME=FILE, --json, --timing-only, input
// files, errors) and spyre-gen -e ktir, whose KTIR spyre-run checks against Halide's CPU reference.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "catalogue_shapes.h"
#include "device/program_io.h"
#include "ktir_import.h"
#include "test_paths.h"
#include "tool_test_util.h"

namespace fs = std::filesystem;
using namespace spyre::tools_testing;

namespace {

const std::string kRun = SPYRE_RUN, kGen = SPYRE_GEN, kKernels = KTIR_KERNELS;

fs::path scratch(const std::string &name) {
    fs::path d = fs::temp_directory_path() / ("spyre_ktir_tools_" + std::to_string(::getpid())) / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// Two outputs: y = x + x and z = x * x, 2 x 64 fp16.
const char *kTwoOutputs = R"(func.func @two(%x_ptr: index, %y_ptr: index, %z_ptr: index) {
  %c0 = arith.constant 0 : index
  %xv = ktdp.construct_memory_view %x_ptr, sizes: [2, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<2x64xf16>
  %yv = ktdp.construct_memory_view %y_ptr, sizes: [2, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<2x64xf16>
  %zv = ktdp.construct_memory_view %z_ptr, sizes: [2, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<2x64xf16>
  %xt = ktdp.construct_access_tile %xv[%c0, %c0] : memref<2x64xf16> -> !ktdp.access_tile<2x64xindex>
  %x = ktdp.load %xt : !ktdp.access_tile<2x64xindex> -> tensor<2x64xf16>
  %y = arith.addf %x, %x : tensor<2x64xf16>
  %z = arith.mulf %x, %x : tensor<2x64xf16>
  %yt = ktdp.construct_access_tile %yv[%c0, %c0] : memref<2x64xf16> -> !ktdp.access_tile<2x64xindex>
  ktdp.store %y, %yt : tensor<2x64xf16>, !ktdp.access_tile<2x64xindex>
  %zt = ktdp.construct_access_tile %zv[%c0, %c0] : memref<2x64xf16> -> !ktdp.access_tile<2x64xindex>
  ktdp.store %z, %zt : tensor<2x64xf16>, !ktdp.access_tile<2x64xindex>
  return
}
)";

std::vector<uint16_t> read_halves(const fs::path &p) {
    std::ifstream f(p, std::ios::binary);
    std::vector<char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<uint16_t> h(b.size() / 2);
    std::memcpy(h.data(), b.data(), h.size() * 2);
    return h;
}

TEST(KtirSpyreRun, RunsAKernelWithAScalarArgumentAndNamesItsOutput) {
    fs::path d = scratch("attention");
    CommandResult r = run_command(quote(kRun) + " " + quote(kKernels + "/attention.ktir") +
                                  " --arg scale=0.125 --output o=" + quote((d / "o.bin").string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("kernel attention (1 core"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("output          o -> "), std::string::npos) << r.output;
    EXPECT_EQ(fs::file_size(d / "o.bin"), 64u * 64u * 2u);
    EXPECT_NE(r.output.find("reference: none (no spyre-gen report next to the kernel)"), std::string::npos);
}

TEST(KtirSpyreRun, AnMlirFileIsKtirLikeAKtirFile) {
    // ktir-cpu's examples are .mlir files.
    fs::path d = scratch("mlir");
    { std::ofstream(d / "two.mlir") << kTwoOutputs; }
    CommandResult r = run_command(quote(kRun) + " " + quote((d / "two.mlir").string()) + " --timing-only");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("kernel two (1 core"), std::string::npos) << r.output;
}

TEST(KtirSpyreRun, SeveralOutputsEachToItsFileFromAnInputFile) {
    fs::path d = scratch("two");
    { std::ofstream(d / "two.ktir") << kTwoOutputs; }
    std::vector<uint16_t> x(128);
    for (int i = 0; i < 128; i++) x[size_t(i)] = uint16_t(0x3C00 + (i % 4) * 0x400);  // 1, 2, 4, 8
    { std::ofstream(d / "x.bin", std::ios::binary).write(reinterpret_cast<const char *>(x.data()), 256); }
    CommandResult r = run_command(quote(kRun) + " " + quote((d / "two.ktir").string()) + " --input x=" +
                                  quote((d / "x.bin").string()) + " --output y=" + quote((d / "y.bin").string()) +
                                  " --output z=" + quote((d / "z.bin").string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::vector<uint16_t> y = read_halves(d / "y.bin"), z = read_halves(d / "z.bin");
    ASSERT_EQ(y.size(), 128u);
    ASSERT_EQ(z.size(), 128u);
    for (int i = 0; i < 128; i++) {
        EXPECT_EQ(y[size_t(i)], uint16_t(x[size_t(i)] + 0x400)) << i;           // doubled: exponent + 1
        EXPECT_EQ(z[size_t(i)], uint16_t(0x3C00 + (i % 4) * 0x800)) << i;       // squared: exponent x 2
    }
    // One unnamed -o is ambiguous with two outputs.
    CommandResult amb = run_command(quote(kRun) + " " + quote((d / "two.ktir").string()) + " -o " +
                                    quote((d / "a.bin").string()));
    EXPECT_EQ(amb.exit_code, 1);
    EXPECT_NE(amb.output.find("has 2 outputs (y, z); name one as --output NAME=FILE"), std::string::npos) << amb.output;
    CommandResult bad = run_command(quote(kRun) + " " + quote((d / "two.ktir").string()) + " --output w=" +
                                    quote((d / "a.bin").string()));
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.output.find("kernel two has no output 'w' (outputs: y, z)"), std::string::npos) << bad.output;
}

// A buffer the kernel loads and stores (add_in_place.ktir: x += y) is read from --input and written
// to --output; without its initial contents spyre-run refuses to run rather than start from zeros.
TEST(KtirSpyreRun, InOutBufferTakesAnInputFileAndIsWrittenAsAnOutput) {
    fs::path d = scratch("inout");
    std::vector<uint16_t> x(256), y(256);
    for (int i = 0; i < 256; i++) {
        x[size_t(i)] = uint16_t(0x3C00 + (i % 4) * 0x400);  // 1, 2, 4, 8
        y[size_t(i)] = x[size_t(i)];
    }
    { std::ofstream(d / "x.bin", std::ios::binary).write(reinterpret_cast<const char *>(x.data()), 512); }
    { std::ofstream(d / "y.bin", std::ios::binary).write(reinterpret_cast<const char *>(y.data()), 512); }
    const std::string kernel = quote(kKernels + "/add_in_place.ktir");
    CommandResult r = run_command(quote(kRun) + " " + kernel + " -i x=" + quote((d / "x.bin").string()) + " -i y=" +
                                  quote((d / "y.bin").string()) + " -o " + quote((d / "out.bin").string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("inout x: f16 {64, 4} (from "), std::string::npos) << r.output;
    std::vector<uint16_t> out = read_halves(d / "out.bin");
    ASSERT_EQ(out.size(), 256u);
    for (int i = 0; i < 256; i++) EXPECT_EQ(out[size_t(i)], uint16_t(x[size_t(i)] + 0x400)) << i;  // x + x
    CommandResult missing = run_command(quote(kRun) + " " + kernel + " -i y=" + quote((d / "y.bin").string()));
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.output.find("buffer 'x' is both read and written by kernel add_in_place (inout): give its "
                                  "initial contents with --input x=FILE"),
              std::string::npos)
        << missing.output;
}

TEST(KtirSpyreRun, JsonTimingOnlyAndTraceWorkForKtir) {
    fs::path d = scratch("json");
    CommandResult r = run_command(quote(kRun) + " " + quote(kKernels + "/softmax.ktir") + " --json --trace " +
                                  quote((d / "t.json").string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("\"kernel\": \"softmax\""), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("\"cores\": 4"), std::string::npos) << r.output;
    EXPECT_TRUE(fs::exists(d / "t.json"));
    CommandResult t = run_command(quote(kRun) + " " + quote(kKernels + "/matmul.ktir") + " --timing-only");
    ASSERT_EQ(t.exit_code, 0) << t.output;
    EXPECT_NE(t.output.find("timing only"), std::string::npos) << t.output;
}

// A gather's random indices must be rows of its table: the default ints (-8..8) fall outside it
// and the simulator names the DMA; --ints 0:63 draws them from the table's rows.
TEST(KtirSpyreRun, IntsOptionDrawsAGathersRandomIndicesFromItsRange) {
    const std::string gather = quote(kRun) + " " + quote(kKernels + "/gather_rows.ktir");
    CommandResult outside = run_command(gather);
    EXPECT_EQ(outside.exit_code, 1);
    EXPECT_NE(outside.output.find("(DMA_LD): device-memory range"), std::string::npos) << outside.output;
    EXPECT_NE(outside.output.find("is outside buffer 'table'"), std::string::npos) << outside.output;
    CommandResult inside = run_command(gather + " --ints 0:63");
    EXPECT_EQ(inside.exit_code, 0) << inside.output;
    CommandResult bad = run_command(gather + " --ints 9:2");
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.output.find("--ints: '9:2' is not LO:HI, two int32 values with LO <= HI"), std::string::npos)
        << bad.output;
}

TEST(KtirSpyreRun, ErrorsNameTheArgumentOrTheLine) {
    CommandResult r = run_command(quote(kRun) + " " + quote(kKernels + "/attention.ktir"));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("scalar argument %scale (f32) has no value; give --arg scale=VALUE"), std::string::npos)
        << r.output;
    fs::path d = scratch("bad");
    { std::ofstream(d / "bad.ktir") << "func.func @k() {\n  %a = arith.constant 1 : index\n  %b = arith.bogus %a : index\n  return\n}\n"; }
    CommandResult b = run_command(quote(kRun) + " " + quote((d / "bad.ktir").string()));
    EXPECT_EQ(b.exit_code, 1);
    EXPECT_NE(b.output.find("bad.ktir: line 3: unsupported operation 'arith.bogus'"), std::string::npos) << b.output;
    CommandResult f = run_command(quote(kRun) + " " + quote(kKernels + "/softmax.ktir") + " --func nope");
    EXPECT_NE(f.output.find("no function @nope (functions: softmax)"), std::string::npos) << f.output;
    CommandResult a = run_command(quote(kRun) + " " + quote(kKernels + "/softmax.ktir") + " --arg x");
    EXPECT_NE(a.output.find("--arg 'x': expected NAME=VALUE"), std::string::npos) << a.output;
}

TEST(KtirSpyreGen, ExportedKernelRunsAndPassesTheCpuReference) {
    fs::path d = scratch("gen");
    CommandResult g = run_command(quote(kGen) + " -g layernorm -o " + quote(d.string()) +
                                  " -e ktir schedule=tiles cols=320 rows=100");
    ASSERT_EQ(g.exit_code, 0) << g.output;
    EXPECT_NE(g.output.find(".{spyre,h,s,json,ktir}"), std::string::npos) << g.output;
    ASSERT_TRUE(fs::exists(d / "layernorm.ktir"));
    std::ifstream f(d / "layernorm.ktir");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (const char *want : {"func.func @layernorm(", "ktdp.construct_memory_view", "ktdp.construct_access_tile",
                             "ktdp.load", "ktdp.store", "memory_space = #ktdp.memory_space<ct_local>",
                             "spyre.sync = \"explicit\"", "linalg.reduce"})
        EXPECT_NE(text.find(want), std::string::npos) << want;
    CommandResult k = run_command(quote(kRun) + " " + quote((d / "layernorm.ktir").string()));
    ASSERT_EQ(k.exit_code, 0) << k.output;
    EXPECT_NE(k.output.find("reference: max error 0 ULP (tolerance 0 ULP): ok"), std::string::npos) << k.output;
    CommandResult s = run_command(quote(kRun) + " " + quote((d / "layernorm.spyre").string()));
    auto cycles = [](const std::string &out) {
        size_t at = out.find(" cycles at");
        size_t open = out.rfind('(', at);
        return std::stod(out.substr(open + 1, at - open - 1));
    };
    EXPECT_NEAR(cycles(k.output), cycles(s.output), 0.05 * cycles(s.output)) << k.output << s.output;
}

}  // namespace

namespace {

TEST(KtirAddSpyreKernel, KtirOptionWritesAKernelThatImportsToTheSameProgram) {
    // add_spyre_kernel(gelu_ktir ... KTIR) in tests/CMakeLists.txt wrote both files at build time.
    spyre::DeviceProgram spyre_file = spyre::read_program_file(GELU_SPYRE);
    spyre::DeviceProgram imported = spyre::ktir::import_ktir_file(GELU_KTIR, {});
    EXPECT_EQ(imported.num_cores, spyre_file.num_cores);
    ASSERT_EQ(imported.buffers.size(), spyre_file.buffers.size());
    EXPECT_EQ(imported.buffers[0].shape, spyre_file.buffers[0].shape);
    EXPECT_EQ(imported.dma.size(), spyre_file.dma.size());
    size_t vec = 0, vec2 = 0;
    for (const spyre::Instr &in : spyre_file.code) vec += spyre::op_info(in.op).engine == spyre::Engine::Vector;
    for (const spyre::Instr &in : imported.code) vec2 += spyre::op_info(in.op).engine == spyre::Engine::Vector;
    EXPECT_EQ(vec2, vec);  // the same vector instructions, one for one
}

}  // namespace

namespace {

// Every app of the catalogue through its generator, at the small shape of the round trip: the
// apps that have a generator, and the spyre-gen arguments of each.
std::vector<std::string> generator_apps() {
    std::vector<std::string> out;
    for (const std::string &app : spyre::report::app_names())
        if (!spyre::report::app_generator(app).empty()) out.push_back(app);
    return out;
}

class KtirEveryGenerator : public ::testing::TestWithParam<std::string> {};

TEST_P(KtirEveryGenerator, SpyreGenExportsKtirThatSpyreRunChecksAgainstTheCpu) {
    const std::string app = GetParam(), gen = spyre::report::app_generator(app);
    std::string args = " schedule=" + spyre::report::app_schedules(app).front();
    for (const std::string &p : spyre::report::generator_params(app, spyre::ktir_testing::small_shape(app)))
        args += " " + p;
    fs::path d = scratch("every_" + app);
    CommandResult g = run_command(quote(kGen) + " -g " + gen + " -o " + quote(d.string()) + " -e ktir" + args);
    ASSERT_EQ(g.exit_code, 0) << g.output;
    CommandResult r = run_command(quote(kRun) + " " + quote((d / (gen + ".ktir")).string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("reference: max error"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("): ok"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Generators, KtirEveryGenerator, ::testing::ValuesIn(generator_apps()),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

}  // namespace
