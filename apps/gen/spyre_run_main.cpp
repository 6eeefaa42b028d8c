// spyre-run: runs a .spyre device program, or a KTIR kernel (.ktir: IBM's ktdp MLIR dialect,
// imported by backend/ktir), on the simulator and prints its modelled time and stats.
//
//   spyre-run softmax.spyre                         random inputs (seeded), prints the stats
//   spyre-run k.spyre --input in=x.bin --output y.bin --trace t.json --json
//   spyre-run k.ktir --func add --arg n=4 --output out=y.bin   a KTIR function, scalar args, outputs
//   spyre-run k.spyre --timing-only                 no numerics, loops summarised (fast)
//   spyre-run k.spyre --dis                         print the disassembly and exit
//   spyre-run k.spyre --no-reference                no check against Halide's CPU reference
//
// Input and output files are raw, dense, little-endian arrays of the buffer's element type in
// Halide order (dim 0 innermost): exactly elements * element size bytes.
//
// After the timing figures come the model's validity notes (sim/model_validity.h): where the kernel
// leans on a mechanism outside the range the calibration suite validates, the modelled time is an
// extrapolation, and each note says which mechanism, the kernel's figure and the validated range.
//
// When NAME.json (spyre-gen's report) lies next to NAME.spyre and names the generator and its
// params, a functional run is checked against Halide's CPU reference: the same generator (linked
// in, as in spyre-gen) with schedule=cpu and the same params, realised for
// spyre::cpu_reference_target() on the same inputs, compared as spyre-report does (ULPs, or an
// absolute bound for mlp and attention: spyre::report::check_error). Exit status 1 if it differs
// by more than the tolerance.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "Halide.h"
#include "cpu_reference.h"
#include "device/disassembler.h"
#include "device/dtype_host.h"
#include "device/error.h"
#include "device/half.h"
#include "device/layout.h"
#include "device/program_io.h"
#include "generator_pipeline.h"
#include "kernel_catalog.h"
#include "ktir_import.h"
#include "sim/model_validity.h"
#include "sim/program_work.h"
#include "sim/simulator.h"

using namespace spyre;
namespace fs = std::filesystem;

namespace {

int64_t elements(const BufferDecl &b) {
    int64_t n = 1;
    for (int64_t e : b.shape) n *= e;
    return n;
}

int elem_bytes(DType t) { return dtype_bytes(t); }

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

// Random int32 inputs are drawn from [lo, hi] (--ints).
struct IntRange {
    int32_t lo = -8, hi = 8;
};

IntRange int_range(const std::string &text) {
    IntRange r;
    const size_t colon = text.find(':');
    try {
        size_t a = 0, b = 0;
        if (colon == std::string::npos) throw std::invalid_argument(text);
        const long long lo = std::stoll(text.substr(0, colon), &a), hi = std::stoll(text.substr(colon + 1), &b);
        if (a != colon || b != text.size() - colon - 1 || lo > hi || lo < INT32_MIN || hi > INT32_MAX)
            throw std::invalid_argument(text);
        r.lo = int32_t(lo);
        r.hi = int32_t(hi);
    } catch (const std::logic_error &) {
        throw_error("--ints: '", text, "' is not LO:HI, two int32 values with LO <= HI");
    }
    return r;
}

std::vector<uint8_t> random_input(const BufferDecl &b, uint32_t seed, float range, IntRange ints) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-range, range);
    const int64_t n = elements(b);
    std::vector<uint8_t> data(n * elem_bytes(b.type));
    for (int64_t i = 0; i < n; i++) {
        if (b.type == DType::F16) {
            uint16_t h = float_to_half(dist(rng));
            std::memcpy(&data[i * 2], &h, 2);
        } else if (b.type == DType::F32) {
            float v = dist(rng);
            std::memcpy(&data[i * 4], &v, 4);
        } else if (b.type == DType::I32) {
            int32_t v = int32_t(ints.lo + int64_t(rng() % (uint64_t(int64_t(ints.hi) - ints.lo) + 1)));
            std::memcpy(&data[i * 4], &v, 4);
        } else {
            data[i] = uint8_t(rng());  // every int8 or uint8 value
        }
    }
    return data;
}

Halide::Type halide_type(DType t) {
    return Halide::Type(dtype_host_type(t));
}

// A dense Halide buffer of `b`'s type and shape holding `host` (Halide order, dense).
Halide::Buffer<> host_buffer(const BufferDecl &b, const std::vector<uint8_t> &host) {
    std::vector<int> shape(b.shape.begin(), b.shape.end());
    Halide::Buffer<> buf(halide_type(b.type), shape);
    std::memcpy(buf.data(), host.data(), host.size());
    return buf;
}

