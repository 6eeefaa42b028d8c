#include "random_pipeline.h"

#include <functional>
#include <sstream>

namespace spyre::fuzzdiff {

using namespace Halide;

namespace {

// A Halide expression with its C++ text.
struct Val {
    Expr e;
    std::string s;
};

std::string type_cpp(Type t) {
    if (t.is_float()) return "Float(" + std::to_string(t.bits()) + ")";
    return "Int(" + std::to_string(t.bits()) + ")";
}

// A float literal's digits as C++ wants them before an f suffix ("2.0", not "2").
std::string num(double v) {
    std::ostringstream os;
    os << v;
    std::string s = os.str();
    return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
}

Val cast_to(Type t, const Val &v) {
    if (v.e.type() == t) return v;
    return {cast(t, v.e), "cast(" + type_cpp(t) + ", " + v.s + ")"};
}

// The builder of one pipeline: the case's random generator, the pipeline so far, and its shape.
struct Builder {
    std::mt19937 &rng;
    Pipe &p;
    Var x{"x"}, y{"y"};
    int cols = 64, rows = 4;
    Type t = Float(16);  // the type the stages compute in

    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }
    bool chance(int percent) { return pick(100) < percent; }
    template <typename T>
    const T &one_of(const std::vector<T> &v) { return v[size_t(pick(int(v.size())))]; }
    void line(const std::string &s) { p.cpp += s + "\n"; }

    ImageParam input(Type type, std::vector<int> shape, int lo, int hi) {
        std::string name = "in" + std::to_string(p.inputs.size());
        ImageParam in(type, int(shape.size()), name);
        p.inputs.push_back(in);
        p.specs.push_back({name, type, shape, lo, hi});
        std::string dims;
        for (int s : shape) dims += (dims.empty() ? "" : " x ") + std::to_string(s);
        line("ImageParam " + name + "(" + type_cpp(type) + ", " + std::to_string(shape.size()) + ", \"" + name +
             "\");  // " + dims);
        return in;
    }
    // An input of the full (cols, rows) shape, of the compute type or (mixed) one it widens from.
    ImageParam full_input(bool mixed) {
        Type it = t;
        if (mixed) {
            if (t == Float(32)) it = one_of<Type>({Float(16), Int(8), Int(32)});
            else if (t == Float(16)) it = one_of<Type>({Int(8), Int(32), Float(32)});
            else it = one_of<Type>({Int(8), Float(16)});
        }
        if (it.is_int() && it.bits() == 8) return input(it, {cols, rows}, -128, 127);
        if (it.is_int()) return input(it, {cols, rows}, -8, 8);
        return input(it, {cols, rows}, -3, 3);
    }
    Val at(const ImageParam &in, const std::string &xs = "x", const std::string &ys = "y") {
        return {in(x, y), in.name() + "(" + xs + ", " + ys + ")"};
    }
    Val at(const Func &f, const std::string &name) { return {f(x, y), name + "(x, y)"}; }

    Func stage(const std::string &name, const std::vector<Var> &vars, bool update = false) {
        Func f(name);
        p.stages.push_back({f, vars, update});
        return f;
    }
    void declare(const std::vector<std::string> &funcs) {
        std::string s = "Func";
        for (size_t i = 0; i < funcs.size(); i++) s += (i ? ", " : " ") + funcs[i] + "(\"" + funcs[i] + "\")";
        line(s + ";");
    }

    Val constant(Type type) {
        if (type.is_float()) {
            float v = one_of<float>({0.5f, 1.5f, -2.0f, 3.0f, 0.25f});
            return {cast(type, v), "cast(" + type_cpp(type) + ", " + num(v) + "f)"};
        }
        int v = one_of<int>({1, 2, -3, 5});
        return {cast(type, v), "cast(" + type_cpp(type) + ", " + std::to_string(v) + ")"};
    }

