#include "random_schedule.h"

#include "auto_schedule.h"

namespace spyre::fuzzdiff {

using namespace Halide;

namespace {

// The name a person gave a Func (Halide appends "$n" to names it has seen before).
std::string name_of(const Func &f) { return f.name().substr(0, f.name().find('$')); }

// Elements per stick for a type (a stick is 128 bytes).
int lanes(Type t) { return 1024 / t.bits(); }

// True when f's definitions read input `name` themselves (stage_in_lx wraps only such reads).
bool reads_input(const Func &f, const std::string &name) {
    struct Finder : Internal::IRGraphVisitor {
        std::string name;
        bool found = false;
        using Internal::IRGraphVisitor::visit;
        void visit(const Internal::Call *c) override {
            found |= c->call_type == Internal::Call::Image && c->name == name;
            Internal::IRGraphVisitor::visit(c);
        }
    } finder;
    finder.name = name;
    for (const Expr &e : f.values().as_vector()) e.accept(&finder);
    for (int i = 0; i < f.num_update_definitions(); i++)
        for (const Expr &e : f.update_values(i).as_vector()) e.accept(&finder);
    return finder.found;
}

struct Loop {
    Var v;
    std::string name;
};

struct Scheduler {
    std::mt19937 &rng;
    Pipe &p;
    std::string &cpp;

    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }
    bool chance(int percent) { return pick(100) < percent; }
    template <typename T>
    const T &one_of(const std::vector<T> &v) { return v[size_t(pick(int(v.size())))]; }
    void line(const std::string &s) { cpp += s + "\n"; }

    // Schedules the output's loops; returns them (in no particular order): where stages may go.
    std::vector<Loop> output_loops() {
        Func out = p.outputs[0];
        const std::string on = name_of(out);
        const int l = lanes(out.output_types()[0]);
        std::vector<Loop> loops;
        SpyreSchedule s = spyre::schedule(out);
        if (p.out_vars.size() == 2 && p.outputs.size() == 1 && fused()) return fused_loops();
        if (p.out_vars.size() == 2) {
            Var x = p.out_vars[0], y = p.out_vars[1];
            Var xo("xo"), xi("xi"), yo("yo"), yi("yi");
            line("Var xo(\"xo\"), xi(\"xi\"), yo(\"yo\"), yi(\"yi\");");
            const int rows = p.out_shape[1];
            bool x_tiles = chance(12);
            if (x_tiles) {  // tiles of the stick dimension: of whole sticks, mostly
                int f = chance(85) ? l * one_of<int>({1, 2}) : l / 2 + 16;
                s.split(x, xo, xi, f);
                s.stick_vectorize(xi);
                line("spyre::schedule(" + on + ").split(x, xo, xi, " + std::to_string(f) + ").stick_vectorize(xi);");
            } else if (chance(95)) {
                int sticks = chance(15) ? 2 : 1;
                s.stick_vectorize(x, sticks);
                line("spyre::schedule(" + on + ").stick_vectorize(x" + (sticks == 2 ? ", 2" : std::string()) + ");");
            } else {
                line("// " + on + " not vectorized");
            }
            bool cores = chance(40), tiles = chance(40);
            if (cores) {
                int n = one_of<int>({2, 3, 4, 8});
                s.ring_split(y, n, rows);
                line("spyre::schedule(" + on + ").ring_split(y, " + std::to_string(n) + ", " + std::to_string(rows) + ");");
            }
            if (tiles) {
                int f = one_of<int>({1, 2, 3, 4, 5});
                s.split(y, yo, yi, f);
                line("spyre::schedule(" + on + ").split(y, yo, yi, " + std::to_string(f) + ");");
            }
            Var yin = tiles ? yi : y;
            std::string yn = tiles ? "yi" : "y";
            if (x_tiles) {
                if (chance(60)) {  // the stick tiles outside the rows
                    if (tiles) {
                        out.reorder(xi, yi, xo, yo);
                        line(on + ".reorder(xi, yi, xo, yo);");
                    } else {
                        out.reorder(xi, y, xo);
                        line(on + ".reorder(xi, y, xo);");
                    }
                    loops.push_back({tiles ? yo : y, tiles ? "yo" : "y"});
                    loops.push_back({xo, "xo"});
                    if (tiles) loops.push_back({yi, "yi"});
                } else {
                    if (tiles) loops.push_back({yo, "yo"});
                    loops.push_back({yin, yn});
                    loops.push_back({xo, "xo"});
                }
            } else if (chance(12)) {  // the rows inside the columns' loop
                out.reorder(yin, x);
                line(on + ".reorder(" + yn + ", x);");
                if (tiles) loops.push_back({yo, "yo"});
                loops.push_back({x, "x"});
                loops.push_back({yin, yn});
            } else {
                if (tiles) loops.push_back({yo, "yo"});
                loops.push_back({yin, yn});
                loops.push_back({x, "x"});
            }
        } else {
            Var v = p.out_vars[0];
            const std::string vn = v.name();
            const int extent = p.out_shape[0];
            if (chance(25)) {
                int n = one_of<int>({2, 3, 4});
                s.ring_split(v, n, extent);
                line("spyre::schedule(" + on + ").ring_split(" + vn + ", " + std::to_string(n) + ", " +
                     std::to_string(extent) + ");");
            }
            if (chance(15)) {
                Var vo(vn + "o"), vi(vn + "i");
                line("Var " + vn + "o(\"" + vn + "o\"), " + vn + "i(\"" + vn + "i\");");
                int f = l * one_of<int>({1, 2});
                s.split(v, vo, vi, f).stick_vectorize(vi);
                line("spyre::schedule(" + on + ").split(" + vn + ", " + vn + "o, " + vn + "i, " + std::to_string(f) +
                     ").stick_vectorize(" + vn + "i);");
                loops.push_back({vo, vn + "o"});
            } else if (chance(75)) {
                s.stick_vectorize(v);
                line("spyre::schedule(" + on + ").stick_vectorize(" + vn + ");");
                loops.push_back({v, vn});
            } else {
                line("// " + on + " not vectorized");
                loops.push_back({v, vn});
            }
        }
        for (size_t i = 1; i < p.outputs.size(); i++) {
            spyre::schedule(p.outputs[i]).stick_vectorize(p.out_vars[0]);
            line("spyre::schedule(" + name_of(p.outputs[i]) + ").stick_vectorize(" + p.out_vars[0].name() + ");");
        }
        return loops;
    }

