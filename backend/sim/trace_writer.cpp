#include "trace_writer.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "device/error.h"

namespace spyre {

namespace {
const char *kTrackNames[kNumTracks] = {"control", "vector", "pe", "dma-load", "dma-store", "ring"};
}

void TraceWriter::span(int core, TraceTrack track, const char *name, double start, double end, int64_t pc) {
    if (!enabled_) return;
    if (int64_t(spans_.size()) >= max_events_) {
        dropped_++;  // bounded memory: a huge run keeps its first max_events spans
        return;
    }
    spans_.push_back(Span{core, track, name, start, end, pc});
}

void TraceWriter::write(const std::string &path, double clock_ghz, int num_cores) const {
    std::ofstream out(path);
    if (!out) throw_error("cannot open trace file '", path, "' for writing");
    double to_us = 1.0 / (clock_ghz * 1000.0);
    // Streamed by hand: a million-event trace would be slow to build as one json tree.
    out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    bool first = true;
    auto sep = [&]() {
        if (!first) out << ",\n";
        first = false;
    };
    for (int c = 0; c < num_cores; c++) {
        sep();
        out << R"({"ph":"M","name":"process_name","pid":)" << c << R"(,"args":{"name":"core )" << c << "\"}}";
        for (int t = 0; t < kNumTracks; t++) {
            sep();
            out << R"({"ph":"M","name":"thread_name","pid":)" << c << ",\"tid\":" << t << R"(,"args":{"name":")"
                << kTrackNames[t] << "\"}}";
        }
    }
    out.precision(6);
    out << std::fixed;
    for (const Span &s : spans_) {
        sep();
        out << R"({"ph":"X","name":")" << s.name << R"(","pid":)" << s.core << ",\"tid\":" << int(s.track)
            << ",\"ts\":" << s.start * to_us << ",\"dur\":" << (s.end - s.start) * to_us << ",\"args\":{\"pc\":" << s.pc
            << "}}";
    }
    out << "\n]";
    if (dropped_ > 0) out << ",\"otherData\":{\"dropped_events\":" << dropped_ << "}";
    out << "}\n";
    if (!out) throw_error("failed writing trace file '", path, "'");
}

}  // namespace spyre
