#include "sim_stats.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <nlohmann/json.hpp>

namespace spyre {

const char *engine_index_name(int e) {
    static const char *names[kNumAsyncEngines] = {"vector", "pe", "dma", "ring"};
    return (e >= 0 && e < kNumAsyncEngines) ? names[e] : "?";
}

const char *wait_cause_name(int w) {
    static const char *names[kNumWaitCauses] = {"vector", "pe", "dma_load", "dma_store", "ring", "dma_queue", "barrier"};
    return (w >= 0 && w < kNumWaitCauses) ? names[w] : "?";
}

double SimStats::mean_wait_fraction(int cause) const {
    if (cores.empty() || cycles <= 0 || cause < 0 || cause >= kNumWaitCauses) return 0;
    double s = 0;
    for (const CoreStats &c : cores) s += c.wait_cycles[size_t(cause)] / cycles;
    return s / double(cores.size());
}

std::string SimStats::top_waits(int n) const {
    std::vector<std::pair<double, int>> w;
    for (int c = 0; c < kNumWaitCauses; c++) w.push_back({mean_wait_fraction(c), c});
    std::stable_sort(w.begin(), w.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    std::string out;
    for (size_t i = 0; i < w.size() && int(i) < n && w[i].first >= 0.005; i++)
        out += (out.empty() ? "" : " ") + std::string(wait_cause_name(w[i].second)) + " " +
               std::to_string(int(std::lround(100 * w[i].first))) + "%";
    return out.empty() ? "none" : out;
}

double SimStats::busy_fraction(int core, int engine) const {
    if (cycles <= 0 || core < 0 || core >= int(cores.size())) return 0;
    return cores[core].busy_cycles[engine] / cycles;
}

double SimStats::mean_busy_fraction(int engine) const {
    if (cores.empty()) return 0;
    double s = 0;
    for (size_t c = 0; c < cores.size(); c++) s += busy_fraction(int(c), engine);
    return s / double(cores.size());
}

std::string SimStats::to_json_text() const {
    nlohmann::ordered_json j;
    j["cycles"] = cycles;
    j["us"] = us;
    j["clock_ghz"] = clock_ghz;
    j["instructions"] = instructions;
    j["dram_read_bytes"] = dram_read_bytes;
    j["dram_write_bytes"] = dram_write_bytes;
    j["ring_bytes"] = ring_bytes;
    j["vector_sticks"] = vector_sticks;
    j["pe_macs"] = pe_macs;
    j["lx_peak_bytes"] = lx_peak_bytes;
    j["summarised_iterations"] = summarised_iterations;
    j["stepped_instructions"] = stepped_instructions;
    nlohmann::ordered_json util;
    for (int e = 0; e < kNumAsyncEngines; e++) util[engine_index_name(e)] = mean_busy_fraction(e);
    j["mean_busy_fraction"] = util;
    nlohmann::ordered_json waits;
    for (int w = 0; w < kNumWaitCauses; w++) waits[wait_cause_name(w)] = mean_wait_fraction(w);
    j["mean_wait_fraction"] = waits;
    nlohmann::ordered_json per_core = nlohmann::ordered_json::array();
    for (size_t c = 0; c < cores.size(); c++) {
        const CoreStats &cs = cores[c];
        nlohmann::ordered_json o;
        o["core"] = c;
        o["finish_cycles"] = cs.finish_cycles;
        o["instructions"] = cs.instructions;
        o["lx_peak_bytes"] = cs.lx_peak_bytes;
        o["dram_read_bytes"] = cs.dram_read_bytes;
        o["dram_write_bytes"] = cs.dram_write_bytes;
        o["ring_bytes_sent"] = cs.ring_bytes_sent;
        nlohmann::ordered_json busy;
        for (int e = 0; e < kNumAsyncEngines; e++) busy[engine_index_name(e)] = busy_fraction(int(c), e);
        o["busy_fraction"] = busy;
        nlohmann::ordered_json wait;
        for (int w = 0; w < kNumWaitCauses; w++) wait[wait_cause_name(w)] = cycles > 0 ? cs.wait_cycles[size_t(w)] / cycles : 0.0;
        o["wait_fraction"] = wait;
        per_core.push_back(o);
    }
    j["cores"] = per_core;
    return j.dump(2);
}

}  // namespace spyre