    // About one case in twelve fuses the output's two loops into one (Halide's fuse(x, y, xy)),
    // whose vectors then run across rows; one in 48 where the rows are padded to whole sticks (a
    // vector across such rows is not contiguous in device memory: mostly refused). Decided by a
    // draw of a generator seeded from a copy of the case's, so that every other case draws as it
    // did before fusing was added.
    bool fused() {
        std::mt19937 copy = rng;
        std::mt19937 side(copy() ^ 0x5bd1e995u);
        const bool padded = p.out_shape[0] % lanes(p.outputs[0].output_types()[0]) != 0;
        return std::uniform_int_distribution<int>(0, padded ? 47 : 11)(side) == 0;
    }

    // The output's loops fused, vectorized by whole sticks (stick_vectorize), by Halide's
    // vectorize of a multiple of the lanes, or split first; now and then over cores by rows.
    std::vector<Loop> fused_loops() {
        (void)rng();  // the draw fused() copied
        Func out = p.outputs[0];
        const std::string on = name_of(out);
        const int l = lanes(out.output_types()[0]);
        Var x = p.out_vars[0], y = p.out_vars[1];
        SpyreSchedule s = spyre::schedule(out);
        if (chance(30)) {
            int n = one_of<int>({2, 3, 4});
            s.ring_split(y, n, p.out_shape[1]);
            line("spyre::schedule(" + on + ").ring_split(y, " + std::to_string(n) + ", " + std::to_string(p.out_shape[1]) + ");");
        }
        Var xy("xy");
        line("Var xy(\"xy\");");
        out.fuse(x, y, xy);
        line(on + ".fuse(x, y, xy);");
        const int k = pick(100);
        const int sticks = one_of<int>({1, 1, 2, 4});
        if (k < 45) {
            s.stick_vectorize(xy, sticks);
            line("spyre::schedule(" + on + ").stick_vectorize(xy" + (sticks > 1 ? ", " + std::to_string(sticks) : std::string()) + ");");
            return {{xy, "xy"}};
        }
        if (k < 75) {
            out.vectorize(xy, l * sticks);
            line(on + ".vectorize(xy, " + std::to_string(l * sticks) + ");");
            return {{xy, "xy"}};
        }
        Var xyo("xyo"), xyi("xyi");
        line("Var xyo(\"xyo\"), xyi(\"xyi\");");
        s.split(xy, xyo, xyi, l * sticks).stick_vectorize(xyi);
        line("spyre::schedule(" + on + ").split(xy, xyo, xyi, " + std::to_string(l * sticks) + ").stick_vectorize(xyi);");
        return {{xyo, "xyo"}};
    }

