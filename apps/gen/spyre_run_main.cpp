// spyre-run: runs a .spyre device program on the simulator and prints its modelled time and stats.
//
//   spyre-run softmax.spyre                         random inputs (seeded), prints the stats
//   spyre-run k.spyre --input in=x.bin --output y.bin --trace t.json --json
//   spyre-run k.spyre --timing-only                 no numerics, loops summarised (fast)
//   spyre-run k.spyre --dis                         print the disassembly and exit
//
// Input and output files are raw, dense, little-endian arrays of the buffer's element type in
// Halide order (dim 0 innermost): exactly elements * element size bytes.
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "device/disassembler.h"
#include "device/error.h"
#include "device/half.h"
#include "device/layout.h"
#include "device/program_io.h"
#include "sim/simulator.h"

using namespace spyre;

namespace {

int64_t elements(const BufferDecl &b) {
    int64_t n = 1;
    for (int64_t e : b.shape) n *= e;
    return n;
}

int elem_bytes(DType t) { return t == DType::F16 ? 2 : 4; }

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s = "{";
    for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "}";
}

std::vector<uint8_t> read_input(const std::string &path, const BufferDecl &b) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) throw_error("input '", b.name, "': cannot open '", path, "'");
    const int64_t size = f.tellg(), want = elements(b) * elem_bytes(b.type);
    if (size != want)
        throw_error("input '", b.name, "': '", path, "' has ", size, " bytes, the kernel expects ", want, " (",
                    dtype_name(b.type), " ", shape_text(b.shape), ")");
    std::vector<uint8_t> data(size);
    f.seekg(0);
    f.read(reinterpret_cast<char *>(data.data()), size);
    return data;
}

