// Collects timed spans per core and engine and writes them as a Chrome trace event file
// (chrome://tracing, Perfetto): one process per core, one thread per engine track.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spyre {

enum TraceTrack { kTrackControl = 0, kTrackVector, kTrackPE, kTrackDmaLoad, kTrackDmaStore, kTrackRing, kNumTracks };

class TraceWriter {
public:
    TraceWriter(bool enabled, int64_t max_events) : enabled_(enabled), max_events_(max_events) {}
    bool enabled() const { return enabled_; }
    // `name` must outlive the writer (opcode names and literals do).
    void span(int core, TraceTrack track, const char *name, double start_cycles, double end_cycles, int64_t pc);
    // Writes the file; cycles become microseconds at `clock_ghz`. Throws spyre::Error naming the path.
    void write(const std::string &path, double clock_ghz, int num_cores) const;
    int64_t dropped() const { return dropped_; }

private:
    struct Span {
        int core;
        TraceTrack track;
        const char *name;
        double start, end;
        int64_t pc;
    };
    bool enabled_;
    int64_t max_events_;
    int64_t dropped_ = 0;
    std::vector<Span> spans_;
};

}  // namespace spyre
