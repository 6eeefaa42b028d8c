// spyre-fuzz-diff: N random pipelines with random Spyre schedules (fuzz_case.h), each compiled, run
// on the simulator and compared with Halide's CPU realisation. Each case runs in a child process
// of its own (fork), so that a crash or a hang is one failed case, not the end of the run; -j runs
// several at once; --case K reruns case K alone (in this process with --no-fork, for a debugger);
// --known-failure CATEGORY lists the failures of a category with an open bug without failing the run.
// Prints counts per category, the refusals grouped by message (digits stripped), and each failure (a
// refusal or auto_schedule summary that names what the user never wrote among them: leaked_names.h)
// with its repro command and its pipeline and schedule as C++; exits 1 on any failure, and when
// fewer cases than --min-matched ran on the device and matched the CPU (a run whose cases are all
// refused compares nothing).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "fuzz_case.h"
#include "random_pipeline.h"

using namespace spyre::fuzzdiff;

namespace {

// A CaseResult through a file: each field as its length, a newline, its bytes.
void put(FILE *f, const std::string &s) {
    std::fprintf(f, "%zu\n", s.size());
    std::fwrite(s.data(), 1, s.size(), f);
}
bool get(FILE *f, std::string &s) {
    size_t n;
    if (std::fscanf(f, "%zu", &n) != 1 || std::fgetc(f) != '\n') return false;
    s.resize(n);
    return std::fread(&s[0], 1, n, f) == n;
}
void write_result(FILE *f, const CaseResult &r) {
    std::rewind(f);
    put(f, r.family);
    put(f, r.autoscheduled ? "auto" : "manual");
    put(f, std::to_string(int(r.verdict)));
    put(f, r.message);
    put(f, r.cpp);
    put(f, r.halide_error);
    std::fflush(f);
}
bool read_result(FILE *f, CaseResult &r) {
    std::rewind(f);
    std::string sched, verdict;
    if (!get(f, r.family) || !get(f, sched) || !get(f, verdict) || !get(f, r.message) || !get(f, r.cpp) ||
        !get(f, r.halide_error))
        return false;
    r.autoscheduled = sched == "auto";
    r.verdict = Verdict(std::stoi(verdict));
    return true;
}

// Runs one case in this process, an escaping exception being an internal error.
CaseResult run_here(uint32_t seed, int index, FILE *out) {
    CaseResult last;
    try {
        return run_case(seed, index, [&](const CaseResult &r) {
            last = r;
            if (out) write_result(out, r);
        });
    } catch (const std::exception &e) {
        last.verdict = Verdict::Internal;
        last.message = std::string("internal: uncaught exception: ") + e.what();
        return last;
    }
}

struct Job {
    int index;
    FILE *file;    // the child's result
    FILE *stderr_; // the child's stderr (Halide's warnings; what a crash printed)
};

// Starts case `index` in a child that writes its result (and, before each risky step, what it
// knows so far) to a temporary file.
pid_t start(uint32_t seed, int index, int timeout_s, FILE *file, FILE *err) {
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fileno(err), 2);
        alarm(unsigned(timeout_s));  // SIGALRM ends a hung case
        CaseResult r = run_here(seed, index, file);
        write_result(file, r);
        std::fclose(file);
        _exit(0);
    }
    return pid;
}

// The result of a finished child: its own, or a crash or timeout with what it had written.
CaseResult finish(const Job &j, int status) {
    CaseResult r;
    bool have = read_result(j.file, r);
    std::fclose(j.file);
    std::string err;  // the last of what the child printed on stderr
    std::fseek(j.stderr_, 0, SEEK_END);
    long size = std::ftell(j.stderr_);
    std::fseek(j.stderr_, std::max(0L, size - 600), SEEK_SET);
    for (int c; (c = std::fgetc(j.stderr_)) != EOF;) err += char(c);
    std::fclose(j.stderr_);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && have) return r;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
        r.verdict = Verdict::Timeout;
        r.message = "the case ran past the time limit";
    } else {
        r.verdict = Verdict::Crash;
        r.message = WIFSIGNALED(status) ? std::string("killed by signal ") + strsignal(WTERMSIG(status))
                                        : "exited with status " + std::to_string(WEXITSTATUS(status));
    }
    if (!err.empty()) r.message += "; its stderr ends: " + err;
    if (r.family.empty()) r.family = "(unknown)";
    return r;
}

