// Shared device-memory bandwidth: the DMA flows of all cores share one channel, served fairly
// (processor sharing with per-flow rate caps). Mixing directions costs the turnaround penalty the
// way IBM fits it, over the kernel's totals: moving R read and W write bytes takes
// (R + W) / peak + min(R, W) * penalty however the program orders them. The channel keeps the run's
// totals of read and write work; a byte moved in the direction whose total is the smaller (the one
// that grows min(R, W)) costs the penalty, a byte of the other direction does not; at a tie the
// smaller of the two current rates pays it. So a program that separates its reads from its writes in
// time (phases) pays what one that interleaves them pays. Rates are recomputed whenever the set of
// flows changes and at the instant the totals cross, so time is exact for the model and
// deterministic.
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
    // Earliest time a flow finishes at the current rates (infinity if none), and which; or the
    // instant the read and write totals cross (id -1), when the rates change.
    double next_completion(int *id) const;
    // Removes and returns the finished flow ids at `now` (remaining below a tolerance); the list
    // is valid until the next call.
    const std::vector<int> &take_finished(double now);

    bool empty() const { return active_ == 0; }

    // Channel work moved so far in each direction (bytes, run overheads included).
    double read_total() const { return tot_r_; }
    double write_total() const { return tot_w_; }

private:
    struct Flow {
        bool live = false;
        bool write = false;
        double remaining = 0;
        double cap = 0;
        double rate = 0;
    };
    void recompute_rates();
    // Moves every flow and the totals forward by dt at the current rates.
    void move(double dt);
    // Time until the totals cross at the current rates (infinity if they do not).
    double time_to_cross() const;

    // Which direction pays the turnaround: the one with the smaller total, or (at a tie) the one
    // whose current rate is the smaller.
    enum class Penalised { Tie, Reads, Writes };
    Penalised penalised_ = Penalised::Tie;
    double tot_r_ = 0, tot_w_ = 0;    // work moved so far per direction
    double rate_r_ = 0, rate_w_ = 0;  // current total rates per direction

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
