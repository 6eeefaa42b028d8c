// Shared device-memory bandwidth: the DMA flows of all cores share one channel, served fairly
// (processor sharing with per-flow rate caps). Mixing directions costs the turnaround penalty:
// moving R read and W write bytes takes (R + W) / peak + min(R, W) * penalty, the form of IBM's
// fitted cost model. Rates are recomputed whenever the set of flows changes, so time is exact for
// the model and deterministic.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace spyre {

class DramModel {
public:
    // Rates in bytes per cycle; penalty in cycles per byte.
    DramModel(double peak_bytes_per_cycle, double turnaround_cycles_per_byte);

    // Adds a flow of `bytes` (write=true for LX -> device memory), capped at `cap` bytes/cycle.
    // Returns its id. `bytes` may be infinite for a reservation ended by remove().
    int add(double now, bool write, double bytes, double cap);
    // Removes a flow before it finishes; returns the bytes it still had to move.
    double remove(double now, int id);

    // Moves every flow forward to `now` (no flow may finish strictly before it).
    void advance(double now);
    // Earliest time a flow finishes at the current rates (infinity if none), and which.
    double next_completion(int *id) const;
    // Removes and returns the finished flow ids at `now` (remaining below a tolerance); the list
    // is valid until the next call.
    const std::vector<int> &take_finished(double now);

    bool empty() const { return active_ == 0; }

private:
    struct Flow {
        bool live = false;
        bool write = false;
        double remaining = 0;
        double cap = 0;
        double rate = 0;
    };
    void recompute_rates();

    double peak_, penalty_;
    double now_ = 0;
    // next_completion's answer until a flow, a rate or the time changes: the simulator asks before
    // every step of a core, and most steps move no data.
    mutable bool next_known_ = false;
    mutable double next_t_ = 0;
    mutable int next_id_ = -1;
    std::vector<Flow> flows_;
    std::vector<int> free_ids_;
    std::vector<int> open_;     // recompute_rates' scratch
    std::vector<char> fixed_;
    std::vector<int> done_;     // take_finished's answer
    int active_ = 0;
};

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace spyre
