// Error messages in the user's terms (backend/compiler/user_terms.h): the names Halide and the
// directives make are rewritten into what the user wrote, and a message that still carries one is
// caught (compiler_test_util's error_of checks every error the compiler tests provoke).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "user_terms.h"

namespace spyre {
namespace {

TEST(UserTerms, AnImageParamsWrapperIsItsInCall) {
    EXPECT_EQ(in_user_terms("Func a_im$9_global_wrapper$0: no stick"), "Func a.in(): no stick");
    EXPECT_EQ(in_user_terms("reads a_im$9 twice"), "reads a twice");
    // The first ImageParam of its name in a process has no copy number: its wrapper is still a.in().
    EXPECT_EQ(in_user_terms("Func w_im_global_wrapper: no stick"), "Func w.in(): no stick");
}

TEST(UserTerms, AFuncCopyIsItsName) { EXPECT_EQ(in_user_terms("Func acc$5 is in LX"), "Func acc is in LX"); }

// normalize_stmt names a Func's second allocation (a split's tail) sum$part<n>.
TEST(UserTerms, ASecondAllocationIsItsFunc) {
    EXPECT_EQ(in_user_terms("buffer sum$part3 overflows LX"), "buffer sum overflows LX");
    EXPECT_EQ(in_user_terms("Func acc$2$part4 is"), "Func acc is");
}

TEST(UserTerms, AnRVarInFreeTextIsItsRDomsDimension) {
    EXPECT_EQ(in_user_terms("  p.compute_at(sum, r$x);"), "  p.compute_at(sum, r.x);");
}

TEST(UserTerms, ALoopNamesItsVarItsFuncAndItsDirective) {
    EXPECT_EQ(in_user_terms("at gemv$1.s0.n.n_core: uneven"), "at loop n of gemv (its split over cores): uneven");
    EXPECT_EQ(in_user_terms("loop f.s1.r$x.r$x_in_pe"), "loop loop r.x of f's update 1 (its PE loop)");
    EXPECT_EQ(in_user_terms("out.s0.y.yo"), "loop yo of out");
}

TEST(UserTerms, ARingShareLoopIsTheUsersLoop) {
    EXPECT_EQ(in_user_terms("ring_share on acc.s1.ko_share8: x"), "ring_share on loop ko of acc's update 1 (its ring share): x");
}

TEST(UserTerms, ACountOfOneIsSingular) {
    EXPECT_EQ(in_user_terms("a tile of 1 columns has"), "a tile of 1 column has");
    EXPECT_EQ(in_user_terms("a tile of 11 columns has"), "a tile of 11 columns has");
}

TEST(UserTerms, UserNamesAndNumbersAreLeftAlone) {
    const std::string msg = "Func 'diff' reads input 'in' over [-1, 4096] in dimension 0 (1.5 GB/s)";
    EXPECT_EQ(in_user_terms(msg), msg);
    EXPECT_EQ(generated_name_in(msg), "");
}

TEST(UserTerms, AStagingCopyIsTheLxCopyOfItsBuffer) {
    EXPECT_EQ(in_user_terms("live there: out.lx0 (128 bytes)"), "live there: the LX copy of out (128 bytes)");
}

TEST(UserTerms, ATupleElementIsItsFuncIndexed) {
    EXPECT_EQ(in_user_terms("a value read from state.1 is used"), "a value read from state[1] is used");
    EXPECT_EQ(in_user_terms("top1$2.0 overflows"), "top1[0] overflows");
    EXPECT_EQ(in_user_terms("at 1.5 GB/s over r.x"), "at 1.5 GB/s over r.x");
}

TEST(UserTerms, HalidesListOfLoopsNamesTheUsersLoopsOnly) {
    EXPECT_EQ(in_user_terms("could not find x\nVars: x.xi x.xo y __outermost\n"), "could not find x\nits loops: xi, xo, y\n");
    EXPECT_EQ(in_user_terms("p.compute_at(out, __outermost)"), "p.compute_at(out, Var::outermost())");
    EXPECT_EQ(in_user_terms("for out.s0.__outermost:"), "for loop Var::outermost() of out:");
}

TEST(UserTerms, AnInputsWrapperForOneConsumerIsItsInCall) {
    EXPECT_EQ(in_user_terms("live there: in_im$3_in_out (64 bytes)"), "live there: in.in(out) (64 bytes)");
}

TEST(UserTerms, AVectorsLanesLoopIsTheLoopTheyWereSplitFrom) {
    EXPECT_EQ(in_user_terms("for out.s0.x.x_lanes:"), "for loop x of out (its vector lanes):");
    // Halide's own vectorize(x, 8) names the lanes v<n>.
    EXPECT_EQ(in_user_terms("for out.s0.x.v37:"), "for loop x of out (the lanes Halide split from it):");
}

TEST(UserTerms, ABoundaryConditionsFuncIsTheConditionOfItsInput) {
    const std::map<std::string, std::string> made = {{"repeat_edge$2", "the repeat_edge boundary condition of input 'in'"},
                                                     {"lambda_0", "the Func a boundary condition wraps input 'in' in"}};
    EXPECT_EQ(in_user_terms("Func repeat_edge$2: no stick", &made), "the repeat_edge boundary condition of input 'in': no stick");
    EXPECT_EQ(in_user_terms("In schedule for repeat_edge$2, could not", &made),
              "In schedule for the repeat_edge boundary condition of input 'in', could not");
    EXPECT_EQ(in_user_terms("for repeat_edge$2.s0._0:", &made), "for loop _0 of the repeat_edge boundary condition of input 'in':");
    EXPECT_EQ(in_user_terms("reads lambda_0 across", &made), "reads the Func a boundary condition wraps input 'in' in across");
    // The conditions named as words of advice stay words.
    const std::string advice = "Add one (Halide::BoundaryConditions::repeat_edge, constant_exterior, mirror_image, ...)";
    EXPECT_EQ(in_user_terms(advice, &made), advice);
}

TEST(UserTerms, GeneratedNamesAreFound) {
    EXPECT_EQ(generated_name_in("Func acc$5 is"), "acc$5");
    EXPECT_EQ(generated_name_in("x a_global_wrapper y"), "a_global_wrapper");
    EXPECT_EQ(generated_name_in("at gemv.s0.n.n_core"), "gemv.s0.n.n_core");
    EXPECT_EQ(generated_name_in("buffer sum$part3 overflows"), "sum$part3");
    EXPECT_EQ(generated_name_in("RVar r$x of"), "r$x");
    EXPECT_EQ(generated_name_in(in_user_terms("at gemv$1.s0.n.n_core, a_im$9_global_wrapper$0")), "");
    EXPECT_EQ(generated_name_in("rows cores=2 lambda_0:inline"), "lambda_0");
    EXPECT_EQ(generated_name_in("Vars: x y __outermost"), "__outermost");
    EXPECT_EQ(generated_name_in("live there: alibi.lx2 (128 bytes)"), "alibi.lx2");
    EXPECT_EQ(generated_name_in("costs $5"), "$");
    EXPECT_EQ(generated_name_in("host buffer has type 2/32 bits"), "2/32 bits");
    EXPECT_EQ(generated_name_in("Func repeat_edge: no stick"), "Func repeat_edge");
    EXPECT_EQ(generated_name_in("rows cores=1 repeat_edge:tile"), "repeat_edge:");
    EXPECT_EQ(generated_name_in("rows cores=1 repeat_edge(in):tile; Add one (BoundaryConditions::repeat_edge, ...)"), "");
}

// Given the names the user declared, the names Halide makes up are found too, and the user's own
// names are not, whatever they look like.
TEST(UserTerms, MadeUpNamesAreFoundAgainstTheDeclaredOnes) {
    const std::set<std::string> declared = {"x", "y", "out", "top1", "v2", "x2", "lambda_1"};
    EXPECT_EQ(generated_name_in("for loop v37 of out", &declared), "v37");
    EXPECT_EQ(generated_name_in("a value read from top1.0", &declared), "top1.0");
    EXPECT_EQ(generated_name_in("for loop v2 of out, x2 and lambda_1 at 1.5 GB/s", &declared), "");
}

}  // namespace
}  // namespace spyre
