// Error messages in the user's terms. Halide and our directives name what they make: an
// ImageParam's own Func ("in_im$3"), wrappers ("in_im$3_global_wrapper$0", what stage_in_lx
// makes), copies ("acc$5"), and loops ("gemv$1.s0.n.n_core", a stage's loop over its split).
// A user wrote "in", "in.in()", "acc" and "ring_split(n, ...) on gemv"; the compiler's messages
// reach them in those words. The wording lives here alone, and every message that leaves the
// compiler passes through it (compile_kernel.cpp).
#pragma once

#include <map>
#include <set>
#include <string>

namespace spyre {

// `message` with every compiler-made name rewritten into the name the user wrote:
//   a_im$9_global_wrapper$0 -> a.in()        acc$5 -> acc
//   gemv$1.s0.n.n_core      -> loop n of gemv (its split over cores)
//   f.s1.r.r_in_pe          -> loop r of f's update 1 (its PE loop)
//   in.lx2 -> the LX copy of in    state.1 -> state[1]    in_im$3_in_out -> in.in(out)
//   Vars: x.xi y __outermost -> its loops: xi, y          __outermost -> Var::outermost()
// `made`: the Funcs Halide made for the user's boundary conditions (boundary_condition_names.h),
// by Halide name, each with the phrase that stands for "Func <name>".
std::string in_user_terms(const std::string &message, const std::map<std::string, std::string> *made = nullptr);

// The Func a loop name belongs to: "out" of "out.s0.y.yo".
inline std::string func_of_loop(const std::string &loop) {
    size_t p = loop.find(".s");
    return p == std::string::npos ? loop : loop.substr(0, p);
}

// The first compiler-made name left in `message` ("" when none): a '$' anywhere (Halide's
// separator in copies and RVars), a wrapper, a stage's loop name, Halide's boundary-condition
// Funcs (lambda_0), Var::outermost() (__outermost), a staging copy of a buffer (in.lx2) or a raw
// type code (2/32 bits). Tests use it on every error they provoke.
// `declared`, when given, holds every name the user gave a Func, Var, RDom or ImageParam: then a
// name Halide makes up for an unnamed Var (v37) is found too unless the user
// chose it, and so is a Tuple component of a declared Func (top.0).
std::string generated_name_in(const std::string &message, const std::set<std::string> *declared = nullptr);

}  // namespace spyre
