// device_layout: the storage order of an intermediate in device memory, and the place of its stick
// count. It must compute the same numbers in every layout, change the modelled time where the
// accesses' runs change, and refuse a malformed order with a message naming the Func and the
// directive.
#include <gtest/gtest.h>

#include "auto_directives.h"
#include "auto_layouts.h"
#include "auto_print.h"
#include "auto_schedule.h"
#include "auto_search.h"
#include "auto_space.h"
#include "auto_structure.h"
#include "compiler_test_util.h"

using namespace Halide;
using namespace spyre;
using namespace spyre::testing;

namespace {

// p is read by the output with its two outer dimensions swapped: stored in the output's order, the
// output reads whole runs.
Kernel swapped_reader() {
    Kernel k;
    ImageParam in(Float(16), 3, "in");
    Var x("x"), y("y"), z("z");
    Func p("p"), out("out");
    p(x, y, z) = in(x, y, z) * 2;
    out(x, y, z) = p(x, z, y) + p(x, z, y) * p(x, z, y);
    k.inputs = {in};
    k.output = out;
    k.funcs["p"] = p;
    k.vars = {{"x", x}, {"y", y}, {"z", z}};
    return k;
}

DiffResult run_swapped(bool reader_order) {
    return run_differential(swapped_reader, [&](Kernel &k) {
        Var x = k.vars["x"], y = k.vars["y"], z = k.vars["z"];
        SpyreSchedule p = spyre::schedule(k.funcs["p"]);
        p.device_root().stick_vectorize(x);
        if (reader_order) p.device_layout({x, z, y});
        spyre::schedule(k.output).stick_vectorize(x);
    }, {{128, 64, 16}}, {128, 16, 64});
}

CompileOptions device_layout_options_for(const std::vector<int64_t> &in, const std::vector<int64_t> &out) {
    CompileOptions o;
    o.inputs = {TensorSpec{in, {}}};
    o.output = TensorSpec{out, {}};
    return o;
}

// The swapped reader's candidates on up to `cores` cores, then their intermediate layout variants.
struct Variants {
    Kernel k = swapped_reader();
    CompileOptions o;
    size_t bases = 0;
    std::vector<autosched::Candidate> all;
};

Variants variants_of_swapped_reader(int cores, const std::vector<int64_t> &in = {128, 64, 16},
                                    const std::vector<int64_t> &out = {128, 16, 64}) {
    using namespace autosched;
    Variants v;
    v.o = device_layout_options_for(in, out);
    const PipelineInfo info = analyse_pipeline(v.k.output, v.k.inputs);
    SpaceShapes shapes;
    shapes.inputs = {in};
    shapes.output = out;
    const std::vector<Candidate> cs = candidate_space(info, shapes, v.o.machine, cores).candidates;
    v.bases = cs.size();
    v.all = with_intermediate_layout_variants(cs, info);
    return v;
}

std::string layout_error(const std::function<void(Func &, Var, Var, Var)> &schedule) {
    Kernel k = swapped_reader();
    return error_of([&] { schedule(k.funcs["p"], k.vars["x"], k.vars["y"], k.vars["z"]); });
}

// p in each order and with its stick count outside each of its dimensions (device_layout(order,
// outside)); the input in torch-spyre's layout.
struct TempCase {
    std::string order, outside;  // dims of p in storage order, innermost first; the stick count's place
};
void PrintTo(const TempCase &c, std::ostream *os) { *os << c.order << " sticks outside " << c.outside; }

class IntermediateLayouts : public ::testing::TestWithParam<TempCase> {};

TEST_P(IntermediateLayouts, DeviceRootFuncMatchesCpu) {
    const TempCase c = GetParam();
    const std::vector<int> in = {128, 24, 10}, out = {128, 10, 24};
    DiffResult r = run_differential_with_options(
        swapped_reader,
        [&](Kernel &k, const CompileOptions &opt) {
            std::vector<Var> order;
            for (char d : c.order) order.push_back(k.vars[std::string(1, d)]);
            SpyreSchedule p = spyre::schedule(k.funcs["p"]);
            p.device_root().stick_vectorize(k.vars["x"]).device_layout(order, k.vars[c.outside]);
            spyre::schedule(k.output).ring_split(k.vars["z"], 4).stick_vectorize(k.vars["x"]);
            CompileOptions o = opt;
            o.inputs[0].layout = torch_spyre_default_layout(3);
            return o;
        },
        {random_buffer(halide_type_of<float16_t>(), in, -2, 2, 5)}, out);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    bool temp = false;
    for (const BufferDecl &b : r.program.buffers)
        if (b.kind == BufferKind::Temp) {
            temp = true;
            EXPECT_EQ(b.shape.size(), c.outside == "x" ? 1u : 3u) << b.name;  // the default: flat
            EXPECT_EQ(stick_count_innermost(b.layout, int(b.shape.size())), c.outside == "x")
                << layout_to_string(b.layout);
        }
    EXPECT_TRUE(temp);
}

INSTANTIATE_TEST_SUITE_P(Layouts, IntermediateLayouts,
                         ::testing::Values(TempCase{"xyz", "z"}, TempCase{"xyz", "y"}, TempCase{"xzy", "y"},
                                           TempCase{"xzy", "z"}, TempCase{"xzy", "x"}),
                         [](const ::testing::TestParamInfo<TempCase> &i) {
                             return i.param.order + "_outside_" + i.param.outside;
                         });

// A DeviceLayout directive (as a tuning database stores it) whose stick count is placed outside a dim
// it does not have is refused by name.
TEST(IntermediateLayouts, ADirectiveWithTheStickCountOutsideNoDimIsRefused) {
    using namespace autosched;
    Kernel k = swapped_reader();
    std::map<std::string, Func> funcs{{k.funcs["p"].name(), k.funcs["p"]}, {k.output.name(), k.output}};
    std::vector<Directive> ds{{Directive::DeviceRoot, k.funcs["p"].name(), {}, {}, ""},
                              {Directive::DeviceLayout, k.funcs["p"].name(), {"x", "z", "y"}, {5}, ""}};
    EXPECT_EQ(error_of([&] { apply_directives(ds, funcs, {}, MachineDesc{}); }),
              "Func p: device_layout's stick count is placed outside dim 5 of its 3");
}

TEST(IntermediateLayouts, StickCountPlacementNeedsWholeStickRowsAndOneOfTheDims) {
    Kernel k = swapped_reader();
    Var x = k.vars["x"], y = k.vars["y"], z = k.vars["z"];
    EXPECT_EQ(error_of([&] { spyre::schedule(k.funcs["p"]).device_root().device_layout({x, y, z}, Var("w")); }),
              "Func p: device_layout(x, y, z; stick count outside w): w is not one of its dimensions");
    Kernel k2 = swapped_reader();
    spyre::schedule(k2.funcs["p"]).device_root().device_layout({k2.vars["x"], k2.vars["y"], k2.vars["z"]}, k2.vars["z"]);
    CompileOptions o;
    o.inputs = {TensorSpec{{100, 8, 4}, {}}};
    o.output = TensorSpec{{100, 4, 8}, {}};
    EXPECT_NE(error_of([&] { compile_for_spyre(k2.output, k2.inputs, o); })
                  .find("Func p: a device_layout with its stick count outside a dimension needs rows of whole sticks; "
                        "its rows hold 100 elements"),
              std::string::npos);
}

}  // namespace