    Val binary(const std::string &op, const Val &a, const Val &b) {
        if (op == "+") return {a.e + b.e, "(" + a.s + " + " + b.s + ")"};
        if (op == "-") return {a.e - b.e, "(" + a.s + " - " + b.s + ")"};
        if (op == "*") return {a.e * b.e, "(" + a.s + " * " + b.s + ")"};
        if (op == "max") return {max(a.e, b.e), "max(" + a.s + ", " + b.s + ")"};
        return {min(a.e, b.e), "min(" + a.s + ", " + b.s + ")"};
    }
    Val combine(const Val &a, const Val &b) { return binary(one_of<std::string>({"+", "-", "*", "max", "min"}), a, b); }

    // A select whose condition is on the coordinates only: a column or row bound, the lower
    // triangle, or even columns (the forms docs/directives.md names).
    Val coordinate_select(const Val &a, const Val &b) {
        int k = pick(4);
        if (k == 0) {
            int c = 1 + pick(std::max(1, cols - 1));
            return {select(x < c, a.e, b.e), "select(x < " + std::to_string(c) + ", " + a.s + ", " + b.s + ")"};
        }
        if (k == 1) {
            int c = pick(std::max(1, rows));
            return {select(y >= c, a.e, b.e), "select(y >= " + std::to_string(c) + ", " + a.s + ", " + b.s + ")"};
        }
        if (k == 2) return {select(x <= y, a.e, b.e), "select(x <= y, " + a.s + ", " + b.s + ")"};
        return {select(x % 2 == 0, a.e, b.e), "select(x % 2 == 0, " + a.s + ", " + b.s + ")"};
    }

    // A random expression of type `type` over `leaves` (each cast to `type`). Selects on the
    // coordinates only where the expression is over (x, y).
    Val expr(int depth, Type type, const std::vector<Val> &leaves, bool two_d = true) {
        if (depth == 0 || chance(20)) {
            if (leaves.empty() || chance(15)) return constant(type);
            return cast_to(type, one_of(leaves));
        }
        int k = pick(100);
        if (k < 8) return negate(expr(depth - 1, type, leaves, two_d));
        if (k < 16) {
            Val a = expr(depth - 1, type, leaves, two_d);
            return {cast(type, abs(a.e)), "cast(" + type_cpp(type) + ", abs(" + a.s + "))"};
        }
        // Operands drawn in order, so that a seed means the same case whatever the compiler.
        Val a = expr(depth - 1, type, leaves, two_d);
        Val b = expr(depth - 1, type, leaves, two_d);
        if (k < 24 && two_d) return coordinate_select(a, b);
        return combine(a, b);
    }
    Val negate(const Val &a) { return {-a.e, "-" + a.s}; }

    // An expression that surely reads `must` (at the root), combined with a random one over `leaves`.
    Val reading(const Val &must, const std::vector<Val> &leaves, bool two_d = true) {
        if (chance(20)) return cast_to(t, must);
        return combine(cast_to(t, must), expr(1 + pick(2), t, leaves, two_d));
    }

    // The last step of an output's value: maybe a transcendental op (floats), maybe a conversion to
    // another type (a widening, a narrowing, or the quantize pattern of docs/directives.md).
    Val finish(const Val &v, bool mixed) {
        Val r = v;
        bool transcendental = false;
        if (t.is_float() && chance(15)) {
            transcendental = true;
            p.transcendental = true;
            if (chance(50)) r = {exp(r.e), "exp(" + r.s + ")"};
            else r = {tanh(r.e), "tanh(" + r.s + ")"};
        }
        if (mixed && !transcendental && chance(50)) {  // no conversion widens exp's ULPs
            int k = pick(3);
            if (k == 0 && t == Float(16)) return cast_to(Float(32), r);
            if (k == 0 && t != Float(16)) return cast_to(Float(16), r);
            Expr q = t.is_float() ? clamp(round(r.e), -128, 127) : clamp(r.e, -128, 127);
            std::string qs = t.is_float() ? "clamp(round(" + r.s + "), -128, 127)" : "clamp(" + r.s + ", -128, 127)";
            if (k == 1) return {cast(Int(8), q), "cast(Int(8), " + qs + ")"};
            if (!t.is_float()) return cast_to(Int(32), r);
            // Halide leaves a float out of int32's range undefined (LLVM's fptosi): the CPU gives
            // INT_MIN for an fp16 inf, the device saturates (seed 90 case 43). Clamped into range.
            const std::string lim = t == Float(16) ? "65504.0f" : "2147483520.0f";
            const Expr l = t == Float(16) ? 65504.0f : 2147483520.0f;
            return cast_to(Int(32), Val{clamp(round(r.e), cast(t, -l), cast(t, l)),
                                        "clamp(round(" + r.s + "), cast(" + (t == Float(16) ? "Float(16)" : "Float(32)") +
                                            ", -" + lim + "), cast(" + (t == Float(16) ? "Float(16)" : "Float(32)") + ", " +
                                            lim + "))"});
        }
        return r;
    }