    // Where one stage lives, and its vectors.
    void place(const Stage &st, const std::vector<Loop> &loops) {
        const std::string sn = name_of(st.f);
        const std::string on = name_of(p.outputs[0]);
        int k = pick(100);
        SpyreSchedule s = spyre::schedule(st.f);
        std::string where;
        if (k < 20 && !(st.has_update && chance(70))) {
            line("// " + sn + " inline");
            return;
        }
        if (k < 40) {
            s.device_root();
            where = ".device_root()";
        } else if (k < 50) {
            s.scratchpad_root();
            where = ".scratchpad_root()";
        } else {
            const Loop &l = one_of(loops);
            s.scratchpad_store_at(p.outputs[0], l.v);
            where = ".scratchpad_store_at(" + on + ", " + l.name + ")";
        }
        const Var v = st.vars[0];
        // A stage over y alone (a row reduction) is vectorized across rows only sometimes.
        if (v.name() == "y" && chance(50)) {
            line("spyre::schedule(" + sn + ")" + where + ";");
            return;
        }
        Type t = st.f.output_types()[0];
        // An fp32 accumulator of fp16 data takes 2 sticks (docs/directives.md); mostly ask so.
        int sticks = t == Float(32) && st.has_update && chance(70) ? 2 : (chance(10) ? 2 : 1);
        s.stick_vectorize(v, sticks);
        line("spyre::schedule(" + sn + ")" + where + ".stick_vectorize(" + v.name() +
             (sticks == 2 ? ", 2" : std::string()) + ");");
        // A stage in device memory of whole-stick rows, now and then with its stick count
        // outermost (torch-spyre's default layout; backend/compiler/layout_dma.h).
        if (k < 40 && st.vars.size() == 2 && v.name() == "x" && p.out_shape[0] % lanes(t) == 0 && chance(35)) {
            s.device_layout(st.vars, st.vars[1]);
            line("spyre::schedule(" + sn + ").device_layout({x, " + st.vars[1].name() + "}, " + st.vars[1].name() + ");");
        }
    }

    void run() {
        std::vector<Loop> loops = output_loops();
        for (const Stage &st : p.stages) place(st, loops);
        // Inputs the output reads staged into LX at one of its loops, now and then.
        for (const ImageParam &in : p.inputs) {
            if (!reads_input(p.outputs[0], in.name()) || !chance(25)) continue;
            const Loop &l = one_of(loops);
            stage_in_lx(in, p.outputs[0], l.v);
            line("spyre::stage_in_lx(" + in.name() + ", " + name_of(p.outputs[0]) + ", " + l.name + ");");
        }
    }
};

}  // namespace

CompileOptions compile_options(const Pipe &p) {
    CompileOptions opt;
    opt.kernel_name = "fuzz";
    for (const InputSpec &s : p.specs) opt.inputs.push_back(TensorSpec{std::vector<int64_t>(s.shape.begin(), s.shape.end()), {}});
    opt.output.shape = std::vector<int64_t>(p.out_shape.begin(), p.out_shape.end());
    if (p.layouts.size() == opt.inputs.size() + 1) {
        for (size_t i = 0; i < opt.inputs.size(); i++) opt.inputs[i].layout = p.layouts[i];
        opt.output.layout = p.layouts.back();
    }
    // A pipeline of several outputs (all of the output's shape): one shape each.
    if (p.outputs.size() > 1) opt.outputs.assign(p.outputs.size(), opt.output);
    return opt;
}

void random_schedule(Pipe &p, std::mt19937 &rng, std::string &cpp) {
    Scheduler s{rng, p, cpp};
    s.run();
}

std::string auto_schedule_case(Pipe &p, uint32_t seed, std::string &summary) {
    AutoOptions ao;
    ao.seed = seed;
    ao.max_evaluations = 4;
    ao.time_budget_s = 10;
    ao.workers = 1;
    ao.progress = false;
    AutoResult r = auto_schedule(p.outputs[0], p.inputs, compile_options(p), ao);
    summary = r.summary;
    return "// schedule=auto (" + r.summary + ")\n" + r.cpp;
}

}  // namespace spyre::fuzzdiff
