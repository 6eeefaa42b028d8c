#include "device/machine_desc.h"

#include <gtest/gtest.h>

#include "device_test_util.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <unistd.h>

#include "device/error.h"
#include "test_paths.h"

using namespace spyre;

namespace {

using device_testing::contains;
using device_testing::error_of;


std::string machine_parse_error(const std::string &text) {
    return error_of([&] { MachineDesc::from_json_text(text, "machine.json"); });
}


}  // namespace

TEST(MachineDesc, DefaultsMatchPublicFacts) {
    MachineDesc m;
    EXPECT_EQ(m.cores, 32);
    EXPECT_EQ(m.corelets_per_core, 2);
    EXPECT_EQ(m.lx_bytes, 2 * 1024 * 1024);
    // round_up_128(int((2 MiB - 64 KiB) * 0.8)), as in scratchpad_planning.md.
    int64_t usable = int64_t((2 * 1024 * 1024 - 64 * 1024) * 0.8);
    usable = (usable + 127) / 128 * 128;
    EXPECT_EQ(usable, 1625344);
    EXPECT_EQ(m.lx_usable_bytes, usable);
    EXPECT_EQ(m.stick_bytes, 128);
    EXPECT_EQ(m.stick_elems(2), 64);
    EXPECT_EQ(m.stick_elems(4), 32);
    EXPECT_EQ(m.max_span_bytes, 256LL * 1024 * 1024);
    EXPECT_EQ(m.device_memory_bytes, 128LL * 1000 * 1000 * 1000);
    EXPECT_EQ(m.pe_pass_rows, 8);
    // IBM's measured device-memory figures (cost_model.py).
    EXPECT_DOUBLE_EQ(m.dram_bytes_per_ns, 150.0);
    EXPECT_DOUBLE_EQ(m.dram_turnaround_ns_per_byte, 0.00574);
    EXPECT_DOUBLE_EQ(m.restickify_bytes_per_ns, 116.0);
    // The steady PE rate sits between IBM's sustained 1140 and the datasheet's 1536 MAC/ns.
    EXPECT_GT(m.pe_macs_per_ns, 1140.0);
    EXPECT_LT(m.pe_macs_per_ns, 1536.0);
    EXPECT_DOUBLE_EQ(m.ring_bytes_per_cycle, 128.0);
    EXPECT_NO_THROW(m.validate());
}

TEST(MachineDesc, ParamTableCoversEveryFieldOnce) {
    const auto &params = machine_params();
    // 10 int64 fields and 59 doubles; sizeof catches a field added to the struct but not the table.
    EXPECT_EQ(params.size(), 69u);
    EXPECT_EQ(sizeof(MachineDesc), params.size() * 8);
    std::set<std::string> keys;
    // Member pointers have no ordering; compare the fields' byte offsets in an object instead.
    MachineDesc m;
    auto offset = [&](const void *field) { return static_cast<const char *>(field) - reinterpret_cast<const char *>(&m); };
    std::set<ptrdiff_t> offsets;
    for (const auto &p : params) {
        EXPECT_TRUE(keys.insert(p.key).second) << p.key;
        EXPECT_NE(std::string(p.unit), "") << p.key;
        EXPECT_NE(std::string(p.doc), "") << p.key;
        if (p.is_integer) {
            ASSERT_NE(p.int_field, nullptr) << p.key;
            EXPECT_EQ(p.real_field, nullptr) << p.key;
            EXPECT_TRUE(offsets.insert(offset(&(m.*p.int_field))).second) << p.key;
        } else {
            ASSERT_NE(p.real_field, nullptr) << p.key;
            EXPECT_EQ(p.int_field, nullptr) << p.key;
            EXPECT_TRUE(offsets.insert(offset(&(m.*p.real_field))).second) << p.key;
        }
    }
    // Table order is declaration order: offsets strictly increase.
    ptrdiff_t prev = -1;
    for (const auto &p : params) {
        ptrdiff_t o = p.is_integer ? offset(&(m.*p.int_field)) : offset(&(m.*p.real_field));
        EXPECT_GT(o, prev) << p.key;
        prev = o;
    }
    EXPECT_EQ(params.front().key, std::string("cores"));
    EXPECT_EQ(params.back().key, std::string("ibm_mm_overlap_exposed"));
}