TEST(DeviceLayout, EitherOrderComputesTheSameAndTheReadersOrderIsFaster) {
    const DiffResult plain = run_swapped(false), ordered = run_swapped(true);
    EXPECT_EQ(plain.cmp.mismatches, 0) << plain.cmp.first_mismatch;
    EXPECT_EQ(ordered.cmp.mismatches, 0) << ordered.cmp.first_mismatch;
    // One core: the reader's long runs outweigh the producer's short writes.
    EXPECT_LT(ordered.stats.us, plain.stats.us);
}

TEST(DeviceLayout, MalformedOrdersAreRefusedByName) {
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) { spyre::schedule(p).device_root().device_layout({x, z}); }),
              "Func p: device_layout(x, z): names 2 of its 3 dimensions; a layout orders them all");
    EXPECT_EQ(layout_error([](Func &p, Var, Var, Var) { spyre::schedule(p).device_root().device_layout({}); }),
              "Func p: device_layout(): names 0 of its 3 dimensions; a layout orders them all");
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) { spyre::schedule(p).device_root().device_layout({x, z, z}); }),
              "Func p: device_layout(x, z, z): z is named twice");
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) {
                  spyre::schedule(p).device_root().device_layout({x, z, Var("w")});
              }),
              "Func p: device_layout(x, z, w): w is not one of its dimensions");
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) { spyre::schedule(p).device_root().device_layout({z, x, y}); }),
              "Func p: device_layout(z, x, y): the stick dimension x (the Func's first) must come first, innermost");
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) { spyre::schedule(p).device_layout({x, z, y}); }),
              "Func p: device_layout(x, z, y): it is inlined and has no storage to lay out; place it first "
              "(device_root, scratchpad_store_at or scratchpad_root)");
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) {
                  spyre::schedule(p).scratchpad_root().device_layout({x, z, y}, y);
              }),
              "Func p: device_layout(x, z, y; stick count outside y): it is kept in LX, where the stick count stays "
              "innermost; the stick count's place is for a Func in device memory (device_root)");
}

