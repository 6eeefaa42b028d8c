// spyre-calibrate: times the calibration suite (one program per device measurement in
// SPYRE_FACTS.md) on the simulator and prints modelled against measured, with the error; --json
// prints the same as JSON, --out writes a Markdown table and an SVG plot for the report, and --fit
// re-fits every calibrated constant of the machine description to the suite.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "calibration.h"
#include "calibration_fit.h"
#include "calibration_points.h"
#include "device/error.h"

namespace {

// Measured against modelled on log axes, one dot per point; the diagonal is a perfect model and
// the band around it the tolerance. Units differ, so each point is drawn as modelled / measured
// against its index: what matters is the distance from 1.
std::string svg_plot(const std::vector<spyre::PointResult> &r) {
    const int w = 900, row = 18, top = 40, left = 300, plot_w = 520;
    const int h = top + row * int(r.size()) + 40;
    auto x_of = [&](double ratio) {
        double lr = std::log2(std::clamp(ratio, 0.25, 4.0));  // -2 .. 2
        return left + (lr + 2) / 4 * plot_w;
    };
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    s << "<text x=\"" << left << "\" y=\"16\" font-size=\"13\">modelled / measured (log scale); band = "
      << "+/-15% (green: within the point's tolerance); hollow = not fitted</text>\n";
    double lo = x_of(1 - spyre::kPointTolerance), hi = x_of(1 + spyre::kPointTolerance);
    s << "<rect x=\"" << lo << "\" y=\"" << top - 10 << "\" width=\"" << hi - lo << "\" height=\"" << row * r.size()
      << "\" fill=\"#dfefdf\"/>\n";
    for (double ratio : {0.25, 0.5, 1.0, 2.0, 4.0}) {
        double x = x_of(ratio);
        s << "<line x1=\"" << x << "\" y1=\"" << top - 10 << "\" x2=\"" << x << "\" y2=\"" << top + row * r.size()
          << "\" stroke=\"" << (ratio == 1.0 ? "#333" : "#bbb") << "\"/>\n";
        s << "<text x=\"" << x - 8 << "\" y=\"" << top + row * r.size() + 14 << "\">" << ratio << "</text>\n";
    }
    for (size_t i = 0; i < r.size(); i++) {
        double y = top + row * double(i);
        double ratio = r[i].modelled / r[i].point->measured;
        bool ok = std::fabs(r[i].rel_error()) <= r[i].point->tolerance;
        const char *color = ok ? "#2a7" : "#c33";
        s << "<text x=\"4\" y=\"" << y + 4 << "\">" << r[i].point->name << "</text>\n";
        s << "<circle cx=\"" << x_of(ratio) << "\" cy=\"" << y << "\" r=\"5\" "
          << (r[i].point->fitted ? std::string("fill=\"") + color + "\"" : std::string("fill=\"none\" stroke=\"") + color + "\"")
          << "/>\n";
    }
    s << "</svg>\n";
    return s.str();
}

void write_file(const std::filesystem::path &p, const std::string &text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
    if (!out) spyre::throw_error("cannot write '", p.string(), "'");
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"Time the calibration suite on the Spyre simulator against IBM's device measurements."};
    std::string machine_path, out_dir;
    bool fit = false, json = false;
    int rounds = 40;
    app.add_option("-m,--machine", machine_path, "machine description JSON (default: built-in)");
    app.add_flag("--json", json, "print {\"points\": [{name, source, measured, modelled, unit, ...}]} instead of tables");
    app.add_option("--out", out_dir, "also write calibration.md, calibration.svg and calibration.json into this folder");
    app.add_flag("--fit", fit, "fit every calibrated constant to the suite and print the fitted description as JSON");
    app.add_option("--rounds", rounds, "coordinate-search rounds for --fit")->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);
    try {
        spyre::MachineDesc m = machine_path.empty() ? spyre::MachineDesc{} : spyre::MachineDesc::from_file(machine_path);
        spyre::CalibrationSuite suite;
        std::vector<spyre::PointResult> r = suite.run(m);
        if (json) {
            std::printf("%s", spyre::points_json(r).c_str());
        } else {
            std::printf("Calibration suite: modelled vs IBM's device measurements (SPYRE_FACTS.md)\n\n%s",
                        spyre::points_table(r).c_str());
            std::vector<spyre::CalibrationCase> cases = {spyre::hand_built_case(), spyre::compiled_case({}, m)};
            std::vector<spyre::CalibrationReport> reports;
            for (const auto &c : cases) reports.push_back(spyre::run_calibration(c, m));
            std::printf("\nSoftmax table (512 x 1024 fp16, one core), hand-built and compiled from the Halide "
                        "softmax:\n%s",
                        spyre::calibration_table(cases, reports).c_str());
        }
        if (!out_dir.empty()) {
            std::filesystem::create_directories(out_dir);
            std::ostringstream md;
            md << "# Calibration\n\nEach row is one device measurement from SPYRE_FACTS.md, timed on the simulator "
                  "with the default machine description (`spyre-calibrate`). Rows marked * are not fitted; "
                  "docs/device_model.md explains their residual.\n\n![calibration](calibration.svg)\n\n```\n"
               << spyre::points_table(r) << "```\n";
            write_file(std::filesystem::path(out_dir) / "calibration.md", md.str());
            write_file(std::filesystem::path(out_dir) / "calibration.svg", svg_plot(r));
            write_file(std::filesystem::path(out_dir) / "calibration.json", spyre::points_json(r));
        }
        if (fit) {
            std::vector<std::string> log;
            spyre::MachineDesc f = spyre::fit_machine(suite, m, rounds, &log);
            for (const std::string &l : log) std::fprintf(stderr, "%s\n", l.c_str());
            std::printf("\nAfter fitting:\n%s\n%s", spyre::points_table(suite.run(f)).c_str(), f.to_json_text().c_str());
        }
    } catch (const spyre::Error &e) {
        std::fprintf(stderr, "spyre-calibrate: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
