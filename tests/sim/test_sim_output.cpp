// What a run reports: SimStats as JSON (parsed back with nlohmann::json and checked against the
// struct and against bounds), busy fractions in [0, 1] for programs that load each engine, and the
// Chrome trace (parsed; tracks, metadata, spans consistent with the program and the stats).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>

#include "sim/trace_writer.h"
#include "sim_test_helpers.h"

namespace spyre {
namespace {

using nlohmann::json;
using simtest::to_bytes;

using simtest::timing_only;

// Four cores: stream 16 tiles of 8 sticks each through LX with a vector op per tile, then exchange
// with the neighbour and reduce. Loads every engine but the PE array, which gets one matmul.
DeviceProgram busy_program(int cores) {
    ProgramBuilder b("busy", cores);
    const int tiles = 16, sticks = 8;
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * sticks * tiles, cores});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64 * sticks * tiles, cores});
    DmaDesc d;
    d.sticks = sticks;
    int desc = b.dma_desc(d);
    MatmulDesc mm;
    mm.m = 64, mm.n = 64, mm.k = 64, mm.lda = 128, mm.ldb = 128, mm.ldc = 256;
    int dmm = b.mm_desc(mm);
    Reg core = b.alloc(), off = b.alloc(), i = b.alloc();
    b.core_id(core);
    b.muli(off, core, 64 * sticks * tiles * 2);
    b.matmul(6, Lx(1 << 20), Lx(1 << 19), Lx((1 << 19) + 65536), dmm, false);
    b.loop(i, tiles);
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.wait(0x5);
    b.vun(Opcode::VEXP, DType::F16, 1, Lx(4096), Lx(0), sticks);
    b.wait_tag(1);
    b.dma_st(2, out, off, 0, Lx(4096), desc);
    b.addi(off, off, sticks * 128);
    b.end_loop();
    b.wait(0x4);
    b.ring_send(3, 1, Lx(4096), sticks);
    b.ring_recv(4, -1, Lx(8192), sticks);
    b.wait(0x18);
    b.ring_reduce(DType::F16, 5, RedOp::Sum, Lx(8192), sticks);
    b.wait(0x60);
    return b.finish();
}

void check_stats_json(const SimStats &st, int cores) {
    json j = json::parse(st.to_json_text());
    ASSERT_TRUE(j.is_object());
    for (const char *k : {"cycles", "us", "clock_ghz", "instructions", "dram_read_bytes", "dram_write_bytes",
                          "ring_bytes", "vector_sticks", "pe_macs", "lx_peak_bytes", "summarised_iterations", "stepped_instructions",
                          "mean_busy_fraction", "cores"})
        EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_DOUBLE_EQ(j["cycles"].get<double>(), st.cycles);
    EXPECT_NEAR(j["us"].get<double>(), st.cycles / (st.clock_ghz * 1000.0), 1e-9);
    EXPECT_EQ(j["dram_read_bytes"].get<int64_t>(), st.dram_read_bytes);
    EXPECT_EQ(j["dram_write_bytes"].get<int64_t>(), st.dram_write_bytes);
    EXPECT_EQ(j["instructions"].get<int64_t>(), st.instructions);
    ASSERT_EQ(j["cores"].size(), size_t(cores));
    int64_t reads = 0;
    for (int c = 0; c < cores; c++) {
        const json &jc = j["cores"][size_t(c)];
        EXPECT_EQ(jc["core"].get<int>(), c);
        reads += jc["dram_read_bytes"].get<int64_t>();
        EXPECT_LE(jc["finish_cycles"].get<double>(), st.cycles);
        for (int e = 0; e < kNumAsyncEngines; e++) {
            double f = jc["busy_fraction"][engine_index_name(e)].get<double>();
            EXPECT_GE(f, 0.0) << "core " << c << " " << engine_index_name(e);
            EXPECT_LE(f, 1.0 + 1e-9) << "core " << c << " " << engine_index_name(e);
        }
    }
    EXPECT_EQ(reads, st.dram_read_bytes);
    for (int e = 0; e < kNumAsyncEngines; e++) {
        double f = j["mean_busy_fraction"][engine_index_name(e)].get<double>();
        EXPECT_GE(f, 0.0);
        EXPECT_LE(f, 1.0 + 1e-9) << engine_index_name(e);
    }
}

