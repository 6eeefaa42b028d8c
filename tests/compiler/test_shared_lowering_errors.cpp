// The errors of the shared lowerings the autoscheduler uses (capture_kernel / finish_kernel in
// backend/compiler/compile_kernel.h, and the Param<int> forms of split and ring_split): each names
// the kernel, the factor or the Func and directive.
#include <gtest/gtest.h>

#include "compile_kernel.h"
#include "compiler_test_util.h"
#include "device/error.h"
#include "directives.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct Doubling {
    ImageParam in{Float(16), 2, "dbl_in"};
    Func out{"dbl_out"};
    Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
    Param<int> tile{"tile"};
    Doubling() { out(x, y) = in(x, y) * Halide::float16_t(2.0f); }
    CompileOptions options() const {
        CompileOptions o;
        o.kernel_name = "doubling";
        o.inputs = {TensorSpec{{128, 64}, {}}};
        o.output = TensorSpec{{128, 64}, {}};
        return o;
    }
};

TEST(SharedLowering, AFactorWithoutAValueIsNamed) {
    Doubling k;
    schedule(k.out).split(k.y, k.yo, k.yi, k.tile).stick_vectorize(k.x);
    const CompileOptions o = k.options();
    CapturedKernel c = capture_kernel(k.out, {k.in}, kernel_signature(k.out, {k.in}, o), o.machine, {},
                                      {Argument(k.tile.name(), Argument::InputScalar, Int(32), 0, ArgumentEstimates{})});
    EXPECT_NO_THROW(finish_kernel(c, {{"tile", 8}}));
    EXPECT_NE(error_of([&] { finish_kernel(c, {}); }).find("kernel doubling: internal: schedule factor 'tile' has no value"),
              std::string::npos);
}

TEST(SharedLowering, AFactorThatIsNotAnInt32ScalarIsNamed) {
    Doubling k;
    schedule(k.out).stick_vectorize(k.x);
    const CompileOptions o = k.options();
    const std::string e = error_of([&] {
        capture_kernel(k.out, {k.in}, kernel_signature(k.out, {k.in}, o), o.machine, {},
                       {Argument("scale", Argument::InputScalar, Float(32), 0, ArgumentEstimates{})});
    });
    EXPECT_NE(e.find("kernel doubling: internal: schedule factor 'scale' is not an int32 scalar"), std::string::npos) << e;
}

TEST(SharedLowering, RingSplitOfAVarThatIsNotTheFuncsNamesIt) {
    Doubling k;
    Var z("z");
    Param<int> cores("cores");
    const std::string with_param = error_of([&] { schedule(k.out).ring_split(z, cores, 0); });
    EXPECT_NE(with_param.find("Func dbl_out: ring_split(z): not a pure dimension of the Func"), std::string::npos)
        << with_param;
    const std::string with_int = error_of([&] { schedule(k.out).ring_split(z, 4); });
    EXPECT_NE(with_int.find("Func dbl_out: ring_split(z): not a pure dimension of the Func"), std::string::npos)
        << with_int;
}

}  // namespace
}  // namespace spyre::testing