// The outcome of the CPU reference check.
struct Reference {
    std::string status;  // "ok", "failed", "none" (no reference to check against) or "skipped"
    std::string reason;  // why "none" or "skipped"
    std::string generator;
    report::ErrorCheck error;
    report::Tolerance tolerance;

    std::string line() const {
        if (status == "ok" || status == "failed")
            return "reference: max error " + error.text + " (tolerance " + tolerance.text() + "): " +
                   (status == "ok" ? "ok" : "FAILED");
        return "reference: " + status + " (" + reason + ")";
    }
    nlohmann::json to_json() const {
        nlohmann::json j = {{"status", status}};
        if (!reason.empty()) j["reason"] = reason;
        if (status == "ok" || status == "failed") {
            j["generator"] = generator;
            j["max_error"] = error.text;
            j["max_ulp"] = error.ulp;
            j["max_abs_error"] = std::isfinite(error.abs) ? nlohmann::json(error.abs) : nlohmann::json("inf");
            j["tolerance"] = tolerance.text();
        }
        return j;
    }
};

// spyre-gen's report next to the program (NAME.json for NAME.spyre), when it names the generator
// and its params; null otherwise.
nlohmann::json generator_report(const std::string &program_path) {
    fs::path p(program_path);
    p.replace_extension(".json");
    std::ifstream f(p);
    if (!f) return nullptr;
    nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("generator") || !j["generator"].is_string() || !j.contains("params") ||
        !j["params"].is_object())
        return nullptr;
    return j;
}

// Realises the report's generator with schedule=cpu on `inputs` (host data of the program's input
// buffers, by buffer index) and compares each output the device wrote (`got`, by buffer index) with
// it; the worst of them is the result. The tolerance is the catalogue's, or the generator's own
// (GeneratorInfo::reference_ulp).
Reference check_reference(const nlohmann::json &gen_report, const DeviceProgram &program,
                          const std::vector<std::vector<uint8_t>> &inputs, const std::map<int, std::vector<uint8_t>> &got) {
    Reference ref;
    ref.generator = gen_report["generator"].get<std::string>();
    const std::vector<std::string> &apps = report::app_names();
    const gen::GeneratorInfo *info = gen::find_generator_info(ref.generator);
    if (std::find(apps.begin(), apps.end(), ref.generator) != apps.end()) {
        ref.tolerance = report::tolerance(ref.generator);
    } else if (info && info->reference_ulp >= 0) {
        ref.tolerance.ulp = info->reference_ulp;
    } else {
        ref.status = "none";
        ref.reason = "no tolerance for generator '" + ref.generator + "'";
        return ref;
    }
    const std::vector<std::string> linked = Halide::Internal::GeneratorRegistry::enumerate();
    if (std::find(linked.begin(), linked.end(), ref.generator) == linked.end()) {
        ref.status = "none";
        ref.reason = "generator '" + ref.generator + "' is not linked into spyre-run";
        return ref;
    }
    std::map<std::string, std::string> params;
    for (const auto &p : gen_report["params"].items())
        params[p.key()] = p.value().is_string() ? p.value().get<std::string>() : p.value().dump();
    params["schedule"] = "cpu";
    // The CPU schedule does not depend on the machine; a machine file since moved is no reason to fail.
    if (params.count("machine") && !params["machine"].empty() && !fs::exists(params["machine"])) params["machine"] = "";

    const Halide::Target target = cpu_reference_target();
    gen::BuiltGenerator built = gen::build_generator(ref.generator, target, params);
    std::map<std::string, Halide::Internal::Parameter> bufs = gen::buffer_parameters(built.pipeline);
    for (size_t i = 0; i < program.buffers.size(); i++) {
        const BufferDecl &b = program.buffers[i];
        if (b.kind != BufferKind::Input) continue;
        auto it = bufs.find(b.name);
        if (it == bufs.end())
            throw_error("reference: generator ", ref.generator, "'s pipeline has no input '", b.name, "'");
        it->second.set_buffer(host_buffer(b, inputs[i]));
    }
    std::vector<Halide::Buffer<>> wants;
    for (const auto &g : got) {
        const BufferDecl &o = program.buffers[size_t(g.first)];
        wants.emplace_back(halide_type(o.type), std::vector<int>(o.shape.begin(), o.shape.end()));
    }
    if (wants.size() != built.pipeline.outputs().size())
        throw_error("reference: generator ", ref.generator, " has ", built.pipeline.outputs().size(),
                    " outputs, the kernel writes ", wants.size());
    built.pipeline.realize(Halide::Realization(wants), target);
    for (auto &b : bufs) b.second.set_buffer(Halide::Buffer<>());

    // The first output out of tolerance, or else the one furthest from the CPU.
    auto distance = [&](const report::ErrorCheck &c) { return ref.tolerance.absolute() ? c.abs : double(c.ulp); };
    size_t k = 0;
    for (const auto &g : got) {
        const BufferDecl &o = program.buffers[size_t(g.first)];
        Halide::Buffer<> device = host_buffer(o, g.second);
        report::ErrorCheck e = report::check_error(ref.tolerance, *device.get(), *wants[k].get());
        if (got.size() > 1) e.text += " (" + o.name + ")";
        if (k++ == 0 || (ref.error.ok && (!e.ok || distance(e) > distance(ref.error)))) ref.error = e;
    }
    ref.status = ref.error.ok ? "ok" : "failed";
    return ref;
}

