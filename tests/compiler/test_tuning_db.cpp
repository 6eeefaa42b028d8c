// The autoscheduler's tuning database (AutoOptions::tuning_db): a second build of the same pipeline
// (other Halide names, same algorithm, shapes, machine and options) is scheduled from the stored
// result without a search and compiles to the same program; a changed shape, machine or seed is a
// new entry; databases merge; and a damaged entry is an error naming the file and the entry.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "auto_schedule.h"
#include "compiler_test_util.h"
#include "device/error.h"
#include "device/program_io.h"
#include "tuned_schedule.h"
#include "tuning_db.h"

namespace spyre::testing {
namespace {

using namespace Halide;
namespace fs = std::filesystem;

// A row kernel with a reduction and a producer: each call makes fresh Funcs, whose Halide names
// differ from the last call's ("s$2", "s$3").
Algorithm row_scale_by_sum(int cols) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        RDom r(0, cols, "r");
        Func s("s"), out("out");
        s(y) = sum(cast<float>(in(r, y)));
        out(x, y) = cast<float16_t>(cast<float>(in(x, y)) / (s(y) + 1.0f));
        k.inputs = {in};
        k.output = out;
        return k;
    };
}

fs::path fresh_tuning_db(const std::string &name) {
    // The process id keeps two runs of the tests (ctest's shards, a developer's second run) apart.
    fs::path p = fs::path(::testing::TempDir()) / ("tuning_db_" + name + "_" + std::to_string(::getpid()) + ".db");
    fs::remove(p);
    return p;
}

struct TunedRun {
    AutoResult result;
    std::vector<uint8_t> program;  // the compiled program, serialized
};

TunedRun tune_with_db(const Algorithm &alg, int cols, int rows, const fs::path &db, uint32_t seed = 1, const MachineDesc &m = {}) {
    Kernel k = alg();
    CompileOptions opt = kernel_options({{cols, rows}}, {cols, rows});
    opt.machine = m;
    AutoOptions ao;
    ao.tuning_db = db.string();
    ao.seed = seed;
    ao.max_evaluations = 16;
    ao.progress = false;
    TunedRun t;
    t.result = auto_schedule(k.output, k.inputs, opt, ao);
    t.program = serialize_program(compile_for_spyre(k.output, k.inputs, t.result.options));
    return t;
}

TEST(TuningDb, ASecondBuildOfThePipelineIsScheduledFromTheDatabase) {
    const fs::path db = fresh_tuning_db("hit");
    const TunedRun first = tune_with_db(row_scale_by_sum(256), 256, 64, db);
    EXPECT_FALSE(first.result.from_tuning_db);
    EXPECT_GT(first.result.timed, 0);
    EXPECT_EQ(first.result.fingerprint.size(), 32u);
    const TunedRun second = tune_with_db(row_scale_by_sum(256), 256, 64, db);
    EXPECT_TRUE(second.result.from_tuning_db);
    EXPECT_EQ(second.result.fingerprint, first.result.fingerprint);
    EXPECT_EQ(second.program, first.program);
    EXPECT_EQ(second.result.summary, first.result.summary);
    EXPECT_DOUBLE_EQ(second.result.us, first.result.us);
    EXPECT_TRUE(second.result.validity_known);
    EXPECT_EQ(second.result.validity, first.result.validity);
    EXPECT_NE(second.result.cpp.find("from the tuning database"), std::string::npos) << second.result.cpp;
    EXPECT_NE(second.result.cpp.find("// The timing model"), std::string::npos) << second.result.cpp;
    autosched::TuningDb open(db.string());
    EXPECT_EQ(open.size(), 1);
}

TEST(TuningDb, AnotherShapeMachineOrSeedIsAnotherEntry) {
    const fs::path db = fresh_tuning_db("keys");
    const std::string key = tune_with_db(row_scale_by_sum(256), 256, 64, db).result.fingerprint;
    const TunedRun rows = tune_with_db(row_scale_by_sum(256), 256, 128, db);
    EXPECT_FALSE(rows.result.from_tuning_db);
    MachineDesc m;
    m.cores = 16;
    const TunedRun machine = tune_with_db(row_scale_by_sum(256), 256, 64, db, 1, m);
    EXPECT_FALSE(machine.result.from_tuning_db);
    const TunedRun seed = tune_with_db(row_scale_by_sum(256), 256, 64, db, 7);
    EXPECT_FALSE(seed.result.from_tuning_db);
    for (const std::string &k : {rows.result.fingerprint, machine.result.fingerprint, seed.result.fingerprint})
        EXPECT_NE(k, key);
    autosched::TuningDb open(db.string());
    EXPECT_EQ(open.size(), 4);
}