// An LX tile in either order of its outer dims, kept for the whole kernel or per tile of the output:
// the same numbers (the tile's rows are addressed through the storage order Halide flattens them in).
struct LxCase {
    bool per_tile, reader_order;
};
class LxTileLayouts : public ::testing::TestWithParam<LxCase> {};

TEST_P(LxTileLayouts, MatchesCpu) {
    const LxCase c = GetParam();
    DiffResult r = run_differential(swapped_reader, [&](Kernel &k) {
        Var x = k.vars["x"], y = k.vars["y"], z = k.vars["z"];
        SpyreSchedule out = spyre::schedule(k.output);
        out.ring_split(z, 4).stick_vectorize(x);
        SpyreSchedule p = spyre::schedule(k.funcs["p"]);
        if (c.per_tile)
            p.scratchpad_store_at(k.output, z);
        else
            p.scratchpad_root();
        p.stick_vectorize(x).device_layout(c.reader_order ? std::vector<Var>{x, z, y} : std::vector<Var>{x, y, z}, x);
    }, {{128, 24, 16}}, {128, 16, 24});
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    for (const BufferDecl &b : r.program.buffers) EXPECT_NE(b.kind, BufferKind::Temp) << b.name << " is in LX";
}

INSTANTIATE_TEST_SUITE_P(Layouts, LxTileLayouts,
                         ::testing::Values(LxCase{false, false}, LxCase{false, true}, LxCase{true, true}),
                         [](const ::testing::TestParamInfo<LxCase> &i) {
                             return std::string(i.param.per_tile ? "PerOutputTile" : "WholeKernel") +
                                    (i.param.reader_order ? "_ReadersOrder" : "_DefinitionOrder");
                         });

// Every candidate that keeps p in device memory gets the variants that store p in the other order of
// its outer dims (its reader's, with p's loops in that order) and with its stick count outside each
// outer dim, in either order; each refines its base and prints as the directive.
TEST(AutoIntermediateLayouts, EveryDeviceIntermediateOfRankThreeGetsEveryOrderAndStickCountPlace) {
    using namespace autosched;
    const Variants v = variants_of_swapped_reader(8);
    const std::string p = v.k.funcs.at("p").name();
    size_t device = 0;
    for (size_t i = 0; i < v.bases; i++)
        for (const Directive &d : v.all[i].directives) device += d.kind == Directive::DeviceRoot && d.func == p;
    ASSERT_GT(device, 0u) << "the space keeps p in device memory somewhere";
    ASSERT_EQ(v.all.size(), v.bases + 5 * device);
    const PipelineInfo info = analyse_pipeline(v.k.output, v.k.inputs);
    const std::vector<std::pair<std::string, std::string>> want = {
        {"x,y,z;sticks>y", "device_layout({x, y, z}, y)"}, {"x,y,z;sticks>z", "device_layout({x, y, z}, z)"},
        {"x,z,y", "device_layout({x, z, y})"},             {"x,z,y;sticks>z", "device_layout({x, z, y}, z)"},
        {"x,z,y;sticks>y", "device_layout({x, z, y}, y)"}};
    for (size_t i = v.bases; i < v.all.size(); i++) {
        const Candidate &c = v.all[i];
        const auto &[layout, call] = want[(i - v.bases) % want.size()];
        EXPECT_EQ(c.summary(), c.refines + " p.layout=" + layout);
        const std::string cpp = print_cpp(c.directives, info, "m");
        EXPECT_NE(cpp.find(".device_root()." + call), std::string::npos) << cpp;
    }
}