    void output2d(const Func &out) {
        p.outputs = {out};
        p.out_vars = {x, y};
        p.out_shape = {cols, rows};
    }

    // Leaves over (x, y): the inputs, or a pointwise stage p over them.
    std::vector<Val> pointwise_leaves(int inputs, bool mixed, bool allow_stage) {
        std::vector<Val> in;
        for (int i = 0; i < inputs; i++) in.push_back(at(full_input(mixed)));
        if (!allow_stage || chance(40)) return in;
        declare({"p"});
        Func f = stage("p", {x, y});
        Val v = expr(1 + pick(3), t, in);
        f(x, y) = v.e;
        line("p(x, y) = " + v.s + ";");
        std::vector<Val> leaves = {at(f, "p"), at(f, "p")};  // p at least as likely as an input
        for (const Val &i : in) leaves.push_back(i);
        return leaves;
    }

    void pointwise(bool mixed) {
        std::vector<Val> leaves = pointwise_leaves(1 + pick(2), mixed, true);
        declare({"out"});
        Func out("out");
        Val v = finish(expr(1 + pick(3), t, leaves), mixed);
        out(x, y) = v.e;
        line("out(x, y) = " + v.s + ";");
        output2d(out);
    }

    void multi_consumer() {
        std::vector<Val> in = {at(full_input(false))};
        declare({"p", "c1", "c2", "out"});
        Func pf = stage("p", {x, y});
        Val pv = expr(1 + pick(2), t, in);
        pf(x, y) = pv.e;
        line("p(x, y) = " + pv.s + ";");
        Val pa = at(pf, "p");
        Func c1 = stage("c1", {x, y});
        Val v1 = reading(pa, in);
        c1(x, y) = v1.e;
        line("c1(x, y) = " + v1.s + ";");
        Func out("out");
        Val second;
        if (chance(50)) {
            Func c2 = stage("c2", {x, y});
            Val v2 = reading(pa, {pa});
            c2(x, y) = v2.e;
            line("c2(x, y) = " + v2.s + ";");
            second = at(c2, "c2");
        } else {  // the second consumer a row reduction of p
            RDom r(0, cols, "r");
            Func c2 = stage("c2", {y});
            Expr red = t.is_float() ? maximum(pf(r, y)) : sum(pf(r, y));
            c2(y) = red;
            line("RDom r(0, " + std::to_string(cols) + ", \"r\");");
            line(std::string("c2(y) = ") + (t.is_float() ? "maximum" : "sum") + "(p(r, y));");
            second = {c2(y), "c2(y)"};
        }
        Val v = finish(combine(at(c1, "c1"), second), false);
        out(x, y) = v.e;
        line("out(x, y) = " + v.s + ";");
        output2d(out);
    }

    void multi_output() {
        std::vector<Val> in = {at(full_input(false))};
        declare({"p", "out0", "out1"});
        Func pf = stage("p", {x, y});
        Val pv = expr(1 + pick(2), t, in);
        pf(x, y) = pv.e;
        line("p(x, y) = " + pv.s + ";");
        Func o0("out0"), o1("out1");
        Val v0 = reading(at(pf, "p"), in), v1 = reading(at(pf, "p"), {});
        o0(x, y) = v0.e;
        o1(x, y) = v1.e;
        line("out0(x, y) = " + v0.s + ";");
        line("out1(x, y) = " + v1.s + ";  // Pipeline({out0, out1})");
        output2d(o0);
        p.outputs.push_back(o1);
    }