// A message with its digits stripped (and shortened), to group refusals of one kind.
std::string shape_of(const std::string &msg) {
    std::string s;
    for (char c : msg) {
        if (c == '\n') c = ' ';
        if (std::isdigit(static_cast<unsigned char>(c))) {
            if (s.empty() || s.back() != '#') s += '#';
        } else {
            s += c;
        }
    }
    return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

struct Counts {
    int cases = 0, matched = 0, refused = 0, invalid = 0, leaked = 0, mismatched = 0, internal = 0, crashed = 0;
    // Refusals of valid programs, over the valid programs (a schedule Halide refuses is not one).
    double refusal_rate() const { return cases > invalid ? double(refused) / (cases - invalid) : 0.0; }
    void add(Verdict v) {
        cases++;
        switch (v) {
        case Verdict::Match: matched++; break;
        case Verdict::Refused: refused++; break;
        case Verdict::InvalidSchedule: invalid++; break;
        case Verdict::LeakedName: leaked++; break;
        case Verdict::Mismatch: mismatched++; break;
        case Verdict::Internal:
        case Verdict::FuzzerBug: internal++; break;
        case Verdict::Crash:
        case Verdict::Timeout: crashed++; break;
        }
    }
};

void print_row(const std::string &name, const Counts &c) {
    std::printf("%-22s %6d %8d %8d %7.1f%% %8d %7d %10d %9d %9d\n", name.c_str(), c.cases, c.matched, c.refused,
                100.0 * c.refusal_rate(), c.invalid, c.leaked, c.mismatched, c.internal, c.crashed);
}

std::string indent(const std::string &text) {
    std::string out = "    ";
    for (size_t i = 0; i < text.size(); i++) {
        out += text[i];
        if (text[i] == '\n' && i + 1 < text.size()) out += "    ";
    }
    return out;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"Random differential testing: random pipelines and schedules, simulator against CPU."};
    int n = 100, only = -1, jobs = 1, timeout_s = 300, min_matched = 0;
    uint32_t seed = 1;
    bool verbose = false, no_fork = false;
    std::vector<std::string> known;
    app.add_option("-n,--cases", n, "number of random cases")->check(CLI::PositiveNumber);
    app.add_option("-s,--seed", seed, "seed of the run (case K of seed S is the same case in every run)");
    app.add_option("--case", only, "run case K of the seed alone")->check(CLI::NonNegativeNumber);
    std::string family;
    app.add_option("--family", family, "run only the cases of the first -n whose pipeline is of this family")
        ->check(CLI::IsMember(pipeline_families()));
    app.add_option("-j,--jobs", jobs, "cases run at once (each in a child process)")->check(CLI::PositiveNumber);
    app.add_option("--timeout", timeout_s, "seconds a case may take before it counts as a hang")->check(CLI::PositiveNumber);
    app.add_flag("--no-fork", no_fork, "run the cases in this process (a crash then ends the run; for a debugger)");
    app.add_option("--known-failure", known,
                   "a category whose failures are open bugs: printed (KNOWN) and counted, but not failing the run");
    app.add_flag("-v,--verbose", verbose, "print every case, its outcome, pipeline and schedule");
    app.add_option("--min-matched", min_matched,
                   "fail the run if fewer cases than this were compiled, run and matched the CPU (refusals compare "
                   "nothing)")
        ->check(CLI::NonNegativeNumber);
    double max_rate = 100, max_category_rate = 100;
    app.add_option("--max-refusal-rate", max_rate,
                   "fail the run if more than this percentage of the valid programs (Halide runs their schedule) "
                   "were refused")
        ->check(CLI::Range(0.0, 100.0));
    app.add_option("--max-category-refusal-rate", max_category_rate,
                   "the same, for each category of pipelines")
        ->check(CLI::Range(0.0, 100.0));
    CLI11_PARSE(app, argc, argv);

    std::vector<int> indices;
    if (only >= 0) indices.push_back(only);
    else
        for (int i = 0; i < n; i++)
            if (family.empty() || case_family(seed, i) == family) indices.push_back(i);

    std::map<int, CaseResult> results;
    if (no_fork) {
        for (int i : indices) results[i] = run_here(seed, i, nullptr);
    } else {
        std::map<pid_t, Job> running;
        size_t next = 0;
        while (next < indices.size() || !running.empty()) {
            while (int(running.size()) < jobs && next < indices.size()) {
                Job j{indices[next++], std::tmpfile(), std::tmpfile()};
                if (!j.file || !j.stderr_) {
                    std::perror("tmpfile");
                    return 2;
                }
                pid_t pid = start(seed, j.index, timeout_s, j.file, j.stderr_);
                if (pid < 0) {
                    std::perror("fork");
                    return 2;
                }
                running[pid] = j;
            }
            int status = 0;
            pid_t pid = waitpid(-1, &status, 0);
            auto it = running.find(pid);
            if (it == running.end()) continue;
            results[it->second.index] = finish(it->second, status);
            running.erase(it);
            if (indices.size() >= 100 && results.size() % 100 == 0)
                std::fprintf(stderr, "%zu / %zu cases\n", results.size(), indices.size());
        }
    }

    // Counts per category (the pipeline families, in their order) and per kind of schedule.
    std::map<std::string, Counts> by_family, by_schedule;
    Counts total;
    std::map<std::string, std::map<std::string, int>> refusals;  // family -> message shape -> count
    std::map<std::string, int> halide_refusals;                  // Halide's message shape -> count
    int failures = 0, known_failures = 0;
    const std::set<std::string> known_set(known.begin(), known.end());
    for (auto &[i, r] : results) {
        by_family[r.family].add(r.verdict);
        // A hand schedule that fuses the output's loops (random_schedule.h) is counted on its own too.
        by_schedule[r.autoscheduled ? "schedule=auto" : "schedule=manual"].add(r.verdict);
        if (r.cpp.find(".fuse(x, y, xy);") != std::string::npos) by_schedule["schedule=fused"].add(r.verdict);
        total.add(r.verdict);
        if (r.verdict == Verdict::Refused) refusals[r.family][shape_of(r.message)]++;
        if (r.verdict == Verdict::InvalidSchedule) halide_refusals[shape_of(r.halide_error)]++;
        if (verbose || is_failure(r.verdict)) {
            const bool is_known = is_failure(r.verdict) && known_set.count(r.family);
            if (is_failure(r.verdict)) (is_known ? known_failures : failures)++;
            std::printf("%s [%s] seed %u case %d%s: %s\n",
                        is_known ? "KNOWN" : is_failure(r.verdict) ? "FAIL" : "case",
                        r.family.c_str(), seed, i, r.autoscheduled ? " (schedule=auto)" : "",
                        verdict_name(r.verdict));
            if (!r.message.empty()) std::printf("  %s\n", r.message.c_str());
            if (!r.halide_error.empty()) std::printf("  Halide's CPU, same schedule: %s\n", r.halide_error.c_str());
            std::printf("  repro: spyre-fuzz-diff --seed %u --case %d -v\n%s\n", seed, i, indent(r.cpp).c_str());
        }
    }
    std::printf("\n%-22s %6s %8s %8s %8s %8s %7s %10s %9s %9s\n", "category", "cases", "matched", "refused", "(rate)",
                "invalid", "leaked", "mismatched", "internal", "crashed");
    std::set<std::string> shown;
    for (const std::string &f : pipeline_families())
        if (by_family.count(f)) print_row(f, by_family[f]), shown.insert(f);
    for (auto &[f, c] : by_family)
        if (!shown.count(f)) print_row(f, c);
    for (auto &[s, c] : by_schedule) print_row(s, c);
    print_row("total", total);
    std::printf("(refused: valid programs the compiler refused, (rate) of the valid ones; invalid: hand schedules "
                "Halide's CPU refuses too, on the same buffers, which the compiler refused; leaked: a refusal or "
                "auto_schedule summary naming what the user never wrote; internal: internal errors and fuzzer bugs; "
                "crashed: signals and timeouts)\n");
    if (!refusals.empty()) {
        std::printf("\nrefusals by category (digits stripped):\n");
        for (auto &[f, shapes] : refusals) {
            std::vector<std::pair<int, std::string>> sorted;
            for (auto &[s, k] : shapes) sorted.push_back({-k, s});
            std::sort(sorted.begin(), sorted.end());
            std::printf("  %s\n", f.c_str());
            for (auto &[k, s] : sorted) std::printf("    %4d  %s\n", -k, s.c_str());
        }
    }
    if (!halide_refusals.empty()) {
        std::vector<std::pair<int, std::string>> sorted;
        for (auto &[s, k] : halide_refusals) sorted.push_back({-k, s});
        std::sort(sorted.begin(), sorted.end());
        std::printf("\ninvalid schedules, by what Halide's CPU says of them (digits stripped):\n");
        for (auto &[k, s] : sorted) std::printf("    %4d  %s\n", -k, s.c_str());
    }
    std::printf("\n%d cases from seed %u: %d match the CPU, %d refused with an error (%.1f%% of the %d valid "
                "programs), %d invalid schedules refused as Halide refuses them, %d leaked a name, %d failed",
                total.cases, seed, total.matched, total.refused, 100.0 * total.refusal_rate(),
                total.cases - total.invalid, total.invalid, total.leaked, failures);
    if (!known.empty()) std::printf(" (and %d failures in the known-failure categories)", known_failures);
    std::printf("\n");
    int over_rate = 0;
    if (100.0 * total.refusal_rate() > max_rate) {
        std::printf("FAIL: %.1f%% of the valid programs were refused, more than --max-refusal-rate %.1f%%\n",
                    100.0 * total.refusal_rate(), max_rate);
        over_rate++;
    }
    for (auto &[f, c] : by_family)
        if (100.0 * c.refusal_rate() > max_category_rate) {
            std::printf("FAIL: %.1f%% of the valid %s programs were refused, more than --max-category-refusal-rate "
                        "%.1f%%\n",
                        100.0 * c.refusal_rate(), f.c_str(), max_category_rate);
            over_rate++;
        }
    if (over_rate) return 1;
    if (total.matched < min_matched) {
        std::printf("FAIL: only %d cases ran and matched the CPU, fewer than --min-matched %d: the rest were refused "
                    "and compared nothing\n",
                    total.matched, min_matched);
        return 1;
    }
    return failures ? 1 : 0;
}