// A rank-2 intermediate has one order with the stick dimension innermost, and one other place for
// its stick count: outermost, torch-spyre's default.
TEST(AutoIntermediateLayouts, RankTwoIntermediatesGetTheStickCountOutermost) {
    using namespace autosched;
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func p("p"), out("out");
    p(x, y) = in(x, y) * 2;
    out(x, y) = p(x, y) + p(x, y) * p(x, y);
    const PipelineInfo info = analyse_pipeline(out, {in});
    SpaceShapes shapes;
    shapes.inputs = {{128, 64}};
    shapes.output = {128, 64};
    const std::vector<Candidate> cs = candidate_space(info, shapes, MachineDesc{}, 8).candidates;
    size_t device = 0;
    for (const Candidate &c : cs)
        for (const Directive &d : c.directives) device += d.kind == Directive::DeviceRoot && d.func == p.name();
    const std::vector<Candidate> all = with_intermediate_layout_variants(cs, info);
    ASSERT_EQ(all.size(), cs.size() + device);
    for (size_t i = cs.size(); i < all.size(); i++) EXPECT_EQ(all[i].summary(), all[i].refines + " p.layout=x,y;sticks>y");
}

// On one core, storing p in its reader's order makes the reader's runs long: the variant is timed
// faster than its base, and computes what the CPU computes.
TEST(AutoIntermediateLayouts, TheReadersOrderIsTimedFasterAndMatchesTheCpu) {
    using namespace autosched;
    const Variants v = variants_of_swapped_reader(1);
    auto it = std::find_if(v.all.begin() + long(v.bases), v.all.end(), [&](const autosched::Candidate &c) {
        return c.choice("p.layout") && c.choice("p.layout")->value == "x,z,y";
    });
    ASSERT_NE(it, v.all.end());
    const Candidate &variant = *it;
    const Candidate *base = nullptr;
    for (size_t i = 0; i < v.bases; i++)
        if (v.all[i].summary() == variant.refines) base = &v.all[i];
    ASSERT_NE(base, nullptr);
    EXPECT_LT(time_candidate(v.k.output, v.k.inputs, variant, v.o), time_candidate(v.k.output, v.k.inputs, *base, v.o))
        << variant.summary();
    const DiffResult d = run_differential(swapped_reader, [&](Kernel &k) {
        std::map<std::string, Func> funcs, input_funcs;
        for (const auto &e : pipeline_env(k.output)) funcs[e.first] = Func(e.second);
        funcs[k.output.name()] = k.output;
        // The variant names Funcs by the first instance's Halide names; this instance's differ.
        std::map<std::string, std::string> rename{{v.k.funcs.at("p").name(), k.funcs.at("p").name()},
                                                  {v.k.output.name(), k.output.name()}};
        std::vector<Directive> ds = variant.directives;
        for (Directive &dd : ds) {
            if (rename.count(dd.func)) dd.func = rename[dd.func];
            if (rename.count(dd.at_func)) dd.at_func = rename[dd.at_func];
        }
        input_funcs[k.inputs[0].name()] = Func(k.inputs[0]);
        apply_directives(ds, funcs, input_funcs, MachineDesc{});
    }, {{128, 64, 16}}, {128, 16, 64});
    EXPECT_EQ(d.cmp.mismatches, 0) << d.cmp.first_mismatch;
}