// Parses NAME=VALUE arguments of `option` into a map (each NAME once).
std::map<std::string, std::string> name_values(const std::vector<std::string> &args, const char *option,
                                               const char *value_name) {
    std::map<std::string, std::string> out;
    for (const std::string &a : args) {
        size_t eq = a.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
            throw_error(option, " '", a, "': expected NAME=", value_name);
        if (!out.emplace(a.substr(0, eq), a.substr(eq + 1)).second)
            throw_error(option, ": '", a.substr(0, eq), "' given twice");
    }
    return out;
}

// KTIR is MLIR text: IBM's tools write it as .ktir, ktir-cpu's examples as .mlir.
bool is_ktir(const std::string &path) {
    const fs::path ext = fs::path(path).extension();
    return ext == ".ktir" || ext == ".mlir";
}

// The device program of a .spyre file, or of a KTIR function lowered by the importer.
DeviceProgram load_program(const std::string &path, const std::string &func, const std::vector<std::string> &args,
                           const MachineDesc &machine) {
    if (!is_ktir(path)) {
        if (!func.empty() || !args.empty()) throw_error("--func and --arg apply to .ktir kernels only");
        return read_program_file(path);
    }
    ktir::ImportOptions o;
    o.func = func;
    o.args = name_values(args, "--arg", "VALUE");
    o.machine = machine;
    return ktir::import_ktir_file(path, o);
}