TEST(SimOutput, StatsJsonParsesAndMatches) {
    const int cores = 4;
    DeviceProgram p = busy_program(cores);
    const MachineDesc m;
    std::vector<std::vector<uint8_t>> images(2);
    images[0].assign(size_t(p.buffer_bytes(0, m.stick_bytes)), 0);
    SimResult r = simulate(p, m, images);
    const SimStats &st = r.stats;
    EXPECT_EQ(st.dram_read_bytes, int64_t(cores) * 16 * 8 * 128);
    EXPECT_EQ(st.dram_write_bytes, st.dram_read_bytes);
    EXPECT_GT(st.pe_macs, 0);
    EXPECT_GT(st.ring_bytes, 0);
    EXPECT_DOUBLE_EQ(st.clock_ghz, m.clock_ghz);
    check_stats_json(st, cores);
    for (int e = 0; e < kNumAsyncEngines; e++)
        EXPECT_GT(st.mean_busy_fraction(e), 0.0) << "every engine did some work: " << engine_index_name(e);
    check_stats_json(simulate(p, m, {}, timing_only()).stats, cores);
}

// Busy fractions of programs that saturate one engine each: close to 1 for that engine, never above.
TEST(SimOutput, BusyFractionsOfSaturatedEngines) {
    const MachineDesc m;
    // Vector: back-to-back ops with a single WAIT.
    {
        ProgramBuilder b("vec_busy", 1);
        for (int k = 0; k < 50; k++) b.vun(Opcode::VEXP, DType::F16, 0, Lx(1 << 20), Lx(0), 64);
        b.wait_tag(0);
        SimStats st = simulate(b.finish(), m, {}, timing_only()).stats;
        EXPECT_GT(st.busy_fraction(0, kEngVector), 0.95);
        EXPECT_LE(st.busy_fraction(0, kEngVector), 1.0 + 1e-9);
        check_stats_json(st, 1);
    }
    // DMA: one core streaming loads only.
    {
        simtest::StreamSpec s;
        s.reads_only = true;
        for (bool summ : {false, true}) {
            SimStats st = simulate(simtest::streaming_copy(s), m, {}, timing_only(summ)).stats;
            EXPECT_GT(st.busy_fraction(0, kEngDMA), 0.95) << "summarize " << summ;
            check_stats_json(st, 1);
        }
    }
}

// Many small neighbour transfers in flight at once: ring busy time must not count the overlap of
// consecutive transfers twice.
TEST(SimOutput, RingBusyFractionWithBackToBackTransfers) {
    const int cores = 2, msgs = 32;
    ProgramBuilder b("ring_busy", cores);
    for (int k = 0; k < msgs; k++) {
        b.ring_send(0, 1, Lx(k * 128), 1);
        b.ring_recv(1, -1, Lx(65536 + k * 128), 1);
    }
    b.wait(0x3);
    SimStats st = simulate(b.finish(), MachineDesc{}, {}, timing_only()).stats;
    EXPECT_EQ(st.ring_bytes, int64_t(cores) * msgs * 128);
    check_stats_json(st, cores);
    for (int c = 0; c < cores; c++) {
        EXPECT_LE(st.cores[c].busy_cycles[kEngRing], st.cores[c].finish_cycles + 1e-9) << "core " << c;
        // The link moved msgs sticks at ring_bytes_per_cycle: at least that long busy.
        EXPECT_GE(st.cores[c].busy_cycles[kEngRing], msgs * 128 / MachineDesc{}.ring_bytes_per_cycle);
    }
}

// --- Chrome trace ----------------------------------------------------------------------------------