    // s(x, y) = init; then s reads its own previous column (along x) or row (along y).
    void scan(bool along_x) {
        std::vector<Val> in = {at(full_input(false))};
        Func out("out");
        bool as_stage = chance(50);
        declare(as_stage ? std::vector<std::string>{"s", "out"} : std::vector<std::string>{"out"});
        std::string sn = as_stage ? "s" : "out";
        Func s = as_stage ? stage("s", {x, y}, true) : out;
        Val init = expr(pick(2), t, in);
        s(x, y) = init.e;
        line(sn + "(x, y) = " + init.s + ";");
        const int n = along_x ? cols : rows;
        RDom r(1, n - 1, "r");
        line("RDom r(1, " + std::to_string(n - 1) + ", \"r\");");
        Expr prev = along_x ? s(r - 1, y) : s(x, r - 1);
        Expr cur = along_x ? p.inputs[0](r, y) : p.inputs[0](x, r);
        std::string ps = along_x ? sn + "(r - 1, y)" : sn + "(x, r - 1)";
        std::string cs = along_x ? "in0(r, y)" : "in0(x, r)";
        std::string lhs = along_x ? sn + "(r, y)" : sn + "(x, r)";
        Expr value;
        std::string vs;
        int k = pick(t.is_float() ? 3 : 2);
        if (k == 0) value = prev + cur, vs = ps + " + " + cs;
        else if (k == 1) value = max(prev, cur), vs = "max(" + ps + ", " + cs + ")";
        else value = prev * cast(t, 0.5f) + cur, vs = ps + " * cast(" + type_cpp(t) + ", 0.5f) + " + cs;
        if (along_x) s(r, y) = value;
        else s(x, r) = value;
        line(lhs + " = " + vs + ";");
        if (as_stage) {
            Val v = finish(reading(at(s, "s"), in), false);
            out(x, y) = v.e;
            line("out(x, y) = " + v.s + ";");
        }
        output2d(out);
    }

    // A pointwise stage (or an input) that reductions read, as a Func of (x, y).
    Func reduced_source(std::string &name) {
        std::vector<Val> in = {at(full_input(false))};
        if (chance(30)) {
            name = "in0";  // the reductions read the input itself
            return Func();
        }
        name = "p";
        declare({"p"});
        Func f = stage("p", {x, y});
        Val v = expr(1 + pick(2), t, in);
        f(x, y) = v.e;
        line("p(x, y) = " + v.s + ";");
        return f;
    }

    // An inline reduction of `e` over `r`: sum (in fp32 for fp16 data, mostly, as users write
    // it; else in the data's own type), maximum or minimum.
    Val reduce(const Val &v, Type &result) {
        int k = pick(4);
        result = t;
        if (k == 0) return {maximum(v.e), "maximum(" + v.s + ")"};
        if (k == 1) return {minimum(v.e), "minimum(" + v.s + ")"};
        if (t == Float(16) && chance(75)) {
            result = Float(32);
            return {sum(cast<float>(v.e)), "sum(cast<float>(" + v.s + "))"};
        }
        return {sum(v.e), "sum(" + v.s + ")"};
    }

    Expr call(const Func &f, const std::string &name, Expr a, Expr b, const std::string &as, const std::string &bs,
              std::string &s) {
        s = name + "(" + as + ", " + bs + ")";
        return name == "in0" ? Expr(p.inputs[0](a, b)) : Expr(f(a, b));
    }

