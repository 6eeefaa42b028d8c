// Halide's mirror boundary conditions (mirror_image, mirror_interior) on the stick dimension: the
// index Halide makes of them (a select of the coordinate, a modulo and its reflection, or a shuffle
// at a row's end) becomes a VSHIFT with a mirror edge; on the rows the mirror is a scalar address.
// Checked bit for bit against the CPU at widths that are and are not whole sticks, rows shorter
// than the stencil's reach, reaches beyond a stick, fp16 and fp32, staged by the back end or in LX.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"

namespace spyre::testing {
namespace {

using namespace Halide;

enum class MirrorBoundaryForm {
    Image3,           // mirror_image, taps x-1, x, x+1
    Interior3,        // mirror_interior, the same taps
    Image5,           // mirror_image, taps x-2 .. x+2
    Interior5,        // mirror_interior, taps x-2 .. x+2
    InteriorFar,      // mirror_interior, taps x-70 and x+70 (beyond a stick of fp16)
    ImageBoth,        // mirror_image on both dimensions, taps along x and y
    InteriorRowsOnly,  // mirror_interior on the rows only (no stick-dimension condition)
    InteriorAhead      // mirror_interior, taps x+1 and x+2 only (every lane of a 2-wide row reflects)
};

struct MirrorCase {
    std::string name;
    MirrorBoundaryForm form;
    int cols, rows;
    bool f32 = false;
    bool in_lx = false;  // rows over cores, staged in LX by the schedule; else staged by infer_dma
};
void PrintTo(const MirrorCase &c, std::ostream *os) { *os << c.name; }

Algorithm mirror_alg(const MirrorCase &c) {
    return [=] {
        Kernel k;
        const Type t = c.f32 ? Float(32) : Float(16);
        ImageParam in(t, 2, "in");
        Var x("x"), y("y");
        Func out("out");
        auto h = [&](float v) { return cast(t, v); };
        const Region both = {{0, c.cols}, {0, c.rows}};
        switch (c.form) {
        case MirrorBoundaryForm::Image3: {
            Func b = BoundaryConditions::mirror_image(in, both);
            out(x, y) = (b(x - 1, y) + h(2) * b(x, y) + b(x + 1, y)) * h(0.25f);
            break;
        }
        case MirrorBoundaryForm::Interior3: {
            Func b = BoundaryConditions::mirror_interior(in, both);
            out(x, y) = b(x - 1, y) + b(x, y) + b(x + 1, y);
            break;
        }
        case MirrorBoundaryForm::Image5: {
            Func b = BoundaryConditions::mirror_image(in, {{0, c.cols}, {Expr(), Expr()}});
            out(x, y) = b(x - 2, y) + b(x - 1, y) * h(3) + b(x, y) + b(x + 1, y) * h(0.5f) - b(x + 2, y);
            break;
        }
        case MirrorBoundaryForm::Interior5: {
            Func b = BoundaryConditions::mirror_interior(in, {{0, c.cols}, {Expr(), Expr()}});
            out(x, y) = b(x - 2, y) * h(0.5f) + b(x - 1, y) - b(x, y) + b(x + 1, y) + b(x + 2, y) * h(2);
            break;
        }
        case MirrorBoundaryForm::InteriorFar: {
            Func b = BoundaryConditions::mirror_interior(in, both);
            out(x, y) = b(x - 70, y) - b(x + 70, y) * h(0.5f);
            break;
        }
        case MirrorBoundaryForm::ImageBoth: {
            Func b = BoundaryConditions::mirror_image(in, both);
            out(x, y) = b(x - 1, y) + b(x, y - 1) * h(2) + b(x + 1, y + 1) - b(x, y + 2);
            break;
        }
        case MirrorBoundaryForm::InteriorAhead: {
            Func b = BoundaryConditions::mirror_interior(in);
            out(x, y) = max(b(x + 1, y), b(x + 2, y) * h(5));
            break;
        }
        case MirrorBoundaryForm::InteriorRowsOnly: {
            Func b = BoundaryConditions::mirror_interior(in, {{Expr(), Expr()}, {0, c.rows}});
            out(x, y) = b(x, y - 1) + b(x, y) * h(2) + b(x, y + 1);
            break;
        }
        }
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule mirror_sched(const MirrorCase &c) {
    return [=](Kernel &k) {
        Var x = k.vars.at("x"), y = k.vars.at("y"), yo("yo"), yi("yi");
        SpyreSchedule s = spyre::schedule(k.output);
        if (c.in_lx) {
            int cores = std::min(c.rows, 4);
            s.ring_split(y, cores).split(y, yo, yi, 2).stick_vectorize(x);
            spyre::stage_all_in_lx(k.inputs[0], k.output, yo);
        } else {
            s.stick_vectorize(x);
        }
    };
}

int mirror_boundary_count_op(const DeviceProgram &p, Opcode op, uint8_t mode_bits = 0) {
    int n = 0;
    for (const Instr &in : p.code) n += in.op == op && (!mode_bits || (in.mode & mode_bits));
    return n;
}

class MirrorBoundary : public ::testing::TestWithParam<MirrorCase> {};

TEST_P(MirrorBoundary, MatchesCpuBitExactly) {
    const MirrorCase &c = GetParam();
    DiffResult r = run_differential(mirror_alg(c), mirror_sched(c), {{c.cols, c.rows}}, {c.cols, c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.cmp.max_ulp, 0);
    // Where the stick dimension has a mirror, some shifted read reflects (at least one row's end
    // is inside the vectors Halide did not split off as steady state).
    if (c.form != MirrorBoundaryForm::InteriorRowsOnly && c.cols > 1) {  // one column: every read is that element
        EXPECT_GE(mirror_boundary_count_op(r.program, Opcode::VSHIFT, kEdgeMirrorImage | kEdgeMirrorInterior), 1);
    }
}

// `make test` runs the grid at 3x130 (rows and columns not whole sticks) and 8x1024 (several
// sticks a row), and the short and far cases; CI also runs the grid at 1x100 and 16x64 (sweep = true:
// the `sweep` label, `make sweep`).
std::vector<MirrorCase> mirror_boundary_cases(bool sweep) {
    std::vector<MirrorCase> v;
    struct F {
        MirrorBoundaryForm f;
        const char *n;
    };
    const std::vector<std::pair<int, int>> shapes = {{100, 1}, {130, 3}, {64, 16}, {1024, 8}};
    for (F f : {F{MirrorBoundaryForm::Image3, "image3"}, F{MirrorBoundaryForm::Interior3, "interior3"}, F{MirrorBoundaryForm::Image5, "image5"},
                F{MirrorBoundaryForm::Interior5, "interior5"}, F{MirrorBoundaryForm::ImageBoth, "image_both_dims"},
                F{MirrorBoundaryForm::InteriorRowsOnly, "interior_rows_only"}})
        for (size_t si = 0; si < shapes.size(); si++)
            for (bool f32 : {false, true})
                for (bool lx : {false, true}) {
                    // A mirror on the rows makes the rows a tile of stage_in_lx reads depend on the tile:
                    // refused (MirrorOnRowsStagedInLxNamesTheInput below).
                    const bool rows_mirrored = f.f == MirrorBoundaryForm::ImageBoth || f.f == MirrorBoundaryForm::InteriorRowsOnly;
                    if (rows_mirrored && lx) continue;
                    if (sweep != (si != 1)) continue;  // `make test`: the 130x3 rows; the sweep the rest
                    const auto [cols, rows] = shapes[si];
                    v.push_back({std::string(f.n) + "_" + std::to_string(rows) + "x" + std::to_string(cols) +
                                     (f32 ? "_f32" : "_f16") + (lx ? "_lx" : "_staged"),
                                 f.f, cols, rows, f32, lx});
                }
    if (sweep) return v;
    // Rows shorter than the reach (the position reflects more than once) and reaches beyond a stick.
    for (auto [cols, rows] : std::vector<std::pair<int, int>>{{1, 2}, {1, 5}, {3, 2}, {5, 1}, {5, 3}}) {
        v.push_back({"image5_short_row_" + std::to_string(rows) + "x" + std::to_string(cols), MirrorBoundaryForm::Image5, cols, rows});
        if (cols != 3)
            v.push_back({"interior5_short_row_" + std::to_string(rows) + "x" + std::to_string(cols), MirrorBoundaryForm::Interior5,
                         cols, rows});
    }
    for (auto [cols, rows] : std::vector<std::pair<int, int>>{{100, 2}, {200, 3}, {1024, 2}})
        for (bool f32 : {false, true})
            v.push_back({"interior_far_" + std::to_string(rows) + "x" + std::to_string(cols) + (f32 ? "_f32" : "_f16"),
                         MirrorBoundaryForm::InteriorFar, cols, rows, f32});
    return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, MirrorBoundary, ::testing::ValuesIn(mirror_boundary_cases(false)),
                         [](const ::testing::TestParamInfo<MirrorCase> &i) { return i.param.name; });
INSTANTIATE_TEST_SUITE_P(Sweep, MirrorBoundary, ::testing::ValuesIn(mirror_boundary_cases(true)),
                         [](const ::testing::TestParamInfo<MirrorCase> &i) { return i.param.name; });

// Rows of two read at x - 2 and x + 2 (and rows of three under mirror_interior): every lane of a
// vector folds onto one element, a load Halide 14's flatten_nested_ramps divided by zero on (the
// process died of SIGFPE) until broadcast_uniform_loads made it a broadcast. Each case now has one
// expected outcome: it matches the CPU bit for bit (`refusal` empty), or the compiler refuses it
// with a spyre::Error of kind Refused whose message holds `refusal`.
struct ShortRowsCase {
    MirrorCase c;
    std::string refusal;  // a part of the expected refusal's message; empty: it must compile and match
};
void PrintTo(const ShortRowsCase &s, std::ostream *os) { *os << s.c.name; }

class MirrorShortRows : public ::testing::TestWithParam<ShortRowsCase> {};

// The two refusals these shapes meet (as of 26be57a): a folded read that does not start on a stick
// boundary, and the interleaving of even and odd lanes Halide makes of the reflection (a select on
// x % 2) over reads that are not at offsets along the stick.
const char *const kNotAStickBoundary = "Func out: access to in does not start on a stick boundary";
const char *const kInterleaving = "Func out: stick_vectorize: an interleaving of even and odd lanes";

TEST_P(MirrorShortRows, MatchTheCpuOrAreRefusedAsExpected) {
    const MirrorCase &c = GetParam().c;
    const std::string &refusal = GetParam().refusal;
    try {
        DiffResult r = run_differential(mirror_alg(c), mirror_sched(c), {{c.cols, c.rows}}, {c.cols, c.rows});
        EXPECT_TRUE(refusal.empty()) << "compiled and ran; expected the refusal '" << refusal << "'";
        EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    } catch (const Error &e) {
        EXPECT_FALSE(refusal.empty()) << "refused; expected a match with the CPU: " << e.what();
        EXPECT_EQ(e.kind(), ErrorKind::Refused) << e.what();
        EXPECT_NE(std::string(e.what()).find(refusal), std::string::npos) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MirrorShortRows,
    ::testing::Values(ShortRowsCase{{"image5_2x2", MirrorBoundaryForm::Image5, 2, 2}, kNotAStickBoundary},
                      ShortRowsCase{{"interior5_2x2", MirrorBoundaryForm::Interior5, 2, 2}, kInterleaving},
                      ShortRowsCase{{"interior5_3x3", MirrorBoundaryForm::Interior5, 3, 3}, kNotAStickBoundary},
                      ShortRowsCase{{"image3_2x5_f32", MirrorBoundaryForm::Image3, 2, 5, true}, kInterleaving},
                      ShortRowsCase{{"interior_ahead_16x2_lx", MirrorBoundaryForm::InteriorAhead, 2, 16, false, true}, ""},
                      ShortRowsCase{{"interior_ahead_16x2_f32_lx", MirrorBoundaryForm::InteriorAhead, 2, 16, true, true}, ""},
                      ShortRowsCase{{"interior_ahead_16x2", MirrorBoundaryForm::InteriorAhead, 2, 16}, ""},
                      ShortRowsCase{{"interior_ahead_16x3_lx", MirrorBoundaryForm::InteriorAhead, 3, 16, false, true}, kInterleaving}),
    [](const ::testing::TestParamInfo<ShortRowsCase> &i) { return i.param.c.name; });

TEST(MirrorBoundaryInLx, BoundaryFuncKeptInLxPerCoreMatchesCpu) {
    for (Type t : {Int(32), Float(16), Float(32)}) {
        Algorithm alg = [=] {
            Kernel k;
            ImageParam in(t, 2, "in0");
            Var x("x"), y("y");
            Func e = BoundaryConditions::mirror_interior(in);
            Func out("out");
            out(x, y) = max(e(x + 1, y), e(x + 2, y) * cast(t, 5));
            k.inputs = {in};
            k.output = out;
            k.vars = {{"x", x}, {"y", y}};
            k.funcs = {{"e", e}};
            return k;
        };
        Schedule sched = [](Kernel &k) {
            Var x = k.vars.at("x"), y = k.vars.at("y"), y_core("y_core");
            spyre::schedule(k.output).ring_split(y, 16).stick_vectorize(x);
            spyre::schedule(k.funcs.at("e")).scratchpad_store_at(k.output, y_core).stick_vectorize(k.funcs.at("e").args()[0]);
            spyre::stage_all_in_lx(k.inputs[0], k.output, y_core);
        };
        DiffResult r = run_differential(alg, sched, {{2, 16}}, {2, 16});
        EXPECT_EQ(r.cmp.mismatches, 0) << t << ": " << r.cmp.first_mismatch;
    }
}

TEST(MirrorBoundaryErrors, MirrorOnRowsStagedInLxNamesTheInput) {
    MirrorCase c{"rows_lx", MirrorBoundaryForm::InteriorRowsOnly, 130, 8, false, true};
    Kernel k = mirror_alg(c)();
    mirror_sched(c)(k);
    CompileOptions opt;
    opt.kernel_name = "rows_lx";
    opt.inputs.push_back(TensorSpec{{130, 8}, {}});
    opt.output.shape = {130, 8};
    try {
        compile_for_spyre(k.output, k.inputs, opt);
        FAIL() << "no error";
    } catch (const Error &e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("the LX copy of in (stage_in_lx)"), std::string::npos) << msg;
        EXPECT_NE(msg.find("mirror_image or mirror_interior on the rows"), std::string::npos) << msg;
        EXPECT_EQ(msg.find("select("), std::string::npos) << msg;  // no IR text
        EXPECT_EQ(msg.find("$"), std::string::npos) << msg;
    }
}

}  // namespace
}  // namespace spyre::testing