TEST(SimOutput, ChromeTraceParsesWithTracksAndSpans) {
    const int cores = 4;
    const MachineDesc m;
    DeviceProgram p = busy_program(cores);
    std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_sim_output_trace.json";
    SimOptions o;
    o.trace_path = path;
    std::vector<std::vector<uint8_t>> images(2);
    images[0].assign(size_t(p.buffer_bytes(0, m.stick_bytes)), 0);
    SimResult r = simulate(p, m, images, o);
    json trace = json::parse(simtest::read_text(path));
    std::remove(path.c_str());

    ASSERT_TRUE(trace.contains("traceEvents"));
    ASSERT_TRUE(trace["traceEvents"].is_array());
    // Metadata: a name for every core (process) and every engine track (thread).
    std::set<int> named_procs;
    std::map<std::pair<int, int>, std::string> track_names;
    for (const auto &e : trace["traceEvents"]) {
        if (e["ph"] != "M") continue;
        if (e["name"] == "process_name") named_procs.insert(e["pid"].get<int>());
        if (e["name"] == "thread_name")
            track_names[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"].get<std::string>();
    }
    EXPECT_EQ(named_procs.size(), size_t(cores));
    const std::vector<std::string> expected_tracks = {"control", "vector", "pe", "dma-load", "dma-store", "ring"};
    for (int c = 0; c < cores; c++)
        for (int t = 0; t < int(expected_tracks.size()); t++)
            EXPECT_EQ((track_names[{c, t}]), expected_tracks[size_t(t)]) << "core " << c << " track " << t;

    std::vector<simtest::TraceSpan> spans = simtest::trace_spans(trace);
    ASSERT_FALSE(spans.empty());
    const double us_per_cycle = 1.0 / (m.clock_ghz * 1000.0);
    std::map<std::string, int> count;
    std::vector<double> vec_us(cores, 0.0);
    for (const auto &s : spans) {
        EXPECT_GE(s.pid, 0);
        EXPECT_LT(s.pid, cores);
        EXPECT_TRUE(track_names.count({s.pid, s.tid})) << s.name << " on an unnamed track " << s.tid;
        EXPECT_GE(s.dur, 0.0) << s.name;
        EXPECT_LE(s.end(), r.stats.us + 1e-6) << s.name;
        count[s.name]++;
        // Engine spans carry the pc of the instruction that made them.
        if (s.tid != kTrackControl) {
            ASSERT_GE(s.pc, 0);
            ASSERT_LT(size_t(s.pc), p.code.size());
            EXPECT_EQ(s.name, op_info(p.code[size_t(s.pc)].op).name) << "pc " << s.pc;
        }
        std::string track = track_names[{s.pid, s.tid}];
        const std::map<std::string, std::string> engine_track = {
            {"DMA_LD", "dma-load"}, {"DMA_ST", "dma-store"}, {"VEXP", "vector"}, {"MATMUL", "pe"},
            {"RING_SEND", "ring"}, {"RING_RECV", "ring"}, {"RING_REDUCE", "ring"}};
        auto it = engine_track.find(s.name);
        if (it != engine_track.end()) {
            EXPECT_EQ(track, it->second) << s.name;
        }
        if (s.tid == kTrackVector) vec_us[size_t(s.pid)] += s.dur;
    }
    EXPECT_EQ(count["DMA_LD"], cores * 16);
    EXPECT_EQ(count["DMA_ST"], cores * 16);
    EXPECT_EQ(count["VEXP"], cores * 16);
    EXPECT_EQ(count["MATMUL"], cores);
    EXPECT_EQ(count["RING_SEND"], cores);
    EXPECT_EQ(count["RING_RECV"], cores);
    EXPECT_EQ(count["RING_REDUCE"], cores);
    EXPECT_GT(count["WAIT"], 0);
    // The vector track adds up to the vector busy time of the stats.
    for (int c = 0; c < cores; c++)
        EXPECT_NEAR(vec_us[size_t(c)], r.stats.cores[c].busy_cycles[kEngVector] * us_per_cycle, 1e-3) << c;
    // Spans of one engine track never overlap (in-order engines).
    for (int c = 0; c < cores; c++) {
        for (int t : {int(kTrackVector), int(kTrackDmaLoad), int(kTrackDmaStore)}) {
            std::vector<std::pair<double, double>> iv;
            for (const auto &s : spans)
                if (s.pid == c && s.tid == t) iv.push_back({s.ts, s.end()});
            std::sort(iv.begin(), iv.end());
            for (size_t k = 1; k < iv.size(); k++)
                EXPECT_GE(iv[k].first + 1e-6, iv[k - 1].second) << "core " << c << " track " << t;
        }
    }
}

TEST(SimOutput, TraceMarksLoopSummaries) {
    simtest::StreamSpec s;
    s.chunk = 8 << 10;
    s.bytes_per_core = 64 * s.chunk;
    std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_sim_summary_trace.json";
    SimOptions o = timing_only();
    o.trace_path = path;
    SimResult r = simulate(simtest::streaming_copy(s), MachineDesc{}, {}, o);
    json trace = json::parse(simtest::read_text(path));
    std::remove(path.c_str());
    ASSERT_GT(r.stats.summarised_iterations, 0);
    int summaries = 0;
    for (const auto &sp : simtest::trace_spans(trace))
        if (sp.name == "loop summary") {
            summaries++;
            EXPECT_EQ(sp.tid, int(kTrackControl));
        }
    EXPECT_EQ(summaries, 1);
}

TEST(SimOutput, TraceEventLimitRecordsDrops) {
    ProgramBuilder b("many", 1);
    for (int k = 0; k < 40; k++) b.vfill(DType::F16, 0, Lx(0), 1.0f, 1);
    b.wait_tag(0);
    std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_sim_limited_trace.json";
    SimOptions o = timing_only();
    o.trace_path = path;
    o.max_trace_events = 10;
    simulate(b.finish(), MachineDesc{}, {}, o);
    json trace = json::parse(simtest::read_text(path));
    std::remove(path.c_str());
    EXPECT_EQ(simtest::trace_spans(trace).size(), 10u);
    ASSERT_TRUE(trace.contains("otherData"));
    EXPECT_EQ(trace["otherData"]["dropped_events"].get<int>(), 31);  // 40 VFILL + 1 WAIT - 10
}

}  // namespace
}  // namespace spyre