    void reduce_1d() {
        std::string src;
        Func f = reduced_source(src);
        Func out("out");
        declare({"out"});
        Type rt;
        std::string s;
        if (chance(50)) {  // over x, into out(y)
            RDom r(0, cols, "r");
            line("RDom r(0, " + std::to_string(cols) + ", \"r\");");
            Expr e = call(f, src, r, y, "r", "y", s);
            Val v = reduce({e, s}, rt);
            out(y) = v.e;
            line("out(y) = " + v.s + ";");
            p.out_vars = {y};
            p.out_shape = {rows};
        } else {  // over y, into out(x): inline or through an explicit accumulator
            RDom r(0, rows, "r");
            line("RDom r(0, " + std::to_string(rows) + ", \"r\");");
            Expr e = call(f, src, x, r, "x", "r", s);
            if (chance(50)) {
                Val v = reduce({e, s}, rt);
                out(x) = v.e;
                line("out(x) = " + v.s + ";");
            } else {
                declare({"acc"});
                Func acc = stage("acc", {x}, true);
                bool widen = t == Float(16) && chance(70);
                Type acc_t = widen ? Float(32) : t;
                if (chance(50)) {
                    acc(x) = cast(acc_t, 0);
                    acc(x) += cast(acc_t, e);
                    line("acc(x) = cast(" + type_cpp(acc_t) + ", 0);");
                    line("acc(x) += cast(" + type_cpp(acc_t) + ", " + s + ");");
                } else {
                    acc(x) = acc_t.min();
                    acc(x) = max(acc(x), cast(acc_t, e));
                    line("acc(x) = " + type_cpp(acc_t) + ".min();");
                    line("acc(x) = max(acc(x), cast(" + type_cpp(acc_t) + ", " + s + "));");
                }
                Val v = chance(50) ? cast_to(t, {acc(x), "acc(x)"}) : Val{acc(x), "acc(x)"};
                out(x) = v.e;
                line("out(x) = " + v.s + ";");
            }
            p.out_vars = {x};
            p.out_shape = {cols};
        }
        p.outputs = {out};
    }

    // m(y) reduces p's rows; then something reduces again reading m, or combines with it.
    void reduce_of_reduce() {
        std::string src;
        Func f = reduced_source(src);
        declare({"m", "out"});
        Func m = stage("m", {y});
        RDom r(0, cols, "r");
        line("RDom r(0, " + std::to_string(cols) + ", \"r\");");
        std::string s;
        Expr e = call(f, src, r, y, "r", "y", s);
        Type mt;
        Val mv = reduce({e, s}, mt);
        m(y) = mv.e;
        line("m(y) = " + mv.s + ";");
        Func out("out");
        Val mm = cast_to(t, {m(y), "m(y)"});
        int k = pick(4);
        if (k == 0) {  // a second reduction over the same rows reading the first: out(y)
            std::string s2;
            Expr e2 = call(f, src, r, y, "r", "y", s2);
            Val d = combine({e2, s2}, mm);
            Type rt;
            Val v = reduce(d, rt);
            out(y) = v.e;
            line("out(y) = " + v.s + ";");
            p.out_vars = {y};
            p.out_shape = {rows};
        } else if (k == 1) {  // a column reduction of p scaled by the row reduction: out(x)
            RDom ry(0, rows, "ry");
            line("RDom ry(0, " + std::to_string(rows) + ", \"ry\");");
            std::string s2;
            Expr e2 = call(f, src, x, ry, "x", "ry", s2);
            Val mr = cast_to(t, {m(ry), "m(ry)"});
            Type rt;
            Val v = reduce(combine({e2, s2}, mr), rt);
            out(x) = v.e;
            line("out(x) = " + v.s + ";");
            p.out_vars = {x};
            p.out_shape = {cols};
        } else if (k == 2) {  // the reduction of all of m, a 1-D output of one element
            RDom ry(0, rows, "ry");
            line("RDom ry(0, " + std::to_string(rows) + ", \"ry\");");
            Type rt;
            Val v = reduce(cast_to(t, {m(ry), "m(ry)"}), rt);
            out(x) = v.e;
            line("out(x) = " + v.s + ";  // one element");
            p.out_vars = {x};
            p.out_shape = {1};
        } else {  // the row reduction broadcast back over the rows (softmax's shape)
            std::string s2;
            Expr e2 = call(f, src, x, y, "x", "y", s2);
            Val v = finish(combine({e2, s2}, mm), false);
            out(x, y) = v.e;
            line("out(x, y) = " + v.s + ";");
            p.out_vars = {x, y};
            p.out_shape = {cols, rows};
        }
        p.outputs = {out};
    }

