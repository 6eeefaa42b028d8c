// More device-memory bandwidth never slows a program down: the softmax stage programs and streaming
// copies, timed with the peak (and the per-core DMA limit) raised step by step.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>

#include "../sim/sim_test_helpers.h"
#include "softmax_stages.h"

namespace spyre {
namespace {

struct NamedProgram {
    std::string name;
    DeviceProgram program;
};

std::vector<NamedProgram> programs() {
    std::vector<NamedProgram> out;
    for (int s = 1; s <= kNumSoftmaxStages; s++)
        out.push_back({"softmax stage " + std::to_string(s), build_softmax_stage(s, SoftmaxShape{256, 1024})});
    simtest::StreamSpec copy;
    copy.bytes_per_core = 2 << 20;
    copy.chunk = 64 << 10;
    out.push_back({"copy 1 core", simtest::streaming_copy(copy)});
    simtest::StreamSpec copy8 = copy;
    copy8.cores = 8;
    copy8.vector_sticks_per_chunk = 512;
    out.push_back({"copy+vector 8 cores", simtest::streaming_copy(copy8)});
    simtest::StreamSpec reads = copy;
    reads.reads_only = true;
    reads.cores = 4;
    out.push_back({"reads 4 cores", simtest::streaming_copy(reads)});
    return out;
}

const std::vector<double> kSteps = {25, 50, 100, 150, 250, 500, 1000, 2000, 4000};

// Times every program at every bandwidth step, with `set` applying the step to the machine.
void expect_monotone(const std::function<void(MachineDesc &, double)> &set, bool summarize) {
    SimOptions o;
    o.timing_only = true;
    o.summarize_loops = summarize;
    for (const NamedProgram &np : programs()) {
        std::ostringstream series;
        double prev = INFINITY;
        for (double bw : kSteps) {
            MachineDesc m;
            set(m, bw);
            double cycles = simulate(np.program, m, {}, o).stats.cycles;
            series << bw << ": " << cycles << "  ";
            EXPECT_LE(cycles, prev) << np.name << " got slower at " << bw << " B/ns (summarize " << summarize
                                    << ")\n" << series.str();
            prev = cycles;
        }
    }
}

TEST(SimBandwidth, RaisingPeakAndCoreLimitTogetherNeverSlowsDown) {
    for (bool summarize : {false, true})
        expect_monotone([](MachineDesc &m, double bw) { m.dram_bytes_per_ns = m.dma_core_bytes_per_ns = bw; },
                        summarize);
}

TEST(SimBandwidth, RaisingOnlyThePeakNeverSlowsDown) {
    expect_monotone([](MachineDesc &m, double bw) { m.dram_bytes_per_ns = bw; }, true);
}

TEST(SimBandwidth, RaisingOnlyTheCoreLimitNeverSlowsDown) {
    expect_monotone([](MachineDesc &m, double bw) { m.dma_core_bytes_per_ns = bw; }, true);
}

// And the bandwidth matters where it should: a bandwidth-bound copy speeds up a lot from the lowest
// to the highest step, while a compute-bound program (stage 4 keeps its data in LX) barely moves.
TEST(SimBandwidth, BandwidthBoundProgramsBenefit) {
    SimOptions o;
    o.timing_only = true;
    auto at = [&](const DeviceProgram &p, double bw) {
        MachineDesc m;
        m.dram_bytes_per_ns = m.dma_core_bytes_per_ns = bw;
        return simulate(p, m, {}, o).stats.cycles;
    };
    simtest::StreamSpec copy;
    copy.bytes_per_core = 2 << 20;
    copy.chunk = 64 << 10;
    DeviceProgram c = simtest::streaming_copy(copy);
    EXPECT_GT(at(c, 25) / at(c, 4000), 10.0);
    DeviceProgram s1 = build_softmax_stage(1, SoftmaxShape{256, 1024});
    DeviceProgram s4 = build_softmax_stage(4, SoftmaxShape{256, 1024});
    EXPECT_GT(at(s1, 25) / at(s1, 4000), at(s4, 25) / at(s4, 4000))
        << "stage 1 moves 4x the bytes of stage 4, so it gains more from bandwidth";
}

}  // namespace
}  // namespace spyre