TEST(MachineDesc, ParamSources) {
    auto source_of = [](const std::string &key) {
        for (const auto &p : machine_params())
            if (key == p.key) return p.source;
        ADD_FAILURE() << "no param " << key;
        return ParamSource::Assumption;
    };
    EXPECT_EQ(source_of("cores"), ParamSource::PublicFact);
    EXPECT_EQ(source_of("lx_usable_bytes"), ParamSource::PublicFact);
    EXPECT_EQ(source_of("ring_bytes_per_cycle"), ParamSource::PublicFact);
    EXPECT_EQ(source_of("pe_macs_per_ns"), ParamSource::Calibrated);
    EXPECT_EQ(source_of("restickify_bytes_per_ns"), ParamSource::Measured);
    EXPECT_EQ(source_of("dram_bytes_per_ns"), ParamSource::Measured);
    EXPECT_EQ(source_of("dram_turnaround_ns_per_byte"), ParamSource::Measured);
    EXPECT_EQ(source_of("pe_pass_rows"), ParamSource::PublicFact);
    EXPECT_EQ(source_of("dram_write_run_overhead_bytes"), ParamSource::Calibrated);
    EXPECT_EQ(source_of("pe_fill_rows"), ParamSource::Calibrated);
    EXPECT_EQ(source_of("pe_int8_rate_factor"), ParamSource::Assumption);
    EXPECT_EQ(source_of("vec_transc_sticks_per_cycle"), ParamSource::Calibrated);
    EXPECT_EQ(source_of("vec_op_overhead_cycles"), ParamSource::Assumption);
    EXPECT_EQ(source_of("dma_setup_cycles"), ParamSource::Calibrated);
    EXPECT_EQ(source_of("clock_ghz"), ParamSource::Assumption);
    EXPECT_EQ(source_of("dma_queue_depth"), ParamSource::Assumption);
    EXPECT_STREQ(param_source_name(ParamSource::PublicFact), "public fact");
    EXPECT_STREQ(param_source_name(ParamSource::Measured), "measured");
    EXPECT_STREQ(param_source_name(ParamSource::Calibrated), "calibrated");
    EXPECT_STREQ(param_source_name(ParamSource::Assumption), "assumption");
}

TEST(MachineDesc, JsonRoundTripDefaults) {
    MachineDesc m;
    std::string text = m.to_json_text();
    // Keys appear in table order.
    size_t pos = 0;
    for (const auto &p : machine_params()) {
        size_t at = text.find(std::string("\"") + p.key + "\"", pos);
        ASSERT_NE(at, std::string::npos) << p.key;
        pos = at;
    }
    EXPECT_TRUE(contains(text, "\n  \"cores\": 32,"));  // indent 2
    MachineDesc r = MachineDesc::from_json_text(text);
    EXPECT_EQ(r.to_json_text(), text);
}

TEST(MachineDesc, JsonRoundTripAwkwardDoubles) {
    MachineDesc m;
    m.clock_ghz = 1.0 / 3.0;
    m.dram_turnaround_ns_per_byte = 0.1 + 0.2;  // not representable in short decimal
    m.vec_op_overhead_cycles = 1e-300;
    m.restickify_bytes_per_ns = 123456789.123456789;
    m.cores = 7;
    m.max_span_bytes = (int64_t(1) << 62) + 1;  // beyond double precision
    MachineDesc r = MachineDesc::from_json_text(m.to_json_text());
    for (const auto &p : machine_params()) {
        if (p.is_integer)
            EXPECT_EQ(r.*(p.int_field), m.*(p.int_field)) << p.key;
        else
            EXPECT_EQ(r.*(p.real_field), m.*(p.real_field)) << p.key;  // exact, not approximate
    }
}

TEST(MachineDesc, OverrideOneKey) {
    MachineDesc m = MachineDesc::from_json_text(R"({"cores": 8, "clock_ghz": 2})");
    EXPECT_EQ(m.cores, 8);
    EXPECT_DOUBLE_EQ(m.clock_ghz, 2.0);  // a JSON integer is fine for a real parameter
    MachineDesc d;
    EXPECT_EQ(m.lx_bytes, d.lx_bytes);
    EXPECT_DOUBLE_EQ(m.pe_macs_per_ns, d.pe_macs_per_ns);
    EXPECT_NO_THROW(MachineDesc::from_json_text("{}"));
}