    void coordinate_selects() {
        std::vector<Val> leaves = pointwise_leaves(1 + pick(2), false, true);
        declare({"out"});
        Func out("out");
        Val a = expr(pick(3), t, leaves);
        Val b = expr(pick(3), t, leaves);
        Val v = finish(coordinate_select(a, b), false);
        out(x, y) = v.e;
        line("out(x, y) = " + v.s + ";");
        output2d(out);
    }

    // Two inputs side by side (along x) or one above the other (along y), each read through a
    // clamped coordinate so that Halide's bounds stay inside both.
    void concat() {
        bool along_x = chance(60);
        int n = along_x ? cols : rows, k = 1 + pick(n - 1);
        int lo = t.is_int() ? -8 : -3, hi = -lo;
        ImageParam a = input(t, along_x ? std::vector<int>{k, rows} : std::vector<int>{cols, k}, lo, hi);
        ImageParam b = input(t, along_x ? std::vector<int>{cols - k, rows} : std::vector<int>{cols, rows - k}, lo, hi);
        declare({"out"});
        Func out("out");
        std::string ks = std::to_string(k);
        Val v;
        if (along_x)
            v = {select(x < k, a(min(x, k - 1), y), b(max(x - k, 0), y)),
                 "select(x < " + ks + ", in0(min(x, " + std::to_string(k - 1) + "), y), in1(max(x - " + ks + ", 0), y))"};
        else
            v = {select(y < k, a(x, min(y, k - 1)), b(x, max(y - k, 0))),
                 "select(y < " + ks + ", in0(x, min(y, " + std::to_string(k - 1) + ")), in1(x, max(y - " + ks + ", 0)))"};
        if (chance(50)) v = combine(v, constant(t));
        out(x, y) = v.e;
        line("out(x, y) = " + v.s + ";");
        output2d(out);
    }

    // Rows (or, less often, elements of a row) picked through a clamped int32 index.
    void gather() {
        int table_rows = 1 + pick(16);
        int lo = t.is_int() ? -8 : -3, hi = -lo;
        declare({"out"});
        Func out("out");
        Val v;
        if (chance(70)) {
            ImageParam table = input(t, {cols, table_rows}, lo, hi);
            ImageParam idx = input(Int(32), {rows}, -2, table_rows + 1);
            const std::string last = std::to_string(table_rows - 1);
            v = {table(x, clamp(idx(y), 0, table_rows - 1)), "in0(x, clamp(in1(y), 0, " + last + "))"};
        } else {
            ImageParam table = input(t, {cols, rows}, lo, hi);
            ImageParam idx = input(Int(32), {cols, rows}, -2, cols + 1);
            v = {table(clamp(idx(x, y), 0, cols - 1), y), "in0(clamp(in1(x, y), 0, " + std::to_string(cols - 1) + "), y)"};
        }
        if (chance(50)) v = combine(v, constant(t));
        out(x, y) = v.e;
        line("out(x, y) = " + v.s + ";");
        output2d(out);
    }

