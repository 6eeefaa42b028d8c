// spyre-calibrate: times the four softmax stage programs on the simulator and prints modelled
// against measured time; --fit searches the calibrated machine constants and prints them as JSON.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

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
        std::printf("Softmax (512 x 1024 fp16, one core): modelled vs measured on Spyre\n");
        std::printf("(measured: torch-spyre docs/source/compiler/scratchpad_planning.md)\n\n");
        std::printf("%s", spyre::run_calibration(m).table().c_str());
        if (fit) {
            std::vector<std::string> log;
            spyre::MachineDesc f = spyre::fit_machine(m, rounds, &log);
            for (const std::string &l : log) std::fprintf(stderr, "%s\n", l.c_str());
            std::printf("\nAfter fitting:\n%s\n%s", spyre::run_calibration(f).table().c_str(), f.to_json_text().c_str());
        }
    } catch (const spyre::Error &e) {
        std::fprintf(stderr, "spyre-calibrate: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