TEST(MachineDesc, RejectsUnknownKeyWithSuggestion) {
    std::string msg = machine_parse_error(R"({"corse": 4})");
    EXPECT_TRUE(contains(msg, "machine.json: unknown key 'corse'")) << msg;
    EXPECT_TRUE(contains(msg, "did you mean 'cores'?")) << msg;

    msg = machine_parse_error(R"({"frobnicate": 4})");
    EXPECT_TRUE(contains(msg, "unknown key 'frobnicate'")) << msg;
    EXPECT_FALSE(contains(msg, "did you mean")) << msg;
}

TEST(MachineDesc, RejectsWrongTypes) {
    std::string msg = machine_parse_error(R"({"cores": "32"})");
    EXPECT_TRUE(contains(msg, "machine.json")) << msg;
    EXPECT_TRUE(contains(msg, "'cores'")) << msg;
    EXPECT_TRUE(contains(msg, "integer")) << msg;

    msg = machine_parse_error(R"({"cores": 32.5})");
    EXPECT_TRUE(contains(msg, "'cores'")) << msg;
    EXPECT_TRUE(contains(msg, "integer")) << msg;

    msg = machine_parse_error(R"({"lx_bytes": [1, 2]})");
    EXPECT_TRUE(contains(msg, "'lx_bytes'")) << msg;
    EXPECT_TRUE(contains(msg, "integer")) << msg;

    msg = machine_parse_error(R"({"clock_ghz": "fast"})");
    EXPECT_TRUE(contains(msg, "'clock_ghz'")) << msg;
    EXPECT_TRUE(contains(msg, "number")) << msg;

    msg = machine_parse_error(R"({"clock_ghz": true})");
    EXPECT_TRUE(contains(msg, "'clock_ghz'")) << msg;

    msg = machine_parse_error(R"({"pe_macs_per_ns": [1140]})");
    EXPECT_TRUE(contains(msg, "'pe_macs_per_ns'")) << msg;

    msg = machine_parse_error(R"({"max_span_bytes": 18446744073709551615})");
    EXPECT_TRUE(contains(msg, "'max_span_bytes'")) << msg;
}

TEST(MachineDesc, RejectsNonPositiveValues) {
    std::string msg = machine_parse_error(R"({"cores": 0})");
    EXPECT_TRUE(contains(msg, "machine.json: 'cores' must be > 0, got 0")) << msg;

    msg = machine_parse_error(R"({"dma_queue_depth": -3})");
    EXPECT_TRUE(contains(msg, "'dma_queue_depth'")) << msg;
    EXPECT_TRUE(contains(msg, "-3")) << msg;

    msg = machine_parse_error(R"({"clock_ghz": 0.0})");
    EXPECT_TRUE(contains(msg, "'clock_ghz'")) << msg;
    EXPECT_TRUE(contains(msg, "> 0")) << msg;

    msg = machine_parse_error(R"({"dram_turnaround_ns_per_byte": -0.5})");
    EXPECT_TRUE(contains(msg, "'dram_turnaround_ns_per_byte'")) << msg;
    EXPECT_TRUE(contains(msg, "-0.5")) << msg;
}

// The launch time may be zero (IBM's sweep has no fixed term), never negative.
TEST(MachineDesc, LaunchTimeMayBeZeroButNotNegative) {
    EXPECT_EQ(MachineDesc::from_json_text(R"({"kernel_launch_ns": 0})").kernel_launch_ns, 0.0);
    std::string msg = machine_parse_error(R"({"kernel_launch_ns": -1})");
    EXPECT_TRUE(contains(msg, "'kernel_launch_ns' must be >= 0, got -1")) << msg;
    MachineDesc m;
    m.kernel_launch_ns = -2;
    try {
        m.validate("mine");
        ADD_FAILURE() << "negative launch time accepted";
    } catch (const Error &e) {
        EXPECT_TRUE(contains(e.what(), "mine: 'kernel_launch_ns' must be >= 0")) << e.what();
    }
}

TEST(MachineDesc, RejectsMalformedJson) {
    std::string msg = machine_parse_error(R"({"cores": 32,})");
    EXPECT_TRUE(contains(msg, "machine.json")) << msg;
    EXPECT_TRUE(contains(msg, "malformed JSON")) << msg;
    EXPECT_TRUE(contains(msg, "column")) << msg;  // nlohmann's position

    msg = machine_parse_error("");
    EXPECT_TRUE(contains(msg, "machine.json")) << msg;

    msg = machine_parse_error(R"({"clock_ghz": 1e400})");  // overflows a double
    EXPECT_TRUE(contains(msg, "machine.json")) << msg;
}