TEST(TuningDb, MergeCopiesTheEntriesTheOtherDatabaseLacks) {
    const fs::path a = fresh_tuning_db("merge_a"), b = fresh_tuning_db("merge_b");
    tune_with_db(row_scale_by_sum(256), 256, 64, a);
    tune_with_db(row_scale_by_sum(256), 256, 64, b);
    tune_with_db(row_scale_by_sum(256), 256, 128, b);
    autosched::TuningDb da(a.string());
    EXPECT_EQ(da.merge(b.string()), 1);
    EXPECT_EQ(da.size(), 2);
    EXPECT_EQ(da.merge(b.string()), 0);
    const fs::path not_db = fresh_tuning_db("not_a_db");
    {
        std::ofstream f(not_db);
        f << "this is not an SQLite file, it is text long enough to have a header's worth of bytes in it";
    }
    EXPECT_NE(error_of([&] { da.merge(not_db.string()); }).find(not_db.string()), std::string::npos);
}

TEST(TuningDb, ADamagedEntryIsAnErrorNamingTheDatabaseAndTheEntry) {
    const fs::path db = fresh_tuning_db("damaged");
    const std::string key = tune_with_db(row_scale_by_sum(256), 256, 64, db).result.fingerprint;
    {
        autosched::TuningDb open(db.string());
        open.store(key, "k", R"({"directives": [{"kind": 99}]})");
    }
    const std::string e = error_of([&] { tune_with_db(row_scale_by_sum(256), 256, 64, db); });
    EXPECT_NE(e.find("tuning database '" + db.string() + "', entry " + key), std::string::npos) << e;
    EXPECT_NE(e.find("directives[0]"), std::string::npos) << e;
    // A record that names a loop the pipeline does not have.
    {
        autosched::TuningDb open(db.string());
        autosched::TunedSchedule t;
        autosched::Directive d;
        d.kind = autosched::Directive::StickVectorize;
        d.func = "F1";
        d.vars = {"no_such_loop"};
        d.ints = {1};
        t.directives = {d};
        t.layouts = {DeviceLayout{}, DeviceLayout{}};
        open.store(key, "k", autosched::encode_tuned_schedule(t));
    }
    const std::string e2 = error_of([&] { tune_with_db(row_scale_by_sum(256), 256, 64, db); });
    EXPECT_NE(e2.find("entry " + key), std::string::npos) << e2;
}

TEST(TuningDb, AFileThatIsNotADatabaseIsAnErrorNamingIt) {
    const fs::path p = fs::path(::testing::TempDir()) / "tuning_db_garbage.db";
    {
        std::ofstream f(p);
        f << std::string(4096, 'x');
    }
    const std::string e = error_of([&] { tune_with_db(row_scale_by_sum(256), 256, 64, p); });
    EXPECT_NE(e.find("tuning database '" + p.string() + "'"), std::string::npos) << e;
}

// Entries are outside input: each malformed field is named (the fuzz harness covers the rest).
TEST(TunedSchedule, MalformedEntriesAreErrorsNamingTheField) {
    using autosched::decode_tuned_schedule;
    auto error = [](const std::string &text) { return error_of([&] { decode_tuned_schedule(text); }); };
    EXPECT_NE(error("not json").find("not JSON"), std::string::npos);
    EXPECT_NE(error("[]").find("no field 'directives'"), std::string::npos);
    EXPECT_NE(error(R"({"directives": 3})").find("directives is not an array"), std::string::npos);
    EXPECT_NE(error(R"({"directives": [{"kind": -1}]})").find("directives[0].kind = -1"), std::string::npos);
    EXPECT_NE(error(R"({"directives": [{"kind": 0, "func": "f", "at_func": "", "update": 0, "fixed": false,
                                         "vars": [], "ints": [1]}]})")
                  .find("names 0 loops"),
              std::string::npos);
    autosched::TunedSchedule ok;
    ok.layouts = {DeviceLayout{0, {1, 0}}};
    ok.summary = "s";
    const std::string text = autosched::encode_tuned_schedule(ok);
    EXPECT_EQ(autosched::encode_tuned_schedule(decode_tuned_schedule(text)), text);
    // An entry stored before the model's validity notes were has none, and says it does not know.
    EXPECT_FALSE(decode_tuned_schedule(text).validity_known);
    ok.validity = {"short_tiles", "ring"};
    ok.validity_known = true;
    const autosched::TunedSchedule back = decode_tuned_schedule(autosched::encode_tuned_schedule(ok));
    EXPECT_TRUE(back.validity_known);
    EXPECT_EQ(back.validity, ok.validity);
    EXPECT_NE(error(R"({"directives": [], "layouts": [], "us": 1, "exact": true, "validity": [3]})").find("validity"),
              std::string::npos);
}

}  // namespace
}  // namespace spyre::testing
