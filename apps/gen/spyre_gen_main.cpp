// spyre-gen: every Spyre generator in one driver binary.
//
//   spyre-gen -g softmax -o out/ schedule=stage4 cols=1024 rows=512 [machine=path.json] [-n name]
//       writes out/<name>.spyre (the device program), out/<name>.h (a host function that runs it
//       on the simulator), out/<name>.s (its disassembly) and out/<name>.json (compile report).
//   spyre-gen -g softmax -o out/ -e ktir schedule=stage4 ...
//       also writes out/<name>.ktir: the device program as KTIR (IBM's ktdp MLIR dialect, docs/ktir.md).
//   spyre-gen -l          lists the generators, their parameters and Spyre schedules.
//   spyre-gen -e ... / -r ...  Halide's own generator command line (GenGen), used by
//       add_halide_library for the CPU reference (schedule=cpu); `target=host` means
//       spyre::cpu_reference_target(true) (the host's whole ISA).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "Halide.h"
#include "compile.h"
#include "cpu_reference.h"
#include "device/disassembler.h"
#include "device/error.h"
#include "device/program_io.h"
#include "generator_info.h"
#include "generator_pipeline.h"
#include "ktir_export.h"
#include "sim/simulator.h"

namespace fs = std::filesystem;
using spyre::gen::GeneratorInfo;