TEST(MachineDesc, RejectsNonObjectTopLevel) {
    for (const char *text : {"[1, 2]", "32", "\"cores\"", "null"}) {
        std::string msg = machine_parse_error(text);
        EXPECT_TRUE(contains(msg, "machine.json")) << msg;
        EXPECT_TRUE(contains(msg, "object")) << msg;
    }
}

TEST(MachineDesc, ValidateCrossParameter) {
    std::string msg = machine_parse_error(R"({"lx_usable_bytes": 4194304})");
    EXPECT_TRUE(contains(msg, "machine.json")) << msg;
    EXPECT_TRUE(contains(msg, "'lx_usable_bytes'")) << msg;
    EXPECT_TRUE(contains(msg, "'lx_bytes'")) << msg;

    msg = machine_parse_error(R"({"stick_bytes": 96})");
    EXPECT_TRUE(contains(msg, "'stick_bytes'")) << msg;
    EXPECT_TRUE(contains(msg, "power of two")) << msg;

    msg = machine_parse_error(R"({"stick_bytes": 2})");
    EXPECT_TRUE(contains(msg, "'stick_bytes'")) << msg;

    msg = machine_parse_error(R"({"lx_bytes": 2097216, "lx_usable_bytes": 1024})");  // 2 MiB + 64: not whole sticks
    EXPECT_TRUE(contains(msg, "'lx_bytes'")) << msg;
    EXPECT_TRUE(contains(msg, "'stick_bytes'")) << msg;

    msg = machine_parse_error(R"({"cores": 1025})");
    EXPECT_TRUE(contains(msg, "'cores'")) << msg;

    msg = machine_parse_error(R"({"dma_queue_depth": 4096})");
    EXPECT_TRUE(contains(msg, "'dma_queue_depth'")) << msg;

    // validate() on a MachineDesc built in code.
    MachineDesc m;
    m.clock_ghz = 0;
    msg = error_of([&] { m.validate("test"); });
    EXPECT_TRUE(contains(msg, "test: 'clock_ghz'")) << msg;
}

TEST(MachineDesc, FromFile) {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("spyre_machine_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::path good = dir / "good.json";
    {
        std::ofstream(good) << R"({"cores": 4, "clock_ghz": 1.25})";
    }
    MachineDesc m = MachineDesc::from_file(good.string());
    EXPECT_EQ(m.cores, 4);
    EXPECT_DOUBLE_EQ(m.clock_ghz, 1.25);

    // Errors from a file are prefixed with its path.
    fs::path bad = dir / "bad.json";
    {
        std::ofstream(bad) << R"({"corse": 4})";
    }
    std::string msg = error_of([&] { MachineDesc::from_file(bad.string()); });
    EXPECT_TRUE(contains(msg, bad.string() + ": unknown key 'corse'")) << msg;

    fs::path missing = dir / "no_such_dir" / "machine.json";
    msg = error_of([&] { MachineDesc::from_file(missing.string()); });
    EXPECT_TRUE(contains(msg, missing.string())) << msg;

    fs::remove_all(dir);
}

TEST(MachineDesc, UnitConversions) {
    MachineDesc m;
    EXPECT_DOUBLE_EQ(m.ns_to_cycles(2.0), 3.0);
    EXPECT_DOUBLE_EQ(m.cycles_to_us(1500.0), 1.0);
}

// docs/machine.md carries the generated parameter table; it must match the code.
TEST(MachineDesc, DocsTableMatchesCode) {
    std::ifstream in(std::string(SPYRE_SOURCE_DIR) + "/docs/machine.md");
    ASSERT_TRUE(in) << "docs/machine.md not found";
    std::stringstream ss;
    ss << in.rdbuf();
    std::string doc = ss.str();
    size_t b = doc.find("<!-- BEGIN PARAMS -->\n"), e = doc.find("<!-- END PARAMS -->");
    ASSERT_NE(b, std::string::npos);
    ASSERT_NE(e, std::string::npos);
    b += std::string("<!-- BEGIN PARAMS -->\n").size();
    EXPECT_EQ(doc.substr(b, e - b), spyre::machine_params_markdown(spyre::MachineDesc{}))
        << "regenerate the table with build/bin/spyre-machine --markdown";
}
