// spyre-ktir-fuzz: N random KTIR kernels (ktir_fuzz_kernel.h) imported and run on the simulator, as
// spyre-run runs a .ktir file, and compared bit for bit with the reference interpreter. Prints each
// mismatch with its kernel text, and a summary; exits 1 on any mismatch or any kernel the importer
// or simulator rejects (every generated kernel is meant to be supported).
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "device/error.h"
#include "device/half.h"
#include "device/layout.h"
#include "ktir_fuzz_kernel.h"
#include "ktir_import.h"
#include "ktir_reader.h"
#include "sim/simulator.h"

namespace {

using namespace spyre;
using namespace spyre::ktirfuzz;

// The first difference between the device's buffers and the reference's, or "".
std::string run_and_compare(const Kernel &k, const std::string &text, const Images &in) {
    DeviceProgram p = ktir::import_ktir(ktir::read_ktir(text), ktir::ImportOptions{});
    MachineDesc m;
    std::vector<std::vector<uint8_t>> images(p.buffers.size());
    for (size_t i = 0; i < p.buffers.size(); i++) {
        const BufferDecl &b = p.buffers[i];
        auto it = in.find(b.name);
        if ((b.kind == BufferKind::Input || b.kind == BufferKind::InOut) && it != in.end())
            images[i] = stickify(it->second.data(), b.shape, b.type, b.layout, m.stick_bytes);
    }
    SimResult r = simulate(p, m, images);
    Images want = evaluate(k, in);
    for (size_t i = 0; i < p.buffers.size(); i++) {
        const BufferDecl &b = p.buffers[i];
        const std::vector<uint16_t> &w = want.at(b.name);
        std::vector<uint16_t> got(w.size());
        unstickify(r.buffers[i], got.data(), b.shape, b.type, b.layout, m.stick_bytes);
        for (size_t j = 0; j < w.size(); j++) {
            bool both_nan = std::isnan(half_to_float(got[j])) && std::isnan(half_to_float(w[j]));
            if (got[j] != w[j] && !both_nan) {
                char msg[200];
                std::snprintf(msg, sizeof msg, "buffer %s (%s) element %zu (row %lld): device %g (0x%04x), reference %g (0x%04x)",
                              b.name.c_str(), buffer_kind_name(b.kind), j, (long long)(j / size_t(b.shape[0])),
                              double(half_to_float(got[j])), got[j], double(half_to_float(w[j])), w[j]);
                return msg;
            }
        }
    }
    return "";
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"Random differential testing of the KTIR importer: random kernels, simulator against a reference "
                 "interpreter."};
    int n = 200;
    uint32_t seed = 1;
    bool verbose = false;
    app.add_option("-n,--cases", n, "number of random kernels")->check(CLI::PositiveNumber);
    app.add_option("-s,--seed", seed, "seed of the first kernel (kernel i uses seed + i)");
    app.add_flag("-v,--verbose", verbose, "print every kernel's text");
    CLI11_PARSE(app, argc, argv);
    int matched = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        const uint32_t s = seed + uint32_t(i);
        Kernel k = random_kernel(s);
        std::string text = ktir_text(k);
        if (verbose) std::printf("seed %u:\n%s", s, text.c_str());
        std::string diff;
        try {
            diff = run_and_compare(k, text, random_inputs(k, s));
        } catch (const std::exception &e) {
            diff = std::string("error: ") + e.what();
        }
        if (diff.empty()) {
            matched++;
            continue;
        }
        failed++;
        std::printf("MISMATCH seed %u: %s\n%s\n", s, diff.c_str(), text.c_str());
    }
    std::printf("%d kernels from seed %u: %d match the reference, %d fail\n", n, seed, matched, failed);
    return failed ? 1 : 0;
}