std::vector<uint8_t> random_input(const BufferDecl &b, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    const int64_t n = elements(b);
    std::vector<uint8_t> data(n * elem_bytes(b.type));
    for (int64_t i = 0; i < n; i++) {
        if (b.type == DType::F16) {
            uint16_t h = float_to_half(dist(rng));
            std::memcpy(&data[i * 2], &h, 2);
        } else if (b.type == DType::F32) {
            float v = dist(rng);
            std::memcpy(&data[i * 4], &v, 4);
        } else {
            int32_t v = int32_t(rng() % 17) - 8;
            std::memcpy(&data[i * 4], &v, 4);
        }
    }
    return data;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"Runs a Spyre device program (.spyre) on the simulator and prints its modelled time and stats."};
    std::string program_path, trace_path, output_path, machine_path;
    std::vector<std::string> input_args;
    bool timing_only = false, json = false, dis = false;
    uint32_t seed = 1;
    app.add_option("program", program_path, "the .spyre file")->required();
    app.add_option("--input,-i", input_args,
                   "NAME=FILE: raw dense little-endian data for input NAME (default: random in [-4, 4])");
    app.add_option("--output,-o", output_path, "write the output buffer (raw, dense) to this file");
    app.add_option("--trace", trace_path, "write a Chrome trace event file");
    app.add_option("--machine", machine_path, "machine description JSON (default: the built-in machine)");
    app.add_option("--seed", seed, "seed of the random inputs");
    app.add_flag("--timing-only", timing_only, "no numerics; repeated loop iterations are summarised");
    app.add_flag("--json", json, "print the stats as JSON");
    app.add_flag("--dis", dis, "print the disassembly and exit");
    CLI11_PARSE(app, argc, argv);

    try {
        DeviceProgram program = read_program_file(program_path);
        if (dis) {
            std::cout << disassemble(program);
            return 0;
        }
        MachineDesc machine = machine_path.empty() ? MachineDesc{} : MachineDesc::from_file(machine_path);
        if (timing_only && !output_path.empty()) throw_error("--output needs a functional run (drop --timing-only)");

        std::map<std::string, std::string> files;
        for (const std::string &a : input_args) {
            size_t eq = a.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
                throw_error("--input '", a, "': expected NAME=FILE");
            if (!files.emplace(a.substr(0, eq), a.substr(eq + 1)).second)
                throw_error("--input: '", a.substr(0, eq), "' given twice");
        }
        std::vector<std::string> input_names;
        for (const BufferDecl &b : program.buffers)
            if (b.kind == BufferKind::Input) input_names.push_back(b.name);
        for (const auto &f : files)
            if (std::find(input_names.begin(), input_names.end(), f.first) == input_names.end()) {
                std::string known;
                for (const std::string &n : input_names) known += (known.empty() ? "" : ", ") + n;
                throw_error("--input: kernel ", program.kernel_name, " has no input '", f.first, "' (inputs: ", known, ")");
            }

        std::vector<std::vector<uint8_t>> images(program.buffers.size());
        int out = -1, next_seed = 0;
        if (!timing_only) {
            for (size_t i = 0; i < program.buffers.size(); i++) {
                const BufferDecl &b = program.buffers[i];
                if (b.kind == BufferKind::Output && out < 0) out = int(i);
                if (b.kind != BufferKind::Input) continue;
                auto it = files.find(b.name);
                std::vector<uint8_t> host = it != files.end() ? read_input(it->second, b)
                                                              : random_input(b, seed + uint32_t(next_seed++));
                images[i] = stickify(host.data(), b.shape, b.type, b.layout, machine.stick_bytes);
            }
        }
        SimOptions so;
        so.timing_only = timing_only;
        so.trace_path = trace_path;
        SimResult r = simulate(program, machine, images, so);
        const SimStats &s = r.stats;

        if (!output_path.empty() && out >= 0) {
            const BufferDecl &b = program.buffers[out];
            std::vector<uint8_t> host(elements(b) * elem_bytes(b.type));
            unstickify(r.buffers[out], host.data(), b.shape, b.type, b.layout, machine.stick_bytes);
            std::ofstream f(output_path, std::ios::binary);
            if (!f || !f.write(reinterpret_cast<const char *>(host.data()), host.size()))
                throw_error("cannot write output file '", output_path, "'");
        }

        if (json) {
            nlohmann::json j;
            j["kernel"] = program.kernel_name;
            j["program"] = program_path;
            j["cores"] = program.num_cores;
            j["mode"] = timing_only ? "timing_only" : "functional";
            j["stats"] = nlohmann::json::parse(s.to_json_text());
            if (!trace_path.empty()) j["trace"] = trace_path;
            std::cout << j.dump(2) << "\n";
        } else {
            std::cout << "kernel " << program.kernel_name << " (" << program.num_cores << " core"
                      << (program.num_cores == 1 ? "" : "s") << ", " << program.code.size() << " instructions, "
                      << (timing_only ? "timing only" : "functional") << ")\n";
            for (const BufferDecl &b : program.buffers)
                if (b.kind == BufferKind::Input || b.kind == BufferKind::Output)
                    std::cout << "  " << buffer_kind_name(b.kind) << " " << b.name << ": " << dtype_name(b.type) << " "
                              << shape_text(b.shape)
                              << (b.kind == BufferKind::Input ? (files.count(b.name) ? " (from " + files[b.name] + ")"
                                                                                     : std::string(timing_only ? "" : " (random)"))
                                                              : std::string())
                              << "\n";
            std::cout << std::fixed << std::setprecision(2) << "modelled time   " << s.us << " us (" << std::setprecision(0)
                      << s.cycles << " cycles at " << std::setprecision(2) << s.clock_ghz << " GHz)\n"
                      << "instructions    " << s.instructions << (timing_only ? " (loops summarised)" : "") << "\n"
                      << "DMA read        " << s.dram_read_bytes << " B\n"
                      << "DMA write       " << s.dram_write_bytes << " B\n"
                      << "ring            " << s.ring_bytes << " B\n"
                      << "LX peak         " << s.lx_peak_bytes << " B (max over cores)\n"
                      << "busy (mean)     vector " << std::setprecision(1) << 100 * s.mean_busy_fraction(kEngVector)
                      << "%, PE " << 100 * s.mean_busy_fraction(kEngPE) << "%, DMA "
                      << 100 * s.mean_busy_fraction(kEngDMA) << "%, ring " << 100 * s.mean_busy_fraction(kEngRing) << "%\n";
            if (!trace_path.empty()) std::cout << "trace           " << trace_path << "\n";
            if (!output_path.empty()) std::cout << "output          " << output_path << "\n";
        }
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "spyre-run: error: " << e.what() << "\n";
        return 1;
    }
}