// With the output's rows {128, 64, 16} fewer than p's {128, 16, 64}, p is split over the cores by
// its own 64 rows (stage_rows), so every candidate runs on the cores it names. A candidate that
// splits p by the output's 16 instead (as the space did before) runs a 4-core share of p on 16:
// the search refuses it under max_cores, naming the limit.
TEST(AutoIntermediateLayouts, AnIntermediateWithMoreRowsThanTheOutputStaysWithinMaxCores) {
    using namespace autosched;
    const Variants v = variants_of_swapped_reader(4, {128, 16, 64}, {128, 64, 16});
    const std::string p = v.k.funcs.at("p").name();
    std::vector<Candidate> by_output_rows;
    int lowered = 0;
    // The one refusal: p kept in LX over the cores, read under out's split with another share.
    RefusalLog refusals({"(by p), but it is read under the ring split loop z of out (its split over cores) with another share"});
    for (const Candidate &c : v.all) {
        ASSERT_NE(c.choice("cores"), nullptr) << c.summary();
        const int named = std::stoi(c.choice("cores")->value);
        try {
            EXPECT_LE(lower_candidate(v.k.output, v.k.inputs, c, v.o, nullptr).num_cores, named) << c.summary();
            lowered++;
        } catch (const std::exception &x) {
            refusals.add(x, c.summary());
        }
        Candidate wrong = c;
        for (Directive &d : wrong.directives)
            if (d.kind == Directive::RingSplit && d.func == p && named == 4 &&
                c.choice("p") && c.choice("p")->value == "device") {
                EXPECT_EQ(d.ints.at(1), 64) << c.summary();
                d.ints[1] = 16;
                by_output_rows.push_back(wrong);
            }
    }
    EXPECT_GT(lowered, 0);
    ASSERT_FALSE(by_output_rows.empty()) << "the space keeps p in device memory over 4 cores somewhere";
    SearchOptions so;
    so.workers = 1;
    so.progress = false;
    so.max_cores = 4;
    const std::string e = error_of([&] { search(v.k.output, v.k.inputs, by_output_rows, v.o, so); });
    EXPECT_NE(e.find("runs on 16 cores, more than the 4 allowed (AutoOptions::max_cores)"), std::string::npos) << e;
    AutoOptions ao;
    ao.progress = false;
    ao.max_cores = 4;
    const DiffResult d = run_differential(swapped_reader, [&](Kernel &k) {
        auto_schedule(k.output, k.inputs, device_layout_options_for({128, 16, 64}, {128, 64, 16}), ao);
    }, {{128, 16, 64}}, {128, 64, 16});
    EXPECT_EQ(d.cmp.mismatches, 0) << d.cmp.first_mismatch;
    EXPECT_LE(d.program.num_cores, 4);
}

// The rows a stage's consumers need: a reader that swaps dims needs the other dim's extent, one
// that reads the previous row too needs one row more, a reduction's producer the RDom's range.
TEST(AutoStageRows, EachStageGetsTheRowsItsConsumersRead) {
    using namespace autosched;
    {
        Kernel k = swapped_reader();
        const auto rows = stage_rows(analyse_pipeline(k.output, k.inputs), {128, 16, 64});
        EXPECT_EQ(rows.at(k.output.name()), 64);
        EXPECT_EQ(rows.at(k.funcs.at("p").name()), 16);
    }
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    RDom r(0, 8, "r");
    Func p("p"), q("q"), acc("acc"), sh("sh"), out("out");
    p(x, y) = in(x, y) * 2;
    sh(x, y) = in(x, y) * 3;
    q(x, y) = in(x, y) + 1;
    acc(x, y) = 0.0f;
    acc(x, y) += cast<float>(q(x, y * 8 + r));
    out(x, y) = p(x, y) + p(x, max(y - 1, 0)) + sh(x, y) - sh(x, y - 1) + cast<float16_t>(acc(x, y));
    const auto rows = stage_rows(analyse_pipeline(out, {in}), {128, 32});
    EXPECT_EQ(rows.at(p.name()), 32);  // max(y - 1, 0) stays inside [0, 31]
    EXPECT_EQ(rows.at(sh.name()), 33);  // rows -1 to 31
    EXPECT_EQ(rows.at(acc.name()), 32);
    EXPECT_EQ(rows.at(q.name()), 256);  // 32 rows of 8
}
