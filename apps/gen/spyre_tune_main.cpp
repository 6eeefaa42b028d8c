// spyre-tune: fills a tuning database (autoschedule/tuning_db.h) with schedule=auto searches for a
// list of kernels, or a deterministic slice of it, so that many machines can share the work; an
// existing engine (GNU parallel, a Slurm job array) runs the slices and `spyre-tune merge` combines
// their files. spyre-gen --tuning-db then compiles each kernel without searching.
//
//   spyre-tune KERNELS [--db FILE] [--shard I/N | --shard slurm]
//   spyre-tune merge OUT IN...
//   spyre-tune --catalogue      the catalogue's kernels at spyre-report's shapes, as a KERNELS file
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "generator_info.h"
#include "generator_pipeline.h"
#include "kernel_catalog.h"
#include "tuning_db.h"

namespace {

const char *kUsage = R"(usage:
  spyre-tune KERNELS [--db FILE] [--shard I/N | --shard slurm]
  spyre-tune merge OUT IN...
  spyre-tune --catalogue

KERNELS is a text file with one kernel per line: a generator and its parameters as spyre-gen takes
them (`softmax cols=4096 rows=2048`; spyre-gen -l lists them); schedule=auto is implied, `#` starts
a comment. Each kernel's schedule=auto search is stored in the tuning database (default
spyre-tune.db); a kernel already there is not searched again.

  --db FILE      the tuning database (an SQLite file, created if missing)
  --shard I/N    only the kernels whose index k (0-based, in file order) has k % N == I
  --shard slurm  the same with I and N of a Slurm job array (SLURM_ARRAY_TASK_ID minus
                 SLURM_ARRAY_TASK_MIN, and SLURM_ARRAY_TASK_COUNT)
  merge OUT IN...  copies into OUT every entry of the IN files that OUT lacks
  --catalogue    prints the catalogue's kernels (every app at spyre-report's shapes)
)";

struct Usage : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Kernel {
    int line = 0;
    std::string generator;
    std::map<std::string, std::string> params;
    std::string text;
};

std::vector<Kernel> read_kernels(const std::string &path) {
    std::ifstream f(path);
    if (!f) throw Usage("cannot read the kernel list '" + path + "'");
    std::vector<Kernel> ks;
    std::string line;
    for (int n = 1; std::getline(f, line); n++) {
        line = line.substr(0, line.find('#'));
        std::stringstream words(line);
        Kernel k;
        k.line = n;
        if (!(words >> k.generator)) continue;
        const spyre::gen::GeneratorInfo *info = spyre::gen::find_generator_info(k.generator);
        if (!info) throw Usage(path + ":" + std::to_string(n) + ": unknown generator '" + k.generator + "'");
        const std::map<std::string, std::string> defaults = spyre::gen::param_defaults(*info);
        for (std::string w; words >> w;) {
            const size_t eq = w.find('=');
            const std::string key = w.substr(0, eq);
            if (eq == std::string::npos || eq == 0 || !defaults.count(key) || key == "schedule")
                throw Usage(path + ":" + std::to_string(n) + ": '" + w + "' is not a parameter of " + k.generator);
            k.params[key] = w.substr(eq + 1);
        }
        k.params["schedule"] = "auto";
        k.text = line.substr(line.find_first_not_of(" \t"));
        while (!k.text.empty() && (k.text.back() == ' ' || k.text.back() == '\t' || k.text.back() == '\r')) k.text.pop_back();
        ks.push_back(std::move(k));
    }
    return ks;
}

int env_int(const char *name) {
    const char *v = std::getenv(name);
    if (!v || !*v) throw Usage(std::string("--shard slurm: ") + name + " is not set (not in a Slurm job array?)");
    char *end = nullptr;
    const long x = std::strtol(v, &end, 10);
    if (*end || x < 0 || x > 1000000) throw Usage(std::string("--shard slurm: ") + name + "=" + v + " is not a count");
    return int(x);
}