    // Resampling along x or y: reads at s * x + c (a downsample) or (x + c) / s (an upsample), one
    // tap or several combined, the input sized so that every read is inside it.
    void resample() {
        const bool along_x = chance(70), down = chance(55);
        const int s = down ? one_of<int>({2, 2, 3, 4}) : one_of<int>({2, 2, 4});
        const int taps = 1 + pick(down ? s : 2);
        std::vector<int> shape = {cols, rows};
        const int out_n = shape[along_x ? 0 : 1];
        shape[along_x ? 0 : 1] = down ? s * out_n : (out_n - 1 + taps - 1) / s + 1;
        int vlo = t.is_int() ? -8 : -3;
        ImageParam in = input(t, shape, vlo, -vlo);
        const std::string ss = std::to_string(s);
        std::vector<Val> reads;
        for (int c = 0; c < taps; c++) {
            const std::string cs = c ? " + " + std::to_string(c) : "";
            Expr i = down ? s * (along_x ? x : y) + c : ((along_x ? x : y) + c) / s;
            const std::string is = down ? ss + " * " + (along_x ? "x" : "y") + cs
                                        : (c ? "(" + std::string(along_x ? "x" : "y") + cs + ")" : std::string(along_x ? "x" : "y")) +
                                              " / " + ss;
            Val r = along_x ? Val{in(i, y), "in0(" + is + ", y)"} : Val{in(x, i), "in0(x, " + is + ")"};
            if (chance(30)) r = binary("*", r, constant(t));
            reads.push_back(r);
        }
        Val v = reads[0];
        for (size_t i = 1; i < reads.size(); i++) v = binary(one_of<std::string>({"+", "-", "max"}), v, reads[i]);
        declare({"out"});
        Func out("out");
        Val w = finish(v, false);
        out(x, y) = w.e;
        line("out(x, y) = " + w.s + ";");
        output2d(out);
    }

    // A 1-D stencil along x or y under boundary condition `bc`: repeat_edge, constant_exterior,
    // mirror_image, mirror_interior, "inbounds" (no condition, the input made large enough) or
    // "oob" (no condition, the input the output's size: Halide would read outside it).
    void stencil(const std::string &bc) {
        bool along_x = chance(60);
        std::vector<int> taps;
        for (int d = -2; d <= 2; d++)
            if (chance(45)) taps.push_back(d);
        if (taps.empty() || (taps.size() == 1 && taps[0] == 0)) taps.push_back(one_of<int>({-1, 1, 2}));
        int lo = taps.front(), hi = taps.back();
        if (bc == "inbounds") {  // shift the taps to start at 0 and widen the input by their span
            for (int &d : taps) d -= lo;
            hi -= lo;
            lo = 0;
        }
        std::vector<int> shape = {cols, rows};
        if (bc == "inbounds") shape[along_x ? 0 : 1] += hi;
        int vlo = t.is_int() ? -8 : -3;
        ImageParam in = input(t, shape, vlo, -vlo);
        Func e;
        std::string en = "in0";
        if (bc == "repeat_edge") e = BoundaryConditions::repeat_edge(in);
        else if (bc == "mirror_image") e = BoundaryConditions::mirror_image(in);
        else if (bc == "mirror_interior") e = BoundaryConditions::mirror_interior(in);
        else if (bc == "constant_exterior") {
            Val c = chance(60) ? Val{cast(t, 0), "cast(" + type_cpp(t) + ", 0)"} : constant(t);
            e = BoundaryConditions::constant_exterior(in, c.e);
            line("Func e = BoundaryConditions::constant_exterior(in0, " + c.s + ");");
            en = "e";
        } else {
            e = Func("e");
            e(x, y) = in(x, y);  // inlined: the reads are the input's own
        }
        if (bc != "constant_exterior" && bc != "inbounds" && bc != "oob") {
            line("Func e = BoundaryConditions::" + bc + "(in0);");
            en = "e";
        }
        std::vector<Val> reads;
        for (int d : taps) {
            std::string ds = d == 0 ? "" : (d > 0 ? " + " : " - ") + std::to_string(std::abs(d));
            Val r = along_x ? Val{e(x + d, y), en + "(x" + ds + ", y)"} : Val{e(x, y + d), en + "(x, y" + ds + ")"};
            if (chance(50)) r = binary("*", r, constant(t));
            reads.push_back(r);
        }
        Val v = reads[0];
        for (size_t i = 1; i < reads.size(); i++) v = binary(one_of<std::string>({"+", "+", "-", "max"}), v, reads[i]);
        Func out("out");
        if (chance(30)) {  // the stencil as a stage, read by a pointwise output
            declare({"st", "out"});
            Func st = stage("st", {x, y});
            st(x, y) = v.e;
            line("st(x, y) = " + v.s + ";");
            Val w = finish(reading(at(st, "st"), {}), false);
            out(x, y) = w.e;
            line("out(x, y) = " + w.s + ";");
        } else {
            declare({"out"});
            Val w = finish(v, false);
            out(x, y) = w.e;
            line("out(x, y) = " + w.s + ";");
        }
        p.expect_refusal = bc == "oob";
        output2d(out);
    }
};

struct Family {
    std::string name;
    int weight;
    std::function<void(Builder &)> build;
};

const std::vector<Family> &families() {
    static const std::vector<Family> f = {
        {"pointwise", 6, [](Builder &b) { b.pointwise(false); }},
        {"mixed-types", 8, [](Builder &b) { b.pointwise(true); }},
        {"multi-consumer", 8, [](Builder &b) { b.multi_consumer(); }},
        {"multi-output", 3, [](Builder &b) { b.multi_output(); }},
        {"scan-x", 6, [](Builder &b) { b.scan(true); }},
        {"scan-y", 8, [](Builder &b) { b.scan(false); }},
        {"reduce-1d", 10, [](Builder &b) { b.reduce_1d(); }},
        {"reduce-of-reduce", 10, [](Builder &b) { b.reduce_of_reduce(); }},
        {"select", 6, [](Builder &b) { b.coordinate_selects(); }},
        {"concat", 5, [](Builder &b) { b.concat(); }},
        {"gather", 5, [](Builder &b) { b.gather(); }},
        {"bc-repeat_edge", 4, [](Builder &b) { b.stencil("repeat_edge"); }},
        {"bc-constant_exterior", 4, [](Builder &b) { b.stencil("constant_exterior"); }},
        {"bc-mirror_image", 4, [](Builder &b) { b.stencil("mirror_image"); }},
        {"bc-mirror_interior", 4, [](Builder &b) { b.stencil("mirror_interior"); }},
        {"stencil-inbounds", 4, [](Builder &b) { b.stencil("inbounds"); }},
        {"oob-read", 3, [](Builder &b) { b.stencil("oob"); }},
    };
    return f;
}

}  // namespace

