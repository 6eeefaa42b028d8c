// The README's tour: write softmax once as a Halide algorithm, give it two Spyre schedules,
// compile both, run both on the simulator, check them against Halide's CPU output and compare
// their modelled times. Built as build/bin/spyre-tour; `make demo` runs it.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "device/half.h"
#include "spyre.h"

using namespace Halide;

// The algorithm: what softmax computes, nothing about where or how.
struct Softmax {
    ImageParam in{Float(16), 2, "in"};
    Var x{"x"}, y{"y"};
    Func mx{"mx"}, e{"e"}, s{"s"}, out{"softmax"};
    explicit Softmax(int cols) {
        RDom r(0, cols, "r");
        mx(y) = maximum(in(r, y));
        e(x, y) = exp(in(x, y) - mx(y));
        s(y) = sum(cast<float>(e(r, y)));
        out(x, y) = e(x, y) / cast<float16_t>(s(y));
    }
};

int main(int argc, char **argv) {
    if (argc > 1) {
        bool help = std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h";
        std::fprintf(help ? stdout : stderr,
                     "usage: spyre-tour\n  Compiles a softmax with two Spyre schedules, runs both on the simulator,\n"
                     "  checks them against Halide's CPU output and prints their modelled times.\n");
        return help ? 0 : 2;
    }
    const int cols = 1024, rows = 512;
    Buffer<float16_t> input(cols, rows);
    for (int j = 0; j < rows; j++)
        for (int i = 0; i < cols; i++) input(i, j) = float16_t(std::sin(0.01f * float(i * 7 + j * 13)) * 4.0f);

    // Reference: Halide on the CPU.
    Softmax cpu(cols);
    cpu.mx.compute_root();
    cpu.e.compute_root();
    cpu.s.compute_root();
    cpu.in.set(input);
    Buffer<float16_t> want = cpu.out.realize({cols, rows}, spyre::cpu_reference_target());

    spyre::CompileOptions opt;
    opt.inputs = {spyre::TensorSpec{{cols, rows}, {}}};
    opt.output = spyre::TensorSpec{{cols, rows}, {}};

    // Schedule A: every stage materialised in device memory, as an unscheduled compiler would.
    Softmax a(cols);
    Var yo("yo"), yi("yi");
    spyre::schedule(a.mx).device_root().split(a.y, yo, yi, 64);
    spyre::schedule(a.e).device_root().split(a.y, yo, yi, 64).stick_vectorize(a.x);
    spyre::schedule(a.s).device_root().split(a.y, yo, yi, 64);
    spyre::schedule(a.out).split(a.y, yo, yi, 64).stick_vectorize(a.x);
    opt.kernel_name = "softmax_device_memory";
    spyre::DeviceProgram pa = spyre::compile_for_spyre(a.out, {a.in}, opt);

    // Schedule B: rows split over the 32 cores of the ring; each core copies a tile of rows into
    // its LX once and keeps every intermediate there.
    Softmax b(cols);
    spyre::schedule(b.out).ring_split(b.y, 32).split(b.y, yo, yi, 16).stick_vectorize(b.x);
    spyre::stage_all_in_lx(b.in, b.out, yo);
    spyre::schedule(b.mx).scratchpad_store_at(b.out, yo);
    spyre::schedule(b.s).scratchpad_store_at(b.out, yo);
    spyre::schedule(b.e).scratchpad_store_at(b.out, yo).stick_vectorize(b.x);
    opt.kernel_name = "softmax_lx_32cores";
    spyre::DeviceProgram pb = spyre::compile_for_spyre(b.out, {b.in}, opt);

    std::printf("softmax %d x %d fp16 on the simulated Spyre\n\n", rows, cols);
    std::printf("%-24s %6s %12s %12s %10s %10s\n", "schedule", "cores", "modelled us", "device MB", "LX peak KB",
                "max ULP");
    for (const spyre::DeviceProgram *p : {&pa, &pb}) {
        spyre::SpyreRun run = spyre::run_on_spyre(*p, {input});
        // Compare with the CPU result in units of fp16 representable values.
        int worst = 0;
        const uint16_t *g = static_cast<const uint16_t *>(run.output.data());
        for (int j = 0; j < rows; j++)
            for (int i = 0; i < cols; i++) {
                uint16_t w;
                float16_t v = want(i, j);
                std::memcpy(&w, &v, 2);
                worst = std::max(worst, std::abs(int(g[j * cols + i]) - int(w)));
            }
        const spyre::SimStats &st = run.stats;
        std::printf("%-24s %6d %12.2f %12.2f %10.1f %10d\n", p->kernel_name.c_str(), p->num_cores, st.us,
                    double(st.dram_read_bytes + st.dram_write_bytes) / 1e6, double(st.lx_peak_bytes) / 1024.0, worst);
        if (worst > 2) {
            std::fprintf(stderr, "spyre-tour: %s differs from the CPU by %d ULP\n", p->kernel_name.c_str(), worst);
            return 1;
        }
    }
    return 0;
}