// I and N of --shard.
std::pair<int, int> parse_shard(const std::string &s) {
    if (s == "slurm") {
        const int id = env_int("SLURM_ARRAY_TASK_ID"), min = std::getenv("SLURM_ARRAY_TASK_MIN") ? env_int("SLURM_ARRAY_TASK_MIN") : 0;
        const int n = env_int("SLURM_ARRAY_TASK_COUNT");
        if (n < 1 || id < min || id - min >= n)
            throw Usage("--shard slurm: task " + std::to_string(id) + " is outside the array's " + std::to_string(n) +
                        " tasks from " + std::to_string(min));
        return {id - min, n};
    }
    const size_t slash = s.find('/');
    int i = -1, n = 0;
    try {
        size_t a = 0, b = 0;
        i = std::stoi(s.substr(0, slash), &a);
        n = std::stoi(s.substr(slash + 1), &b);
        if (slash == std::string::npos || a != slash || b != s.size() - slash - 1) n = 0;
    } catch (const std::exception &) {
        n = 0;
    }
    if (n < 1 || i < 0 || i >= n) throw Usage("--shard " + s + ": expected I/N with 0 <= I < N, or slurm");
    return {i, n};
}

int tune(const std::string &list, const std::string &db, const std::pair<int, int> &shard) {
    const std::vector<Kernel> ks = read_kernels(list);
    int searched = 0, stored = 0, failed = 0;
    for (size_t k = 0; k < ks.size(); k++) {
        if (int(k % size_t(shard.second)) != shard.first) continue;
        const Kernel &kernel = ks[k];
        std::cout << "kernel " << k << " (" << list << ":" << kernel.line << ") " << kernel.text << ": " << std::flush;
        try {
            spyre::gen::AutoRequest request;
            request.tuning_db = db;
            spyre::gen::BuiltGenerator b =
                spyre::gen::build_generator(kernel.generator, Halide::get_host_target(), kernel.params, request);
            if (b.auto_choice.from_tuning_db) {
                stored++;
                std::cout << "in the database (entry " << b.auto_choice.fingerprint << ")\n";
            } else {
                searched++;
                std::cout << "searched, stored (entry " << b.auto_choice.fingerprint << ")\n";
            }
        } catch (const std::exception &e) {
            failed++;
            std::cout << "error: " << e.what() << "\n";
        }
    }
    std::cout << "spyre-tune: shard " << shard.first << "/" << shard.second << " of " << ks.size() << " kernels: " << searched
              << " searched, " << stored << " already in " << db << ", " << failed << " failed\n";
    return failed ? 1 : 0;
}

int catalogue() {
    std::cout << "# The catalogue's kernels at spyre-report's shapes (spyre-tune --catalogue).\n";
    for (const spyre::report::AppInfo &a : spyre::report::app_infos()) {
        spyre::report::Shape s = spyre::report::parse_shape(a.name, a.shapes.report);
        s.cores = std::min(a.shapes.report_cores, a.max_cores(s));
        std::cout << a.generator;
        for (const std::string &p : a.generator_params(s)) std::cout << " " << p;
        std::cout << "\n";
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        if (args.empty()) throw Usage("no kernel list given");
        if (args[0] == "-h" || args[0] == "--help") {
            std::cout << kUsage;
            return 0;
        }
        if (args[0] == "--catalogue") return catalogue();
        if (args[0] == "merge") {
            if (args.size() < 3) throw Usage("merge needs OUT and at least one IN");
            spyre::autosched::TuningDb out(args[1]);
            for (size_t i = 2; i < args.size(); i++) {
                const int64_t n = out.merge(args[i]);
                std::cout << "spyre-tune: merged " << n << " new entries from " << args[i] << "\n";
            }
            std::cout << "spyre-tune: " << args[1] << " holds " << out.size() << " entries\n";
            return 0;
        }
        std::string list, db = "spyre-tune.db";
        std::pair<int, int> shard{0, 1};
        for (size_t i = 0; i < args.size(); i++) {
            auto value = [&](const char *what) {
                if (i + 1 >= args.size()) throw Usage(args[i] + " needs " + what);
                return args[++i];
            };
            if (args[i] == "--db") db = value("a file");
            else if (args[i] == "--shard") shard = parse_shard(value("I/N or slurm"));
            else if (!args[i].empty() && args[i][0] != '-' && list.empty()) list = args[i];
            else throw Usage("unexpected argument '" + args[i] + "'");
        }
        if (list.empty()) throw Usage("no kernel list given");
        return tune(list, db, shard);
    } catch (const Usage &e) {
        std::cerr << "spyre-tune: error: " << e.what() << "\n(spyre-tune --help for usage)\n";
        return 2;
    } catch (const std::exception &e) {
        std::cerr << "spyre-tune: error: " << e.what() << "\n";
        return 1;
    }
}