// Where each output goes: `-o FILE` / `--output FILE` names the only output, `--output NAME=FILE` one
// of several (by buffer name).
std::map<int, std::string> output_files(const DeviceProgram &program, const std::vector<std::string> &args) {
    std::vector<int> outs;
    std::string names;
    for (size_t i = 0; i < program.buffers.size(); i++)
        if (program.buffers[i].kind == BufferKind::Output || program.buffers[i].kind == BufferKind::InOut) {
            outs.push_back(int(i));
            names += (names.empty() ? "" : ", ") + program.buffers[i].name;
        }
    std::map<int, std::string> files;
    for (const std::string &a : args) {
        size_t eq = a.find('=');
        int which = -1;
        std::string file = a;
        if (eq != std::string::npos && eq > 0) {
            for (int o : outs)
                if (program.buffers[size_t(o)].name == a.substr(0, eq)) which = o;
            if (which < 0)
                throw_error("--output '", a, "': kernel ", program.kernel_name, " has no output '", a.substr(0, eq),
                            "' (outputs: ", names, ")");
            file = a.substr(eq + 1);
        } else {
            if (outs.size() != 1)
                throw_error("--output '", a, "': kernel ", program.kernel_name, " has ", outs.size(),
                            " outputs (", names, "); name one as --output NAME=FILE");
            which = outs[0];
        }
        if (file.empty()) throw_error("--output '", a, "': no file name");
        if (!files.emplace(which, file).second)
            throw_error("--output: output '", program.buffers[size_t(which)].name, "' given twice");
    }
    return files;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"Runs a Spyre device program (.spyre) or a KTIR kernel (.ktir, .mlir) on the simulator and prints its "
                 "modelled time and stats."};
    std::string program_path, trace_path, machine_path, func;
    std::vector<std::string> input_args, output_args, scalar_args;
    bool timing_only = false, json = false, dis = false, no_reference = false;
    uint32_t seed = 1;
    std::string ints_text = "-8:8";
    app.add_option("program", program_path, "the .spyre file, or a .ktir or .mlir file (KTIR: IBM's ktdp MLIR dialect)")
        ->required();
    app.add_option("--func", func, "KTIR: the function to run (default: the module's only function)");
    app.add_option("--arg", scalar_args,
                   "KTIR: NAME=VALUE for a scalar argument of the function (index, integer, f16 or f32)")
        ->allow_extra_args(false);
    app.add_option("--input,-i", input_args,
                   "NAME=FILE: raw dense little-endian data for input NAME, required for an in-out buffer (a KTIR "
                   "kernel's buffer that is loaded and stored; it is an output too) (default: random floats in [-4, 4], or "
                   "in the range of the app's tolerance for a catalogue generator's program, e.g. [-1, 1] for "
                   "flash_attention)");
    app.add_option("--output,-o", output_args,
                   "FILE: write the output buffer (raw, dense) to FILE; NAME=FILE: the output NAME, when there are "
                   "several")
        ->allow_extra_args(false);
    app.add_option("--trace", trace_path, "write a Chrome trace event file");
    app.add_option("--machine", machine_path, "machine description JSON (default: the built-in machine)");
    app.add_option("--seed", seed, "seed of the random inputs");
    app.add_option("--ints", ints_text,
                   "LO:HI: the range of random int32 inputs (default -8:8); the indices of a KTIR gather or scatter "
                   "(ind(...)) must lie in the rows of the view they index");
    app.add_flag("--timing-only", timing_only, "no numerics; repeated loop iterations are summarised");
    app.add_flag("--json", json, "print the stats as JSON");
    app.add_flag("--dis", dis, "print the disassembly and exit");
    app.add_flag("--no-reference", no_reference,
                 "do not check the output against Halide's CPU reference (the generator named by the "
                 "spyre-gen report NAME.json next to the program, with schedule=cpu)");
    CLI11_PARSE(app, argc, argv);

    try {
        MachineDesc machine = machine_path.empty() ? MachineDesc{} : MachineDesc::from_file(machine_path);
        DeviceProgram program = load_program(program_path, func, scalar_args, machine);
        if (dis) {
            std::cout << disassemble(program);
            return 0;
        }
        const IntRange ints = int_range(ints_text);
        if (timing_only && !output_args.empty()) throw_error("--output needs a functional run (drop --timing-only)");
        const std::map<int, std::string> out_files = output_files(program, output_args);

        std::map<std::string, std::string> files = name_values(input_args, "--input", "FILE");
        std::vector<std::string> input_names;
        for (const BufferDecl &b : program.buffers)
            if (b.kind == BufferKind::Input || b.kind == BufferKind::InOut) input_names.push_back(b.name);
        for (const auto &f : files)
            if (std::find(input_names.begin(), input_names.end(), f.first) == input_names.end()) {
                std::string known;
                for (const std::string &n : input_names) known += (known.empty() ? "" : ", ") + n;
                throw_error("--input: kernel ", program.kernel_name, " has no input '", f.first, "' (inputs: ", known, ")");
            }

        std::vector<std::vector<uint8_t>> images(program.buffers.size()), hosts(program.buffers.size());
        int out = -1, next_seed = 0;
        // A catalogue generator's program gets inputs in the range its tolerance is stated for.
        float range = 4.0f;
        if (const nlohmann::json r = generator_report(program_path); !r.is_null()) {
            const std::string g = r["generator"].get<std::string>();
            const std::vector<std::string> &apps = report::app_names();
            if (std::find(apps.begin(), apps.end(), g) != apps.end()) range = report::input_range(g);
        }
        if (!timing_only) {
            for (size_t i = 0; i < program.buffers.size(); i++) {
                const BufferDecl &b = program.buffers[i];
                if ((b.kind == BufferKind::Output || b.kind == BufferKind::InOut) && out < 0) out = int(i);
                if (b.kind != BufferKind::Input && b.kind != BufferKind::InOut) continue;
                auto it = files.find(b.name);
                // The kernel reads what it then overwrites: random contents would be a made-up
                // result, zeros a silently wrong one.
                if (b.kind == BufferKind::InOut && it == files.end())
                    throw_error("buffer '", b.name, "' is both read and written by kernel ", program.kernel_name,
                                " (inout): give its initial contents with --input ", b.name, "=FILE");
                hosts[i] = it != files.end() ? read_input(it->second, b) : random_input(b, seed + uint32_t(next_seed++), range, ints);
                images[i] = stickify(hosts[i].data(), b.shape, b.type, b.layout, machine.stick_bytes);
            }
        }
        SimOptions so;
        so.timing_only = timing_only;
        so.trace_path = trace_path;
        SimResult r = simulate(program, machine, images, so);
        const SimStats &s = r.stats;
        const std::vector<ValidityNote> validity = model_validity(program, s, machine);

        // Outputs, dense in Halide order (functional runs).
        auto host_of = [&](int i) {
            const BufferDecl &b = program.buffers[size_t(i)];
            std::vector<uint8_t> h(size_t(elements(b) * elem_bytes(b.type)));
            unstickify(r.buffers[size_t(i)], h.data(), b.shape, b.type, b.layout, machine.stick_bytes);
            return h;
        };
        std::vector<uint8_t> host;  // the first output
        if (!timing_only && out >= 0) host = host_of(out);
        for (const auto &of : out_files) {
            std::vector<uint8_t> h = of.first == out ? host : host_of(of.first);
            std::ofstream f(of.second, std::ios::binary);
            if (!f || !f.write(reinterpret_cast<const char *>(h.data()), std::streamsize(h.size())))
                throw_error("cannot write output file '", of.second, "'");
        }

        Reference ref;
        if (no_reference) {
            ref.status = "skipped";
            ref.reason = "--no-reference";
        } else if (timing_only || out < 0) {
            ref.status = "none";
            ref.reason = timing_only ? "timing-only run" : "the kernel has no output";
        } else if (nlohmann::json gen_report = generator_report(program_path); gen_report.is_null()) {
            ref.status = "none";
            ref.reason = "no spyre-gen report next to the kernel";
        } else {
            std::map<int, std::vector<uint8_t>> outputs;  // every output (the first already copied)
            for (size_t i = 0; i < program.buffers.size(); i++)
                if (program.buffers[i].kind == BufferKind::Output || program.buffers[i].kind == BufferKind::InOut)
                    outputs[int(i)] = int(i) == out ? host : host_of(int(i));
            ref = check_reference(gen_report, program, hosts, outputs);
        }

        if (json) {
            nlohmann::json j;
            j["kernel"] = program.kernel_name;
            j["program"] = program_path;
            j["cores"] = program.num_cores;
            j["mode"] = timing_only ? "timing_only" : "functional";
            j["stats"] = nlohmann::json::parse(s.to_json_text());
            const ProgramWork w = program_work(program, machine);
            j["static_work"] = {{"instructions", w.instructions}, {"dma_bytes", w.dma_bytes},
                                {"vector_bytes", w.vector_bytes}, {"macs", w.macs},
                                {"ring_bytes", w.ring_bytes},     {"counts_known", w.counts_known}};
            j["model_validity"] = nlohmann::json::array();
            for (const ValidityNote &v : validity) j["model_validity"].push_back({{"key", v.key}, {"message", v.message}});
            if (!trace_path.empty()) j["trace"] = trace_path;
            j["reference"] = ref.to_json();
            std::cout << j.dump(2) << "\n";
            if (ref.status == "failed") std::cerr << "spyre-run: " << ref.line() << "\n";
        } else {
            std::cout << "kernel " << program.kernel_name << " (" << program.num_cores << " core"
                      << (program.num_cores == 1 ? "" : "s") << ", " << program.code.size() << " instructions, "
                      << (timing_only ? "timing only" : "functional") << ")\n";
            for (const BufferDecl &b : program.buffers)
                if (b.kind != BufferKind::Temp)
                    std::cout << "  " << buffer_kind_name(b.kind) << " " << b.name << ": " << dtype_name(b.type) << " "
                              << shape_text(b.shape)
                              << (b.kind == BufferKind::Input || b.kind == BufferKind::InOut ? (files.count(b.name) ? " (from " + files[b.name] + ")"
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
                      << 100 * s.mean_busy_fraction(kEngDMA) << "%, ring " << 100 * s.mean_busy_fraction(kEngRing) << "%\n"
                      << "waiting (mean)  " << s.top_waits(kNumWaitCauses) << "\n";
            std::cout << "static work     " << program_work(program, machine).to_string() << "\n";
            if (validity.empty()) std::cout << "model validity  within the calibrated range\n";
            for (const ValidityNote &v : validity) std::cout << "model validity  " << v.key << ": " << v.message << "\n";
            if (!trace_path.empty()) std::cout << "trace           " << trace_path << "\n";
            for (const auto &of : out_files)
                std::cout << "output          " << program.buffers[size_t(of.first)].name << " -> " << of.second
                          << "\n";
            std::cout << ref.line() << "\n";
        }
        return ref.status == "failed" ? 1 : 0;
    } catch (const std::exception &e) {
        std::cerr << "spyre-run: error: " << e.what() << "\n";
        return 1;
    }
}
