#include "random_pipeline.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>

#include "device/error.h"
#include "device/half.h"
#include "spyre.h"

namespace spyre::fuzzdiff {

using namespace Halide;

namespace {

// The first stage's expression in prefix form: a leaf is "a" or "b" (the inputs at (x, y)) or
// "k<value>"; a node is "<op>(<arg>[,<arg>])" with op one of neg abs exp add sub mul max min.
struct Node {
    std::string op;  // "a", "b", "k", or an operator
    float k = 0;
    std::vector<Node> args;
};

std::string gen_expr(std::mt19937 &rng, int depth) {
    std::uniform_int_distribution<int> pick(0, 99);
    if (depth == 0 || pick(rng) < 25) {
        int p = pick(rng);
        if (p < 45) return "a";
        if (p < 85) return "b";
        static const float ks[] = {0.5f, 1.5f, -2.0f, 3.0f, 0.25f};
        std::ostringstream os;
        os << "k" << ks[pick(rng) % 5];
        return os.str();
    }
    static const char *un[] = {"neg", "abs", "exp"};
    static const char *bin[] = {"add", "sub", "mul", "max", "min"};
    if (pick(rng) < 25) return std::string(un[pick(rng) % 3]) + "(" + gen_expr(rng, depth - 1) + ")";
    return std::string(bin[pick(rng) % 5]) + "(" + gen_expr(rng, depth - 1) + "," + gen_expr(rng, depth - 1) + ")";
}

Node parse(const std::string &s, size_t &at) {
    Node n;
    const bool leaf_end = at + 1 >= s.size() || s[at + 1] == ',' || s[at + 1] == ')';  // "a", not "abs("
    if ((s[at] == 'a' || s[at] == 'b') && leaf_end) {
        n.op = std::string(1, s[at++]);
        return n;
    }
    if (s[at] == 'k') {
        size_t end = at + 1;
        while (end < s.size() && s[end] != ',' && s[end] != ')') end++;
        n.op = "k";
        n.k = std::stof(s.substr(at + 1, end - at - 1));
        at = end;
        return n;
    }
    size_t open = s.find('(', at);
    n.op = s.substr(at, open - at);
    at = open + 1;
    n.args.push_back(parse(s, at));
    if (s[at] == ',') {
        at++;
        n.args.push_back(parse(s, at));
    }
    at++;  // ')'
    return n;
}

Node parse(const std::string &s) {
    size_t at = 0;
    return parse(s, at);
}

bool uses_exp(const Node &n) {
    if (n.op == "exp") return true;
    for (const Node &a : n.args)
        if (uses_exp(a)) return true;
    return false;
}

Expr to_halide(const Node &n, const Expr &a, const Expr &b, Type t) {
    if (n.op == "a") return a;
    if (n.op == "b") return b;
    if (n.op == "k") return cast(t, n.k);
    Expr x = to_halide(n.args[0], a, b, t);
    if (n.op == "neg") return -x;
    if (n.op == "abs") return cast(t, abs(x));
    if (n.op == "exp") return exp(x);
    Expr y = to_halide(n.args[1], a, b, t);
    if (n.op == "add") return x + y;
    if (n.op == "sub") return x - y;
    if (n.op == "mul") return x * y;
    if (n.op == "max") return max(x, y);
    return min(x, y);
}

std::string to_cpp(const Node &n, const std::string &t) {
    if (n.op == "a") return "in0(x, y)";
    if (n.op == "b") return "in1(x, y)";
    if (n.op == "k") {
        std::ostringstream os;
        os << "cast(" << t << ", " << n.k << "f)";
        return os.str();
    }
    std::string x = to_cpp(n.args[0], t);
    if (n.op == "neg") return "-(" + x + ")";
    if (n.op == "abs") return "cast(" + t + ", abs(" + x + "))";
    if (n.op == "exp") return "exp(" + x + ")";
    std::string y = to_cpp(n.args[1], t);
    if (n.op == "add") return "(" + x + " + " + y + ")";
    if (n.op == "sub") return "(" + x + " - " + y + ")";
    if (n.op == "mul") return "(" + x + " * " + y + ")";
    return n.op + "(" + x + ", " + y + ")";
}

bool two_d(Case::Tail t) { return t == Case::Tail::None || t == Case::Tail::Pointwise; }
bool row_reduction(Case::Tail t) { return t == Case::Tail::RowSum || t == Case::Tail::RowMax; }

// One instance of the case's algorithm, with its Funcs for scheduling.
struct Built {
    std::vector<ImageParam> in;
    Func p, acc, out;
    Var x{"x"}, y{"y"};
    std::vector<int> out_shape;
};

Built build(const Case &c) {
    Built k;
    Type t = Float(c.bits);
    k.in.push_back(ImageParam(t, 2, "in0"));
    if (c.inputs == 2) k.in.push_back(ImageParam(t, 2, "in1"));
    Var x = k.x, y = k.y;
    Expr a = k.in[0](x, y), b = k.in.back()(x, y);
    k.p = Func("p");
    k.p(x, y) = to_halide(parse(c.expr), a, b, t);
    RDom rc(0, c.cols, "rc"), rr(0, c.rows, "rr");
    switch (c.tail) {
    case Case::Tail::None: k.out = k.p; break;
    case Case::Tail::Pointwise:
        k.out = Func("out");
        k.out(x, y) = k.p(x, y) + a;
        break;
    case Case::Tail::RowSum:
        k.out = Func("out");
        k.out(y) = sum(cast<float>(k.p(rc, y)));
        break;
    case Case::Tail::RowMax:
        k.out = Func("out");
        k.out(y) = maximum(k.p(rc, y));
        break;
    case Case::Tail::ColSum:
        k.acc = Func("acc");
        k.acc(x) = 0.0f;
        k.acc(x) += cast<float>(k.p(x, rr));
        k.out = Func("out");
        k.out(x) = cast(t, k.acc(x));
        break;
    case Case::Tail::ColMax:
        k.acc = Func("acc");
        k.acc(x) = t.min();
        k.acc(x) = max(k.acc(x), k.p(x, rr));
        k.out = Func("out");
        k.out(x) = k.acc(x);
        break;
    }
    if (two_d(c.tail)) k.out_shape = {c.cols, c.rows};
    else if (row_reduction(c.tail)) k.out_shape = {c.rows};
    else k.out_shape = {c.cols};
    return k;
}

void schedule_case(Built &k, const Case &c) {
    Var x = k.x, y = k.y;
    // An fp32 accumulator of fp16 data takes two of its sticks per stick of the input.
    const int acc_sticks = c.tail == Case::Tail::ColSum && c.bits == 16 ? 2 : 1;
    if (two_d(c.tail)) {
        SpyreSchedule s = spyre::schedule(k.out);
        s.stick_vectorize(x);
        if (c.cores > 1) s.ring_split(y, c.cores, c.rows);
    } else if (!row_reduction(c.tail)) {
        spyre::schedule(k.out).stick_vectorize(x);
        spyre::schedule(k.acc).stick_vectorize(x, acc_sticks).scratchpad_store_at(k.out, x);
    }
    if (c.tail == Case::Tail::None) return;
    Var at = row_reduction(c.tail) || two_d(c.tail) ? y : x;
    switch (c.place) {
    case Case::Place::Inline: break;
    case Case::Place::LxAtOutput: spyre::schedule(k.p).scratchpad_store_at(k.out, at).stick_vectorize(x); break;
    case Case::Place::DeviceRoot: spyre::schedule(k.p).device_root().stick_vectorize(x); break;
    }
}

Runtime::Buffer<> random_input(int bits, int cols, int rows, uint32_t seed) {
    Runtime::Buffer<> b(halide_type_t(halide_type_float, uint8_t(bits)), {cols, rows});
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
    for (size_t i = 0; i < b.number_of_elements(); i++) {
        float v = dist(rng);
        if (bits == 16) static_cast<uint16_t *>(b.data())[i] = float_to_half(v);
        else static_cast<float *>(b.data())[i] = v;
    }
    return b;
}

double value_at(const Runtime::Buffer<> &b, size_t i) {
    if (b.type().bits == 16) return half_to_float(static_cast<const uint16_t *>(b.data())[i]);
    return static_cast<const float *>(b.data())[i];
}

int64_t ordered_bits(const Runtime::Buffer<> &b, size_t i) {
    int64_t v;
    if (b.type().bits == 16) {
        v = static_cast<const uint16_t *>(b.data())[i];
        return (v & 0x8000) ? -(v & 0x7fff) : v;
    }
    uint32_t u;
    std::memcpy(&u, static_cast<const float *>(b.data()) + i, 4);
    v = u;
    return (v & 0x80000000LL) ? -(v & 0x7fffffffLL) : v;
}

}  // namespace

Case random_case(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> pick(0, 999);
    Case c;
    c.seed = seed;
    static const int cols[] = {1, 7, 64, 100, 128, 130, 200, 256};
    static const int rows[] = {1, 2, 3, 7, 16, 32, 64};
    c.cols = cols[pick(rng) % 8];
    c.rows = rows[pick(rng) % 7];
    c.bits = pick(rng) % 2 ? 16 : 32;
    c.inputs = pick(rng) % 2 ? 2 : 1;
    c.expr = gen_expr(rng, 1 + pick(rng) % 3);
    c.tail = Case::Tail(pick(rng) % 6);
    c.place = Case::Place(pick(rng) % 3);
    if (two_d(c.tail)) {
        static const int cores[] = {1, 2, 4, 8};
        c.cores = cores[pick(rng) % 4];
        while (c.rows % c.cores) c.cores /= 2;
    }
    return c;
}

Outcome run_case(const Case &c) {
    Outcome o;
    std::vector<Runtime::Buffer<>> inputs;
    for (int i = 0; i < c.inputs; i++) inputs.push_back(random_input(c.bits, c.cols, c.rows, c.seed * 7 + uint32_t(i)));

    // The CPU reference: every stage at root, strict floats (op by op, as the device computes).
    Built ref = build(c);
    ref.p.compute_root();
    if (ref.acc.defined()) ref.acc.compute_root();
    for (size_t i = 0; i < inputs.size(); i++) ref.in[i].set(Buffer<>(*inputs[i].raw_buffer()));
    Runtime::Buffer<> want(ref.out.output_types()[0], ref.out_shape);
    ref.out.realize(Pipeline::RealizationArg(want), cpu_reference_target());

    Built k = build(c);
    DeviceProgram program;
    try {
        schedule_case(k, c);
        CompileOptions opt;
        opt.kernel_name = "fuzz";
        for (int i = 0; i < c.inputs; i++) opt.inputs.push_back(TensorSpec{{c.cols, c.rows}, {}});
        opt.output.shape = std::vector<int64_t>(k.out_shape.begin(), k.out_shape.end());
        program = compile_for_spyre(k.out, k.in, opt);
    } catch (const Error &e) {
        o.kind = Outcome::Kind::Rejected;
        o.detail = e.what();
        return o;
    }
    SpyreRun run;
    try {
        run = run_on_spyre(program, inputs);
    } catch (const Error &e) {  // a program the compiler accepted must run
        o.kind = Outcome::Kind::Mismatch;
        o.detail = std::string("the compiled program fails on the simulator: ") + e.what();
        return o;
    }

    // exp may differ from the CPU's by an ulp or two, which later ops can widen a little.
    const bool exact = !uses_exp(parse(c.expr));
    for (size_t i = 0; i < want.number_of_elements(); i++) {
        double g = value_at(run.output, i), w = value_at(want, i);
        if (std::isnan(g) && std::isnan(w)) continue;
        int64_t ulp = std::llabs(ordered_bits(run.output, i) - ordered_bits(want, i));
        bool ok = exact ? ulp == 0 : (ulp <= 8 || std::fabs(g - w) <= 1e-2 * std::max(1.0, std::fabs(w)));
        if (!ok) {
            std::ostringstream os;
            os << "element " << i << ": device " << g << ", CPU " << w << " (" << ulp << " ULP)";
            o.kind = Outcome::Kind::Mismatch;
            o.detail = os.str();
            return o;
        }
    }
    return o;
}

Case shrink(const Case &c) {
    Case best = c;
    auto fails = [](const Case &t) {
        try {
            return run_case(t).kind == Outcome::Kind::Mismatch;
        } catch (const std::exception &) {
            return false;
        }
    };
    bool progress = true;
    while (progress) {
        progress = false;
        std::vector<Case> tries;
        Case t = best;
        if (t.place != Case::Place::Inline) t.place = Case::Place::Inline, tries.push_back(t);
        t = best;
        if (t.cores > 1) t.cores = 1, tries.push_back(t);
        t = best;
        if (t.tail != Case::Tail::None) t.tail = Case::Tail::None, tries.push_back(t);
        t = best;
        if (t.inputs == 2) t.inputs = 1, tries.push_back(t);
        t = best;
        if (t.rows > 1) t.rows = (t.rows + 1) / 2, tries.push_back(t);
        t = best;
        if (t.cols > 64) t.cols = 64, tries.push_back(t);
        // A subtree of the expression in place of the whole.
        Node n = parse(best.expr);
        std::function<void(const Node &)> collect = [&](const Node &m) {
            for (const Node &a : m.args) {
                std::ostringstream os;
                std::function<void(const Node &)> print = [&](const Node &q) {
                    if (q.op == "a" || q.op == "b") os << q.op;
                    else if (q.op == "k") os << "k" << q.k;
                    else {
                        os << q.op << "(";
                        for (size_t i = 0; i < q.args.size(); i++) {
                            if (i) os << ",";
                            print(q.args[i]);
                        }
                        os << ")";
                    }
                };
                print(a);
                Case s = best;
                s.expr = os.str();
                tries.push_back(s);
            }
        };
        collect(n);
        for (const Case &cand : tries) {
            if (cand.cores > 1 && cand.rows % cand.cores) continue;
            if (fails(cand)) {
                best = cand;
                progress = true;
                break;
            }
        }
    }
    return best;
}

std::string describe(const Case &c) {
    static const char *tails[] = {"none", "pointwise", "row_sum", "row_max", "col_sum", "col_max"};
    static const char *places[] = {"inline", "lx_at_output", "device_root"};
    std::ostringstream os;
    os << "seed " << c.seed << ": f" << c.bits << " " << c.cols << "x" << c.rows << ", " << c.inputs
       << " input(s), p = " << c.expr << ", tail " << tails[int(c.tail)] << ", p " << places[int(c.place)] << ", "
       << c.cores << " core(s)";
    return os.str();
}

std::string reproducer(const Case &c) {
    const std::string t = "Float(" + std::to_string(c.bits) + ")";
    std::ostringstream os;
    os << "// " << describe(c) << "\n";
    os << "ImageParam in0(" << t << ", 2, \"in0\")";
    if (c.inputs == 2) os << ", in1(" << t << ", 2, \"in1\")";
    os << ";\nVar x(\"x\"), y(\"y\");\nFunc p(\"p\"), out(\"out\"), acc(\"acc\");\n";
    Node n = parse(c.expr);
    std::string body = to_cpp(n, t);
    if (c.inputs == 1) {
        for (size_t at; (at = body.find("in1(")) != std::string::npos;) body.replace(at, 3, "in0");
    }
    os << "p(x, y) = " << body << ";\n";
    switch (c.tail) {
    case Case::Tail::None: os << "out = p;\n"; break;
    case Case::Tail::Pointwise: os << "out(x, y) = p(x, y) + in0(x, y);\n"; break;
    case Case::Tail::RowSum: os << "RDom rc(0, " << c.cols << ");\nout(y) = sum(cast<float>(p(rc, y)));\n"; break;
    case Case::Tail::RowMax: os << "RDom rc(0, " << c.cols << ");\nout(y) = maximum(p(rc, y));\n"; break;
    case Case::Tail::ColSum:
        os << "RDom rr(0, " << c.rows << ");\nacc(x) = 0.0f;\nacc(x) += cast<float>(p(x, rr));\nout(x) = cast(" << t
           << ", acc(x));\n";
        break;
    case Case::Tail::ColMax:
        os << "RDom rr(0, " << c.rows << ");\nacc(x) = " << t << ".min();\nacc(x) = max(acc(x), p(x, rr));\nout(x) = acc(x);\n";
        break;
    }
    // The schedule, as schedule_case() writes it.
    if (two_d(c.tail)) {
        os << "spyre::schedule(out).stick_vectorize(x)";
        if (c.cores > 1) os << ".ring_split(y, " << c.cores << ", " << c.rows << ")";
        os << ";\n";
    } else if (!row_reduction(c.tail)) {
        os << "spyre::schedule(out).stick_vectorize(x);\nspyre::schedule(acc).stick_vectorize(x, "
           << (c.tail == Case::Tail::ColSum && c.bits == 16 ? 2 : 1) << ").scratchpad_store_at(out, x);\n";
    }
    if (c.tail != Case::Tail::None) {
        const char *at = row_reduction(c.tail) || two_d(c.tail) ? "y" : "x";
        if (c.place == Case::Place::LxAtOutput)
            os << "spyre::schedule(p).scratchpad_store_at(out, " << at << ").stick_vectorize(x);\n";
        if (c.place == Case::Place::DeviceRoot) os << "spyre::schedule(p).device_root().stick_vectorize(x);\n";
    }
    os << "// inputs " << c.cols << " x " << c.rows << "; compile_for_spyre(out, {in0"
       << (c.inputs == 2 ? ", in1" : "") << "}, options) and compare with out.realize() on the CPU\n";
    return os.str();
}

}  // namespace spyre::fuzzdiff