namespace {

const char *kUsage = R"(usage:
  spyre-gen -g GENERATOR -o DIR [-n NAME] [-e ktir] key=value...
  spyre-gen -l
  spyre-gen -e OUTPUTS -g GENERATOR -o DIR ... target=...   (Halide's generator command line)

Compiles a Spyre generator's pipeline into a device program and writes, in DIR:
  NAME.spyre  the device program (build/bin/spyre-run runs it)
  NAME.h      `int NAME(halide_buffer_t *input..., halide_buffer_t *output)`, which runs NAME.spyre
              on the simulator (link spyre_host)
  NAME.s      its disassembly
  NAME.json   compile report: cores, LX peak per core, DMA bytes, modelled time (timing-only run)
  NAME.schedule.cpp  with schedule=auto: the directives spyre::auto_schedule chose, as C++

options:
  -g GENERATOR  the generator (spyre-gen -l lists them)
  -o DIR        output directory (created if missing)
  -n NAME       base name of the files and of the host function (default: the generator's name)
  -e ktir       also write NAME.ktir: the device program as KTIR, IBM's ktdp MLIR dialect
                (spyre-run runs it; docs/ktir.md)
  -l            list generators, their parameters and schedules
  --free-layouts NAMES  with schedule=auto: the arguments (comma-separated input names, or the
                output's; * for all) whose device layouts the search may choose, the order of
                their dims with the stick count innermost (AutoOptions::free_layouts). The
                program records the layouts; NAME.json lists them; the host function takes and
                gives dense Halide buffers as before
  --layout NAME=LAYOUT  the device layout of argument NAME (an input, or the output), for any
                schedule: row_major (the default), torch_spyre (torch-spyre's default: the stick
                count just outside the outermost dim, [B,M,K] -> (M, K/64, B, 64)), or the device dims outermost first, Halide's dims d1, d2, ...
                and the stick count of d0 as s ("d2,s,d1": the batch outermost). Repeatable. The
                host function still takes and gives dense Halide buffers (docs/directives.md)
  --tuning-db[=FILE]  with schedule=auto: look the search up in the tuning database FILE (an
                SQLite file, default spyre-tune.db, created if missing) and apply the stored
                schedule without searching; otherwise search and store the result there. The key
                is a fingerprint of the pipeline, shapes, layouts, machine and search options
  -h, --help    this text

parameters (key=value):
  schedule=S    one of the generator's Spyre schedules (required; "cpu" is the CPU reference
                schedule, for add_halide_library only; "auto" searches for one: spyre::auto_schedule)
  cols=N rows=N the shape (defaults 1024 x 512) of softmax, layernorm, rmsnorm and gelu; the
                other generators have their own integer parameters (spyre-gen -l): bmm batch,
                rows, inner, cols, cores; linear rows, inner, cols, cores; mlp dim, hidden, rows,
                cores; attention dim, seq
  machine=FILE  a machine description JSON (default: the built-in machine)
)";

struct Usage : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string join(const std::vector<std::string> &v) {
    std::string s;
    for (const std::string &x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

std::vector<std::string> generator_names() {
    std::vector<std::string> n;
    for (const auto &e : spyre::gen::generator_infos()) n.push_back(e.first);
    return n;
}


int list_generators() {
    for (const auto &e : spyre::gen::generator_infos()) {
        const GeneratorInfo &g = e.second;
        std::cout << g.name << ": " << g.description << "\n";
        std::cout << "  schedules: " << join(g.schedules()) << " (and cpu, the CPU reference)\n";
        std::vector<std::string> params;
        for (const auto &p : spyre::gen::param_defaults(g))
            params.push_back(p.first + "=" + (p.second.empty() ? "\"\"" : p.second));
        std::cout << "  params:    " << join(params) << "\n";
    }
    return 0;
}

int64_t positive_int(const std::string &key, const std::string &value) {
    size_t pos = 0;
    long long v = 0;
    try {
        v = std::stoll(value, &pos);
    } catch (const std::exception &) {
        pos = 0;
    }
    if (pos != value.size() || value.empty() || v < 1 || v > (1 << 20))
        throw Usage("parameter " + key + "=" + value + ": expected an integer in [1, 1048576]");
    return v;
}

std::string c_identifier(const std::string &s) {
    std::string r;
    for (char c : s) r += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
    return r;
}

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s = "{";
    for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "}";
}

void write_text(const fs::path &path, const std::string &text) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot write '" + path.string() + "'");
    f << text;
    if (!f.flush()) throw std::runtime_error("error writing '" + path.string() + "'");
}

std::string host_header(const std::string &name, const spyre::DeviceProgram &p, const fs::path &program_path,
                        const std::string &machine_path, const std::string &command) {
    std::string fn = c_identifier(name);
    std::ostringstream h;
    h << "// Generated by spyre-gen: " << command << "\n"
      << "// Runs " << program_path.filename().string() << " on the Spyre simulator. Returns 0, or -1 after printing\n"
      << "// the error. Buffers: Halide order (dim 0 innermost), any strides; Halide::Runtime::Buffer<>\n"
      << "// converts to halide_buffer_t *. Link the spyre_host library.\n"
      << "#pragma once\n\n#include \"spyre_host.h\"\n\n";
    std::vector<std::string> in_args, out_args;
    for (const spyre::BufferDecl &b : p.buffers) {
        bool input = b.kind == spyre::BufferKind::Input;
        if (!input && b.kind != spyre::BufferKind::Output) continue;
        h << "//   " << (input ? "input  " : "output ") << b.name << ": " << spyre::dtype_name(b.type) << " "
          << shape_text(b.shape) << "\n";
        (input ? in_args : out_args).push_back(c_identifier(b.name) + "_buffer");
    }
    // Inputs first, then the outputs (Halide's order).
    std::vector<std::string> ordered;
    for (const std::string &a : in_args) ordered.push_back("halide_buffer_t *" + a);
    for (const std::string &a : out_args) ordered.push_back("halide_buffer_t *" + a);
    h << "\n// The device program, as written by spyre-gen.\n"
      << "inline const char *" << fn << "_program_path() { return " << nlohmann::json(program_path.string()).dump()
      << "; }\n\n"
      << "inline int " << fn << "(" << join(ordered) << ", spyre::SimStats *stats = nullptr) {\n"
      << "    return spyre::host::run_kernel_file(" << fn << "_program_path(), " << nlohmann::json(machine_path).dump()
      << ", {" << join(in_args) << "}, {" << join(out_args) << "}, stats);\n"
      << "}\n";
    return h.str();
}

// Halide's GenGen command line, for add_halide_library: `target=host...` becomes the CPU reference
// target (strict float, no AVX512-FP16 misdetection).
int gengen(int argc, char **argv) {
    std::vector<std::string> args(argv, argv + argc);
    for (std::string &a : args) {
        if (a.rfind("target=", 0) != 0) continue;
        std::string targets = a.substr(7), rewritten;
        std::stringstream ss(targets);
        std::string t;
        while (std::getline(ss, t, ',')) {
            if (t == "host" || t.rfind("host-", 0) == 0) {
                Halide::Target ref = spyre::cpu_reference_target(true).without_feature(Halide::Target::JIT);
                std::string rest = t.substr(4);  // "" or "-feature-..."
                t = Halide::Target(ref.to_string() + rest).to_string();
            }
            rewritten += (rewritten.empty() ? "" : ",") + t;
        }
        a = "target=" + rewritten;
    }
    std::vector<char *> cargs;
    for (std::string &a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    return Halide::Internal::generate_filter_main(argc, cargs.data(), std::cerr);
}

int generate(const std::string &generator, const std::string &out_dir, std::string name,
             const std::vector<std::string> &kv, const std::string &command, bool emit_ktir,
             spyre::gen::AutoRequest request, const std::map<std::string, std::string> &layout_texts) {
    const std::vector<std::string> &free_layouts = request.free_layouts;
    const GeneratorInfo *info = spyre::gen::find_generator_info(generator);
    if (!info) throw Usage("unknown generator '" + generator + "' (known: " + join(generator_names()) + ")");
    if (name.empty()) name = generator;
    std::map<std::string, std::string> defaults = spyre::gen::param_defaults(*info), params;
    for (const std::string &a : kv) {
        size_t eq = a.find('=');
        std::string key = a.substr(0, eq), value = a.substr(eq + 1);
        if (!defaults.count(key)) {
            std::vector<std::string> known;
            for (const auto &d : defaults) known.push_back(d.first);
            throw Usage("generator " + generator + " has no parameter '" + key + "' (known: " + join(known) + ")");
        }
        if (params.count(key)) throw Usage("parameter '" + key + "' given twice");
        params[key] = value;
    }
    std::vector<std::string> schedules = info->schedules();
    if (!params.count("schedule"))
        throw Usage("generator " + generator + " needs schedule=S (one of: " + join(schedules) + ")");
    const std::string schedule = params["schedule"];
    if (schedule == "cpu")
        throw Usage("schedule=cpu is the CPU reference schedule (for add_halide_library); spyre-gen compiles a "
                    "Spyre schedule: one of " + join(schedules));
    if (std::find(schedules.begin(), schedules.end(), schedule) == schedules.end())
        throw Usage("generator " + generator + " has no schedule '" + schedule + "' (known: " + join(schedules) + ")");
    if (!free_layouts.empty() && schedule != "auto")
        throw Usage("--free-layouts lets schedule=auto choose layouts; schedule=" + schedule + " is a named schedule");
    if (!request.tuning_db.empty() && schedule != "auto")
        throw Usage("--tuning-db stores and reuses schedule=auto's searches; schedule=" + schedule + " is a named schedule");
    for (const auto &d : defaults)
        if (!params.count(d.first)) params[d.first] = d.second;
    spyre::gen::ParamValues values;
    std::string shape_desc;  // "COLSxROWS", or "name=value ..." for a generator with its own int params
    for (const spyre::gen::IntParam &ip : info->integer_params()) {
        values[ip.name] = positive_int(ip.name, params[ip.name]);
        shape_desc += (shape_desc.empty() ? "" : " ") + ip.name + "=" + std::to_string(values[ip.name]);
    }
    if (info->int_params.empty()) shape_desc = std::to_string(values["cols"]) + "x" + std::to_string(values["rows"]);
    std::string machine_path = params["machine"];
    spyre::MachineDesc machine;
    if (!machine_path.empty()) {
        if (!fs::exists(machine_path)) throw Usage("machine description '" + machine_path + "' does not exist");
        machine_path = fs::absolute(machine_path).string();
        params["machine"] = machine_path;
        machine = spyre::MachineDesc::from_file(machine_path);
    }

    // The output directory: created if missing, and checked writable before the (slow) compile.
    fs::path dir(out_dir);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
        throw std::runtime_error("cannot create output directory '" + out_dir + "': " +
                                 (ec ? ec.message() : std::string("not a directory")));
    {
        fs::path probe = dir / (name + ".spyre.tmp");
        std::ofstream f(probe);
        if (!f) throw std::runtime_error("output directory '" + out_dir + "' is not writable");
        f.close();
        fs::remove(probe, ec);
    }

    // --layout: each name an argument, each layout one of its rank.
    {
        std::vector<spyre::gen::BufferShape> all = info->input_shapes(values);
        for (const spyre::gen::BufferShape &b : info->output_shapes(values)) all.push_back(b);
        for (const auto &[arg, text] : layout_texts) {
            auto it = std::find_if(all.begin(), all.end(), [&](const spyre::gen::BufferShape &b) { return b.name == arg; });
            if (it == all.end()) {
                std::vector<std::string> names;
                for (const spyre::gen::BufferShape &b : all) names.push_back(b.name);
                throw Usage("--layout names '" + arg + "', which is not an argument of " + generator + " (its arguments: " +
                            join(names) + ")");
            }
            try {
                request.layouts[arg] = spyre::parse_layout(text, int(it->shape.size()), "--layout " + arg);
            } catch (const spyre::Error &e) {
                throw Usage(e.what());
            }
        }
    }

    // Build the generator's pipeline, then compile it for Spyre.
    spyre::gen::BuiltGenerator built =
        spyre::gen::build_generator(generator, Halide::get_host_target(), params, request);
    Halide::Pipeline pipeline = built.pipeline;

    std::vector<spyre::gen::BufferShape> in_shapes = info->input_shapes(values);
    std::vector<Halide::Argument> inferred = pipeline.infer_arguments(), args;
    spyre::CompileOptions opt;
    opt.kernel_name = name;
    opt.machine = machine;
    for (const spyre::gen::BufferShape &s : in_shapes) {
        auto it = std::find_if(inferred.begin(), inferred.end(), [&](const Halide::Argument &a) { return a.name == s.name; });
        if (it == inferred.end())
            throw std::runtime_error("generator " + generator + ": the pipeline has no input '" + s.name + "'");
        args.push_back(*it);
        opt.inputs.push_back(spyre::TensorSpec{s.shape, spyre::gen::layout_of(s, request)});
    }
    if (args.size() != inferred.size())
        throw std::runtime_error("generator " + generator + ": the pipeline has " + std::to_string(inferred.size()) +
                                 " arguments, the generator info names " + std::to_string(args.size()));
    // (An info that names more or fewer outputs than the pipeline has is refused by the compile.)
    const std::vector<spyre::gen::BufferShape> out_shapes = info->output_shapes(values);
    std::vector<spyre::TensorSpec> outputs;
    for (const spyre::gen::BufferShape &s : out_shapes) outputs.push_back(spyre::TensorSpec{s.shape, spyre::gen::layout_of(s, request)});
    // schedule=auto with --free-layouts: the layouts the search chose.
    const std::vector<spyre::DeviceLayout> &chosen = built.auto_choice.layouts;
    if (schedule == "auto" && chosen.size() == opt.inputs.size() + outputs.size()) {
        for (size_t i = 0; i < opt.inputs.size(); i++) opt.inputs[i].layout = chosen[i];
        for (size_t i = 0; i < outputs.size(); i++) outputs[i].layout = chosen[opt.inputs.size() + i];
    }
    opt.output = outputs[0];
    if (outputs.size() > 1) opt.outputs = outputs;
    spyre::DeviceProgram program = spyre::compile_pipeline_for_spyre(pipeline, args, opt);

    // The report's figures come from a timing-only run (no numerics; loops summarised).
    spyre::SimOptions so;
    so.timing_only = true;
    spyre::SimStats stats = spyre::simulate(program, machine, {}, so).stats;

    fs::path base = dir / name;
    fs::path spyre_path = fs::absolute(fs::path(base.string() + ".spyre"));
    spyre::write_program_file(program, spyre_path.string());
    write_text(base.string() + ".s", spyre::disassemble(program));
    if (emit_ktir) {
        // The program's LX moves to the top of LX, clear of the tensors IBM's interpreter keeps at
        // the bottom (ktir_export.h); its high water from a run of every iteration, as summarised
        // loops skip some addresses.
        spyre::SimOptions exact;
        exact.timing_only = true;
        exact.summarize_loops = false;
        spyre::ktir::ExportOptions eo;
        try {
            eo.lx_high_water_bytes = spyre::simulate(program, machine, {}, exact).stats.lx_peak_bytes;
        } catch (const spyre::Error &e) {
            // A kernel too large to step through every iteration (the simulator's budgets) keeps its
            // LX where the program has it: the file is still exact, only less fit for ktir-cpu.
            std::cerr << "spyre-gen: the KTIR keeps the program's LX addresses (no spyre.lx_offset): " << e.what()
                      << "\n";
        }
        write_text(base.string() + ".ktir", spyre::ktir::export_ktir(program, machine, eo));
    }
    write_text(base.string() + ".h", host_header(name, program, spyre_path, machine_path, command));

    nlohmann::json r;
    r["kernel"] = name;
    r["generator"] = generator;
    r["schedule"] = schedule;
    r["params"] = params;
    r["cores"] = program.num_cores;
    r["instructions"] = program.code.size();
    nlohmann::json bufs = nlohmann::json::array();
    for (size_t i = 0; i < program.buffers.size(); i++) {
        const spyre::BufferDecl &b = program.buffers[i];
        bufs.push_back({{"name", b.name}, {"kind", spyre::buffer_kind_name(b.kind)}, {"type", spyre::dtype_name(b.type)},
                        {"shape", b.shape}, {"layout", spyre::layout_to_string(b.layout)},
                        {"device_bytes", program.buffer_bytes(i, machine.stick_bytes)}});
    }
    r["buffers"] = bufs;
    std::vector<int64_t> lx;
    for (const spyre::CoreStats &c : stats.cores) lx.push_back(c.lx_peak_bytes);
    r["lx_peak_bytes"] = stats.lx_peak_bytes;
    r["lx_peak_bytes_per_core"] = lx;
    r["lx_usable_bytes"] = machine.lx_usable_bytes;
    r["dma_read_bytes"] = stats.dram_read_bytes;
    r["dma_write_bytes"] = stats.dram_write_bytes;
    r["ring_bytes"] = stats.ring_bytes;
    r["modelled_cycles"] = stats.cycles;
    r["modelled_us"] = stats.us;
    r["timing"] = "timing-only simulation (modelled, loops summarised)";
    write_text(base.string() + ".json", r.dump(2) + "\n");
    // schedule=auto: the directives the autoscheduler chose, as C++ to paste into schedules/.
    const bool auto_sched = schedule == "auto" && !built.auto_choice.schedule_source.empty();
    if (auto_sched) write_text(base.string() + ".schedule.cpp", built.auto_choice.schedule_source);

    std::cout << name << ": " << generator << " schedule=" << schedule << " " << shape_desc << ", "
              << program.num_cores << " core(s), LX peak " << stats.lx_peak_bytes << " B, DMA "
              << stats.dram_read_bytes << " B in / " << stats.dram_write_bytes << " B out, modelled " << stats.us
              << " us -> " << base.string() << ".{spyre,h,s,json" << (emit_ktir ? ",ktir" : "")
              << (auto_sched ? ",schedule.cpp}\n" : "}\n");
    if (auto_sched && !request.tuning_db.empty())
        std::cout << name << ": schedule=auto " << (built.auto_choice.from_tuning_db ? "from" : "searched, stored in")
                  << " the tuning database " << request.tuning_db << " (entry " << built.auto_choice.fingerprint << ")\n";
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    // `-e ktir` asks for the KTIR export; any other -e is Halide's generator command line.
    bool emit_ktir = false;
    for (size_t i = 0; i + 1 < args.size(); i++)
        if (args[i] == "-e" && args[i + 1] == "ktir") {
            emit_ktir = true;
            args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
            break;
        }
    for (const std::string &a : args)
        if (a == "-e" || a == "-r") return gengen(argc, argv);
    try {
        std::string generator, out_dir, name;
        spyre::gen::AutoRequest request;
        std::vector<std::string> &free_layouts = request.free_layouts;
        std::map<std::string, std::string> layout_texts;  // --layout NAME=LAYOUT, parsed once the ranks are known
        bool list = false;
        std::vector<std::string> kv;
        std::string command = "spyre-gen";
        for (const std::string &a : args) command += " " + a;
        for (size_t i = 0; i < args.size(); i++) {
            const std::string &a = args[i];
            auto value = [&](const char *what) {
                if (i + 1 >= args.size()) throw Usage(a + " needs " + what);
                return args[++i];
            };
            if (a == "-h" || a == "--help") {
                std::cout << kUsage;
                return 0;
            } else if (a == "-l" || a == "--list") {
                list = true;
            } else if (a == "-g") {
                generator = value("a generator name");
            } else if (a == "-o") {
                out_dir = value("a directory");
            } else if (a == "-n") {
                name = value("a name");
                if (name.empty() || name.find('/') != std::string::npos) throw Usage("-n: '" + name + "' is not a file name");
            } else if (a == "--free-layouts") {
                std::stringstream names(value("argument names"));
                for (std::string n; std::getline(names, n, ',');)
                    if (!n.empty()) free_layouts.push_back(n);
                if (free_layouts.empty()) throw Usage("--free-layouts: no argument named");
            } else if (a == "--layout") {
                const std::string v = value("NAME=LAYOUT");
                const size_t eq = v.find('=');
                if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
                    throw Usage("--layout " + v + ": give NAME=LAYOUT (row_major, torch_spyre, or dims like d1,s)");
                if (!layout_texts.emplace(v.substr(0, eq), v.substr(eq + 1)).second)
                    throw Usage("--layout: argument '" + v.substr(0, eq) + "' given twice");
            } else if (a == "--tuning-db" || a.rfind("--tuning-db=", 0) == 0) {
                request.tuning_db = a == "--tuning-db" ? "spyre-tune.db" : a.substr(std::string("--tuning-db=").size());
                if (request.tuning_db.empty()) throw Usage("--tuning-db=: no file named");
            } else if (!a.empty() && a[0] != '-' && a.find('=') != std::string::npos && a.find('=') > 0) {
                kv.push_back(a);
            } else {
                throw Usage("unexpected argument '" + a + "'");
            }
        }
        if (list) return list_generators();
        if (generator.empty()) throw Usage("missing -g GENERATOR (spyre-gen -l lists them)");
        if (out_dir.empty()) throw Usage("missing -o DIR");
        return generate(generator, out_dir, name, kv, command, emit_ktir, request, layout_texts);
    } catch (const Usage &e) {
        std::cerr << "spyre-gen: error: " << e.what() << "\n(spyre-gen --help for usage)\n";
        return 2;
    } catch (const Halide::Error &e) {
        std::cerr << "spyre-gen: error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "spyre-gen: error: " << e.what() << "\n";
        return 1;
    }
}
