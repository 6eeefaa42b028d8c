// spyre-fuzz-diff: N random pipelines with random Spyre schedules (random_pipeline.h), each
// compiled, run on the simulator and compared with Halide's CPU realisation. Prints one line per
// mismatch with a shrunk reproducer as C++, and a summary; exits 1 on any mismatch.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>

#include "random_pipeline.h"

int main(int argc, char **argv) {
    CLI::App app{"Random differential testing: random pipelines and schedules, simulator against CPU."};
    int n = 100;
    uint32_t seed = 1;
    bool verbose = false;
    app.add_option("-n,--cases", n, "number of random cases")->check(CLI::PositiveNumber);
    app.add_option("-s,--seed", seed, "seed of the first case (case i uses seed + i)");
    app.add_flag("-v,--verbose", verbose, "print every case and every rejection");
    CLI11_PARSE(app, argc, argv);
    using namespace spyre::fuzzdiff;
    int matched = 0, mismatched = 0, rejected = 0;
    std::map<std::string, int> reasons;
    for (int i = 0; i < n; i++) {
        Case c = random_case(seed + uint32_t(i));
        Outcome o = run_case(c);
        if (verbose) std::printf("%s: %s\n", describe(c).c_str(), o.kind == Outcome::Kind::Match ? "ok" : o.detail.c_str());
        if (o.kind == Outcome::Kind::Match) {
            matched++;
        } else if (o.kind == Outcome::Kind::Rejected) {
            rejected++;
            reasons[o.detail.substr(0, o.detail.find(':', o.detail.find(':') + 1))]++;
        } else {
            mismatched++;
            Case s = shrink(c);
            std::printf("MISMATCH %s\n  %s\n  shrunk to: %s\n%s\n", describe(c).c_str(), o.detail.c_str(),
                        describe(s).c_str(), reproducer(s).c_str());
        }
    }
    std::printf("%d cases from seed %u: %d match the CPU, %d rejected by the back end with an error, %d mismatch\n", n,
                seed, matched, rejected, mismatched);
    std::printf("%d passed, %d failed\n", matched + rejected, mismatched);
    return mismatched ? 1 : 0;
}
