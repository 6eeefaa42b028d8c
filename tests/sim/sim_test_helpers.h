// Shared helpers for the whole-program simulator tests: byte/element conversions, error capture,
// one-instruction programs and the verifier's message, a Chrome-trace reader and a bandwidth-bound streaming copy program used by several timing tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "device/error.h"
#include "device/half.h"
#include "device/layout.h"
#include "device/program_builder.h"
#include "device/program_verify.h"
#include "sim/simulator.h"

namespace spyre {
namespace simtest {

constexpr int64_t kStick = 128;

// Timing-only options; `summarize` lets the simulator time repeated loop iterations by summary.
inline SimOptions timing_only(bool summarize = true) {
    SimOptions o;
    o.timing_only = true;
    o.summarize_loops = summarize;
    return o;
}

template <typename T>
std::vector<uint8_t> to_bytes(const std::vector<T> &v) {
    std::vector<uint8_t> out(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

template <typename T>
std::vector<T> from_bytes(const std::vector<uint8_t> &b) {
    std::vector<T> out(b.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(T));
    return out;
}

// A program of the one instruction `in` (no buffers), for the verifier's and listing's tests.
inline DeviceProgram one_instruction(const Instr &in) {
    DeviceProgram p;
    p.kernel_name = "k";
    p.code = {in};
    return p;
}

// The verifier's message for `p` on the default machine, or "" when it accepts it.
inline std::string verify_error(const DeviceProgram &p) {
    try {
        verify_for_machine(p, MachineDesc{});
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

// The message of the spyre::Error `f` throws; records a test failure (and returns "") if none.
inline std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a spyre::Error, none was thrown";
    return "";
}

inline ::testing::AssertionResult contains(const std::string &msg, const std::string &part) {
    if (msg.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << msg << "\" does not contain \"" << part << "\"";
}

inline std::string read_text(const std::string &path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// One complete ("ph":"X") event of a Chrome trace, times in microseconds.
struct TraceSpan {
    std::string name;
    int pid = -1, tid = -1;
    double ts = 0, dur = 0;
    int64_t pc = -1;
    double end() const { return ts + dur; }
};

inline std::vector<TraceSpan> trace_spans(const nlohmann::json &trace) {
    std::vector<TraceSpan> out;
    for (const auto &e : trace.at("traceEvents")) {
        if (e.at("ph") != "X") continue;
        TraceSpan s;
        s.name = e.at("name").get<std::string>();
        s.pid = e.at("pid").get<int>();
        s.tid = e.at("tid").get<int>();
        s.ts = e.at("ts").get<double>();
        s.dur = e.at("dur").get<double>();
        if (e.contains("args") && e["args"].contains("pc")) s.pc = e["args"]["pc"].get<int64_t>();
        out.push_back(s);
    }
    return out;
}

// A streaming copy: each core copies its own `bytes_per_core` slice of buffer "in" to "out" through
// LX in chunks of `chunk` bytes, double-buffered (load chunk i+1 while chunk i is stored). Slices are
// selected with CORE_ID. With `reads_only` the program only loads (twice as many chunks, so the
// same number of bytes crosses the device-memory channel). `vector_sticks_per_chunk` > 0 adds a
// VCOPY of that many sticks per chunk (a compute stage between load and store).
struct StreamSpec {
    int cores = 1;
    int64_t bytes_per_core = 4 << 20;
    int64_t chunk = 256 << 10;
    bool reads_only = false;
    int32_t vector_sticks_per_chunk = 0;
};

inline DeviceProgram streaming_copy(const StreamSpec &s) {
    const int64_t sb = 128;
    const int64_t chunks = s.bytes_per_core / s.chunk;
    if (chunks % 2 || s.bytes_per_core % s.chunk) throw Error("streaming_copy: need an even number of whole chunks");
    ProgramBuilder b("stream", s.cores);
    const int64_t total = s.bytes_per_core * s.cores * (s.reads_only ? 2 : 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {total / 2});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {s.reads_only ? 64 : total / 2});
    DmaDesc d;
    d.sticks = int32_t(s.chunk / sb);
    int desc = b.dma_desc(d);
    const int32_t lx_buf[2] = {0, int32_t(s.chunk)};
    const int32_t lx_tmp[2] = {int32_t(2 * s.chunk), int32_t(3 * s.chunk)};
    const int64_t slice = s.bytes_per_core * (s.reads_only ? 2 : 1);
    const int64_t n = s.reads_only ? 2 * chunks : chunks;

    Reg core = b.alloc(), rin = b.alloc(), rout = b.alloc(), pair = b.alloc(), idx = b.alloc(), more = b.alloc(),
        limit = b.alloc();
    b.core_id(core);
    b.muli(rin, core, int32_t(slice));
    b.muli(rout, core, int32_t(slice));
    b.li(idx, 0);
    b.li(limit, n);
    if (s.reads_only) {
        b.loop(pair, int32_t(n / 2));
        for (int p = 0; p < 2; p++) {
            b.dma_ld(p, in, rin, 0, Lx(lx_buf[p]), desc);
            b.addi(rin, rin, int32_t(s.chunk));
        }
        b.end_loop();
        b.wait(0x3);
        return b.finish();
    }
    // Tags: loads 0/1, stores 2/3 by buffer parity, compute 4.
    b.dma_ld(0, in, rin, 0, Lx(lx_buf[0]), desc);
    b.addi(rin, rin, int32_t(s.chunk));
    b.loop(pair, int32_t(n / 2));
    for (int p = 0; p < 2; p++) {
        int q = 1 - p;
        b.addi(idx, idx, 1);
        b.op3(Opcode::CMPLT, more, idx, limit);
        b.if_(more);
        b.wait(1u << (2 + q));  // the store that last read buffer q
        b.dma_ld(q, in, rin, 0, Lx(lx_buf[q]), desc);
        b.addi(rin, rin, int32_t(s.chunk));
        b.end_if();
        b.wait(1u << p);
        int32_t src = lx_buf[p];
        if (s.vector_sticks_per_chunk > 0) {
            b.vun(Opcode::VCOPY, DType::F16, 4, Lx(lx_tmp[p]), Lx(lx_buf[p]), s.vector_sticks_per_chunk);
            b.wait(1u << 4);
            src = lx_tmp[p];
        }
        b.dma_st(2 + p, out, rout, 0, Lx(src), desc);
        b.addi(rout, rout, int32_t(s.chunk));
    }
    b.end_loop();
    b.wait(0xF);
    return b.finish();
}

}  // namespace simtest
}  // namespace spyre
