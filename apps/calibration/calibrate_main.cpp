// spyre-calibrate: times the four softmax stage programs (hand-built, and compiled from the Halide
// softmax with its stage schedules) on the simulator and prints modelled against measured time;
// --fit searches the calibrated machine constants and prints them as JSON.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "calibration.h"
#include "device/error.h"

int main(int argc, char **argv) {
    CLI::App app{"Time the softmax calibration programs on the Spyre simulator against IBM's measurements."};
    std::string machine_path;
    bool fit = false;
    int rounds = 40;
    app.add_option("-m,--machine", machine_path, "machine description JSON (default: built-in)");
    app.add_flag("--fit", fit, "fit the calibrated constants and print the fitted description as JSON");
    app.add_option("--rounds", rounds, "coordinate-search rounds for --fit")->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);
    try {
        spyre::MachineDesc m = machine_path.empty() ? spyre::MachineDesc{} : spyre::MachineDesc::from_file(machine_path);
        std::vector<spyre::CalibrationCase> cases = {spyre::hand_built_case(), spyre::compiled_case({}, m)};
        auto report = [&](const spyre::MachineDesc &md) {
            std::vector<spyre::CalibrationReport> r;
            for (const auto &c : cases) r.push_back(spyre::run_calibration(c, md));
            return spyre::calibration_table(cases, r);
        };
        std::printf("Softmax (512 rows x 1024 fp16, one core): modelled vs measured on Spyre\n");
        std::printf("(measured: torch-spyre docs/source/compiler/scratchpad_planning.md)\n\n%s", report(m).c_str());
        if (fit) {
            std::vector<std::string> log;
            spyre::MachineDesc f = spyre::fit_machine(m, cases, rounds, &log);
            for (const std::string &l : log) std::fprintf(stderr, "%s\n", l.c_str());
            std::printf("\nAfter fitting:\n%s\n%s", report(f).c_str(), f.to_json_text().c_str());
        }
    } catch (const spyre::Error &e) {
        std::fprintf(stderr, "spyre-calibrate: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
