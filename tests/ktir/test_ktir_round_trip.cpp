// The KTIR round trip over the whole catalogue: every app x named schedule compiled at a small
// shape, exported to KTIR, imported back and run on the simulator beside the original program. The
// outputs must agree bit for bit and the modelled times within 5%. The autoscheduler's programs
// are made of the same instructions; one of them makes the round trip on its own (its search is
// most of the time a catalogue-wide auto sweep would take). The export moves the program's LX to
// the top of LX, as spyre-gen's does, and the import moves it back: the same LX peak.
#include <cstring>

#include <gtest/gtest.h>

#include "device/error.h"
#include "catalogue_shapes.h"
#include "kernel_catalog.h"
#include "ktir_export.h"
#include "ktir_import.h"
#include "ktir_reader.h"
#include "spyre.h"

namespace {

using namespace spyre;
using ktir_testing::small_shape;

struct Case {
    std::string app, schedule;
    report::ArgumentLayouts layouts = report::ArgumentLayouts::RowMajor;
};

void PrintTo(const Case &c, std::ostream *os) {
    *os << c.app << "/" << c.schedule << (c.layouts == report::ArgumentLayouts::TorchSpyre ? " torch-spyre layouts" : "");
}

std::vector<Case> named_schedules() {
    std::vector<Case> out;
    for (const std::string &app : report::app_names())
        for (const std::string &s : report::app_schedules(app))
            if (s != "auto") out.push_back({app, s});
    return out;
}

// Two layouts of one shape that place every element at the same device offset (they may order
// dims of extent 1 differently).
bool same_placement(const BufferDecl &a, const BufferDecl &b) {
    if (a.shape != b.shape || a.layout.stick_dim != b.layout.stick_dim) return false;
    const MachineDesc m;
    const DeviceGeometry ga = device_geometry(a.layout, a.shape, a.type, m.stick_bytes),
                         gb = device_geometry(b.layout, b.shape, b.type, m.stick_bytes);
    if (ga.total_bytes != gb.total_bytes) return false;
    if (ga.sticks_along_stick_dim > 1 && ga.stick_index_stride != gb.stick_index_stride) return false;
    for (size_t d = 0; d < a.shape.size(); d++)
        if (int(d) != a.layout.stick_dim && a.shape[d] > 1 && ga.dim_stride[d] != gb.dim_stride[d]) return false;
    return true;
}

// Compiles c at its small shape, exports it, imports it back and runs both.
void expect_round_trip(const Case &c) {
    const report::Shape shape = small_shape(c.app);
    DeviceProgram original = report::compile_kernel(c.app, c.schedule, shape, {}, "", nullptr, c.layouts);
    std::vector<Halide::Runtime::Buffer<>> inputs = report::random_inputs(c.app, shape);
    SpyreRun a = run_on_spyre(original, inputs);
    // As spyre-gen writes it: the program's LX at the top of LX (spyre.lx_offset), which the import
    // moves back.
    ktir::ExportOptions eo;
    eo.lx_high_water_bytes = a.stats.lx_peak_bytes;
    std::string text = ktir::export_ktir(original, {}, eo);
    EXPECT_NE(text.find("spyre.lx_offset = "), std::string::npos);
    ktir::ImportOptions opt;
    DeviceProgram imported;
    try {
        imported = ktir::import_ktir(ktir::read_ktir(text), opt);
    } catch (const Error &e) {
        FAIL() << e.what();
    }
    EXPECT_EQ(imported.num_cores, original.num_cores);
    ASSERT_EQ(imported.buffers.size(), original.buffers.size());
    for (size_t i = 0; i < original.buffers.size(); i++) {
        EXPECT_EQ(imported.buffers[i].name, original.buffers[i].name);
        EXPECT_EQ(imported.buffers[i].kind, original.buffers[i].kind);
        EXPECT_EQ(imported.buffers[i].type, original.buffers[i].type);
        EXPECT_EQ(imported.buffers[i].shape, original.buffers[i].shape);
        EXPECT_TRUE(same_placement(original.buffers[i], imported.buffers[i]))
            << original.buffers[i].name << ": " << layout_to_string(original.buffers[i].layout) << " exported, "
            << layout_to_string(imported.buffers[i].layout) << " imported";
    }
    SpyreRun b = run_on_spyre(imported, inputs);
    EXPECT_EQ(b.stats.lx_peak_bytes, a.stats.lx_peak_bytes);
    ASSERT_EQ(a.output.size_in_bytes(), b.output.size_in_bytes());
    EXPECT_EQ(std::memcmp(a.output.data(), b.output.data(), a.output.size_in_bytes()), 0)
        << "outputs differ";
    ::testing::Test::RecordProperty("original_cycles", std::to_string(a.stats.cycles));
    ::testing::Test::RecordProperty("imported_cycles", std::to_string(b.stats.cycles));
    ::testing::Test::RecordProperty("original_instructions", std::to_string(original.code.size()));
    ::testing::Test::RecordProperty("imported_instructions", std::to_string(imported.code.size()));
    EXPECT_NEAR(b.stats.cycles, a.stats.cycles, 0.05 * a.stats.cycles)
        << "original " << a.stats.cycles << " cycles, imported " << b.stats.cycles;
    EXPECT_EQ(b.stats.dram_read_bytes, a.stats.dram_read_bytes);
    EXPECT_EQ(b.stats.dram_write_bytes, a.stats.dram_write_bytes);
    EXPECT_EQ(b.stats.ring_bytes, a.stats.ring_bytes);
}

class KtirRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(KtirRoundTrip, ImportedExportRunsTheSameNumbersInTheSameTime) { expect_round_trip(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Catalogue, KtirRoundTrip, ::testing::ValuesIn(named_schedules()),
                         [](const ::testing::TestParamInfo<Case> &i) { return i.param.app + "_" + i.param.schedule; });

// The same with every argument of two dims or more in torch-spyre's default layout: the buffers'
// views carry the layouts (the stick dim split into stick count and lanes) and come back the same.
std::vector<Case> torch_spyre_layouts() {
    std::vector<Case> out = named_schedules();
    for (Case &c : out) c.layouts = report::ArgumentLayouts::TorchSpyre;
    return out;
}

INSTANTIATE_TEST_SUITE_P(TorchSpyreLayouts, KtirRoundTrip, ::testing::ValuesIn(torch_spyre_layouts()),
                         [](const ::testing::TestParamInfo<Case> &i) { return i.param.app + "_" + i.param.schedule; });

// Arguments sticked on dim 1 (restickified around the kernel): the export writes each as the
// swapped tensor it is byte for byte, marked spyre.stick_dim = 1, and the import gives it back.
TEST(KtirRoundTripLayouts, ArgumentsStickedOnDimOneComeBackSticked) {
    Halide::ImageParam in(Halide::Float(16), 2, "in");
    Halide::Var x("x"), y("y");
    Halide::Func out("out");
    out(x, y) = in(x, y) * 2 + 1;
    spyre::schedule(out).ring_split(y, 2).stick_vectorize(x);
    CompileOptions o;
    o.inputs = {TensorSpec{{128, 192}, DeviceLayout{1, {0, 1}}}};
    o.output = TensorSpec{{128, 192}, DeviceLayout{1, {1, 0}}};
    const DeviceProgram original = compile_for_spyre(out, {in}, o);
    const DeviceProgram imported = ktir::import_ktir(ktir::read_ktir(ktir::export_ktir(original)), {});
    ASSERT_EQ(imported.buffers.size(), original.buffers.size());
    for (size_t i = 0; i < original.buffers.size(); i++) {
        EXPECT_TRUE(same_placement(original.buffers[i], imported.buffers[i]))
            << original.buffers[i].name << ": " << layout_to_string(original.buffers[i].layout) << " exported, "
            << layout_to_string(imported.buffers[i].layout) << " imported";
    }
    EXPECT_EQ(imported.buffers[0].layout, original.buffers[0].layout);
    EXPECT_EQ(imported.buffers[1].layout, original.buffers[1].layout);
    const std::vector<Halide::Runtime::Buffer<>> inputs = {report::random_inputs("gelu", report::parse_shape("gelu", "192x128"))[0]};
    const SpyreRun a = run_on_spyre(original, inputs), b = run_on_spyre(imported, inputs);
    ASSERT_EQ(a.output.size_in_bytes(), b.output.size_in_bytes());
    EXPECT_EQ(std::memcmp(a.output.data(), b.output.data(), a.output.size_in_bytes()), 0);
}

TEST(KtirRoundTripAuto, AutoScheduledLayernormRunsTheSameNumbersInTheSameTime) {
    expect_round_trip({"layernorm", "auto"});
}

}  // namespace
