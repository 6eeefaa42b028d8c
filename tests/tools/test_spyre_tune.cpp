// spyre-tune: a kernel list searched in shards (by --shard I/N, by a Slurm job array's variables
// and by GNU parallel running the shards), the shards' databases merged, after which every kernel
// is in the database; and its error paths.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "test_paths.h"
#include "tool_test_util.h"

namespace fs = std::filesystem;
using namespace spyre::tools_testing;

namespace {

// Three small kernels, with a comment and a blank line.
fs::path write_kernel_list(const fs::path &dir) {
    fs::path p = dir / "kernels.txt";
    std::ofstream f(p);
    f << "# kernels of a tiny model\n"
         "softmax cols=256 rows=64\n"
         "\n"
         "gelu cols=128 rows=32   # a pointwise one\n"
         "rmsnorm cols=256 rows=32\n";
    return p;
}

const std::string kTune = SPYRE_TUNE;

size_t count_of(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
    return n;
}

TEST(SpyreTune, ShardsSearchTheirSlicesAndMergeIntoADatabaseHoldingEveryKernel) {
    const fs::path dir = scratch_dir("tune_test", "shards");
    const fs::path list = write_kernel_list(dir);
    // Shard 0 of 2 takes kernels 0 and 2; shard 1 is taken as Slurm task 5 of an array from 4.
    CommandResult s0 = run_command(quote(kTune) + " " + quote(list.string()) + " --shard 0/2 --db " +
                                   quote((dir / "s0.db").string()));
    ASSERT_EQ(s0.exit_code, 0) << s0.output;
    EXPECT_EQ(count_of(s0.output, "searched, stored"), 2u) << s0.output;
    EXPECT_NE(s0.output.find("kernel 2 (" + list.string() + ":5) rmsnorm cols=256 rows=32: searched"), std::string::npos)
        << s0.output;
    CommandResult s1 = run_command("SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=2 " + quote(kTune) +
                                   " " + quote(list.string()) + " --shard slurm --db " + quote((dir / "s1.db").string()));
    ASSERT_EQ(s1.exit_code, 0) << s1.output;
    EXPECT_NE(s1.output.find("kernel 1 (" + list.string() + ":4) gelu cols=128 rows=32: searched"), std::string::npos)
        << s1.output;
    EXPECT_EQ(count_of(s1.output, "searched, stored"), 1u) << s1.output;

    const std::string all = (dir / "all.db").string();
    CommandResult m = run_command(quote(kTune) + " merge " + quote(all) + " " + quote((dir / "s0.db").string()) + " " +
                                  quote((dir / "s1.db").string()));
    ASSERT_EQ(m.exit_code, 0) << m.output;
    EXPECT_NE(m.output.find(all + " holds 3 entries"), std::string::npos) << m.output;
    // Everything is in the merged file: nothing is searched again.
    CommandResult again = run_command(quote(kTune) + " " + quote(list.string()) + " --db " + quote(all));
    ASSERT_EQ(again.exit_code, 0) << again.output;
    EXPECT_EQ(count_of(again.output, "in the database"), 3u) << again.output;
    EXPECT_NE(again.output.find("0 searched, 3 already in"), std::string::npos) << again.output;
}

// GNU parallel runs the shards as local jobs, and with `-S :` through its remote-host path (":" is
// this machine without ssh: no ssh server runs here, docs/auto_schedule.md, "Tuning on many machines").
TEST(SpyreTune, GnuParallelRunsTheShards) {
    if (run_command("parallel --version").exit_code != 0) GTEST_SKIP() << "GNU parallel is not installed";
    const fs::path dir = scratch_dir("tune_test", "parallel");
    const fs::path list = write_kernel_list(dir);
    const std::string shard_db = (dir / "shard{}.db").string();
    for (const std::string &hosts : {std::string(""), std::string(" -S :")}) {
        CommandResult p = run_command("parallel --will-cite" + hosts + " " + quote(kTune) + " " + quote(list.string()) +
                                      " --shard {}/3 --db " + quote(shard_db) + " ::: 0 1 2");
        ASSERT_EQ(p.exit_code, 0) << p.output;
        EXPECT_EQ(count_of(p.output, "kernel "), 3u) << p.output;
    }
    const std::string all = (dir / "all.db").string();
    CommandResult m = run_command(quote(kTune) + " merge " + quote(all) + " " + quote((dir / "shard0.db").string()) + " " +
                                  quote((dir / "shard1.db").string()) + " " + quote((dir / "shard2.db").string()));
    ASSERT_EQ(m.exit_code, 0) << m.output;
    EXPECT_NE(m.output.find(all + " holds 3 entries"), std::string::npos) << m.output;
}

TEST(SpyreTune, BadListsShardsAndEnvironmentsAreErrorsNamingThem) {
    const fs::path dir = scratch_dir("tune_test", "errors");
    const fs::path list = write_kernel_list(dir);
    const std::string db = " --db " + quote((dir / "e.db").string());
    CommandResult r = run_command(quote(kTune) + " " + quote(list.string()) + " --shard 2/2" + db);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--shard 2/2: expected I/N with 0 <= I < N, or slurm"), std::string::npos) << r.output;
    r = run_command("env -u SLURM_ARRAY_TASK_ID " + quote(kTune) + " " + quote(list.string()) + " --shard slurm" + db);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("SLURM_ARRAY_TASK_ID is not set"), std::string::npos) << r.output;
    {
        std::ofstream f(dir / "bad.txt");
        f << "softmax cols=256\nnosuch cols=1\n";
    }
    r = run_command(quote(kTune) + " " + quote((dir / "bad.txt").string()) + db);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("bad.txt:2: unknown generator 'nosuch'"), std::string::npos) << r.output;
    {
        std::ofstream f(dir / "bad2.txt");
        f << "softmax schedule=stage4\n";
    }
    r = run_command(quote(kTune) + " " + quote((dir / "bad2.txt").string()) + db);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("bad2.txt:1: 'schedule=stage4' is not a parameter of softmax"), std::string::npos) << r.output;
    r = run_command(quote(kTune) + " merge " + quote((dir / "m.db").string()) + " " + quote(list.string()));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(list.string()), std::string::npos) << r.output;
}

TEST(SpyreTune, CatalogueListsEveryAppAsAKernelLine) {
    CommandResult r = run_command(quote(kTune) + " --catalogue");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("\nsoftmax cols=1024 rows=512\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("\nflash_attention dim=128 seq=512 heads=4 cores=4 mask=causal\n"), std::string::npos)
        << r.output;
}

}  // namespace