const std::vector<std::string> &pipeline_families() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const Family &f : families()) n.push_back(f.name);
        n.push_back("resample");
        return n;
    }();
    return names;
}

Pipe random_pipeline(std::mt19937 &rng) {
    Pipe p;
    Builder b{rng, p};
    // Resampling, added later than the families above, takes 5% of the cases by a draw of its own
    // from a copy of the case's generator, so every other case of every seed stays as it was.
    if (std::mt19937(rng)() % 100 < 5) {
        rng.discard(1);
        p.family = "resample";
        b.cols = b.one_of<int>({2, 7, 64, 100, 128, 130, 200});
        b.rows = b.one_of<int>({2, 3, 5, 7, 16});
        const int k = b.pick(100);
        b.t = k < 45 ? Float(16) : k < 75 ? Float(32) : Int(32);
        b.resample();
        p.cpp = "// resample: " + std::to_string(b.cols) + " x " + std::to_string(b.rows) + ", computing in " +
                type_cpp(b.t) + "\nVar x(\"x\"), y(\"y\");\n" + p.cpp;
        return p;
    }
    int total = 0;
    for (const Family &f : families()) total += f.weight;
    int w = b.pick(total);
    const Family *fam = &families()[0];
    for (const Family &f : families()) {
        if (w < f.weight) {
            fam = &f;
            break;
        }
        w -= f.weight;
    }
    p.family = fam->name;
    // Odd and whole-stick widths; few rows, so that a case stays cheap.
    b.cols = b.one_of<int>({2, 7, 64, 100, 128, 130, 200});
    b.rows = b.one_of<int>({2, 3, 5, 7, 16});
    int k = b.pick(100);
    b.t = k < 45 ? Float(16) : k < 75 ? Float(32) : Int(32);
    fam->build(b);
    p.cpp = "// " + p.family + ": " + std::to_string(b.cols) + " x " + std::to_string(b.rows) + ", computing in " +
            type_cpp(b.t) + "\nVar x(\"x\"), y(\"y\");\n" + p.cpp;
    return p;
}

}  // namespace spyre::fuzzdiff
