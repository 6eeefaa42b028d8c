// spyre-report on a tiny configuration (every app x schedule, kernels through spyre-gen, checked
// against the CPU reference) writes a non-empty report.md, one SVG chart per app, a Chrome trace
// per kernel and spyre-gen's files; spyre-bench lists a benchmark for every app x schedule.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "kernel_catalog.h"

namespace fs = std::filesystem;

namespace {

struct CommandResult {
    int exit_code = -1;
    std::string output;
};

CommandResult run(const std::string &command) {
    CommandResult r;
    FILE *p = popen((command + " 2>&1").c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
    int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string read(const fs::path &p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

TEST(Report, TinyConfigurationWritesEveryFile) {
    const fs::path out = fs::path(SPYRE_TEST_OUT_DIR) / "report_tiny";
    fs::remove_all(out);
    CommandResult r = run(std::string("'") + SPYRE_REPORT + "' --out '" + out.string() + "' --spyre-gen '" +
                          SPYRE_GEN + "' --shape 64x128 --bmm-shape 2x8x64x128");
    ASSERT_EQ(r.exit_code, 0) << r.output;

    const std::string md = read(out / "report.md");
    ASSERT_FALSE(md.empty());
    for (const std::string &app : spyre::report::app_names()) {
        SCOPED_TRACE(app);
        EXPECT_NE(md.find("## " + app + " "), std::string::npos);
        EXPECT_NE(r.output.find(app + " "), std::string::npos);  // its console table
        const std::string svg = read(out / (app + ".svg"));
        EXPECT_EQ(svg.rfind("<svg", 0), 0u);
        EXPECT_NE(svg.find("</svg>"), std::string::npos);
        EXPECT_NE(md.find("](" + app + ".svg)"), std::string::npos);
        for (const std::string &sched : spyre::report::app_schedules(app)) {
            SCOPED_TRACE(sched);
            const std::string name = app + "_" + sched;
            EXPECT_GT(fs::file_size(out / "traces" / (name + ".json")), 0u);
            EXPECT_NE(md.find("| " + sched + " |"), std::string::npos);
            if (!spyre::report::app_generator(app).empty()) {
                for (const char *ext : {".spyre", ".s", ".h", ".json"})
                    EXPECT_GT(fs::file_size(out / "kernels" / (name + ext)), 0u) << ext;
            }
        }
    }
    EXPECT_EQ(md.find("FAILED"), std::string::npos) << md;
}

TEST(Report, UnknownAppIsAnError) {
    CommandResult r = run(std::string("'") + SPYRE_REPORT + "' --out '" +
                          (fs::path(SPYRE_TEST_OUT_DIR) / "report_bad").string() + "' --apps nosuch --no-traces");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("unknown app 'nosuch'"), std::string::npos) << r.output;
}

TEST(Bench, ListsEveryAppAndSchedule) {
    CommandResult r = run(std::string("'") + SPYRE_BENCH + "' --benchmark_list_tests");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const char *name :
         {"softmax/stage1/512x1024", "softmax/stage2/512x1024", "softmax/stage3/512x1024", "softmax/stage4/512x1024",
          "softmax/cores32/512x1024", "softmax/cores32/4096x1024", "layernorm/tiles/512x1024",
          "layernorm/cores32/512x1024", "rmsnorm/tiles/512x1024", "rmsnorm/cores32/512x1024", "gelu/root/512x1024",
          "gelu/tiles/512x1024", "gelu/cores32/512x1024", "bmm/pe/4x64x256x512", "bmm/vector/4x64x256x512",
          "bmm/pe_batch_outermost/8x512x4096x12800", "bmm/pe_batch_innermost/8x512x4096x12800",
          "calibration/softmax_512x1024_compiled/stage/4"})
        EXPECT_NE(r.output.find(std::string(name) + "\n"), std::string::npos) << name << "\n" << r.output;
    // Every app x schedule has at least one benchmark.
    for (const std::string &app : spyre::report::app_names())
        for (const std::string &sched : spyre::report::app_schedules(app))
            EXPECT_NE(r.output.find(app + "/" + sched + "/"), std::string::npos) << app << "/" << sched;
}

}  // namespace
