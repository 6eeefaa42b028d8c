#include "dram_model.h"

#include <algorithm>
#include <cmath>

namespace spyre {

DramModel::DramModel(double peak_bytes_per_cycle, double turnaround_cycles_per_byte)
    : peak_(peak_bytes_per_cycle), penalty_(turnaround_cycles_per_byte) {}

int DramModel::add(double now, bool write, double bytes, double cap) {
    advance(now);
    int id;
    if (!free_ids_.empty()) {
        id = free_ids_.back();
        free_ids_.pop_back();
    } else {
        id = int(flows_.size());
        flows_.emplace_back();
    }
    flows_[id] = Flow{true, write, bytes, cap, 0};
    next_known_ = false;
    active_++;
    recompute_rates();
    return id;
}

double DramModel::remove(double now, int id) {
    advance(now);
    Flow &f = flows_[id];
    double left = f.remaining;
    f.live = false;
    next_known_ = false;
    free_ids_.push_back(id);
    active_--;
    recompute_rates();
    return left;
}

void DramModel::advance(double now) {
    double dt = now - now_;
    if (dt > 0) {
        next_known_ = false;
        for (Flow &f : flows_)
            if (f.live && std::isfinite(f.remaining)) f.remaining = std::max(0.0, f.remaining - f.rate * dt);
    }
    now_ = std::max(now_, now);
}

double DramModel::next_completion(int *id) const {
    if (next_known_) {
        if (id) *id = next_id_;
        return next_t_;
    }
    double best = kInf;
    int best_id = -1;
    for (size_t i = 0; i < flows_.size(); i++) {
        const Flow &f = flows_[i];
        if (!f.live || !std::isfinite(f.remaining) || f.rate <= 0) continue;
        double t = now_ + f.remaining / f.rate;
        if (t < best) {
            best = t;
            best_id = int(i);
        }
    }
    if (id) *id = best_id;
    next_known_ = true;
    next_t_ = best;
    next_id_ = best_id;
    return best;
}

const std::vector<int> &DramModel::take_finished(double now) {
    advance(now);
    std::vector<int> &done = done_;
    done.clear();
    for (size_t i = 0; i < flows_.size(); i++) {
        Flow &f = flows_[i];
        // A flow is done when what is left would take under a thousandth of a cycle.
        if (f.live && std::isfinite(f.remaining) && (f.remaining <= 1e-9 || f.remaining <= f.rate * 1e-3)) {
            f.live = false;
            next_known_ = false;
            free_ids_.push_back(int(i));
            active_--;
            done.push_back(int(i));
        }
    }
    if (!done.empty()) recompute_rates();
    return done;
}

// Fair share with caps (water-filling). Uncapped flows all get rate x, where x solves
//   (R + W) / peak + penalty * min(R, W) = 1   (one cycle of channel time per cycle),
// R and W being the total read and write rates. That function of x is the minimum of two increasing
// linear functions, so its root is the larger of their two roots.
void DramModel::recompute_rates() {
    next_known_ = false;
    // Scratch kept between calls: the simulator recomputes at every DMA start and end.
    std::vector<int> &open = open_;
    open.clear();
    for (size_t i = 0; i < flows_.size(); i++)
        if (flows_[i].live) open.push_back(int(i));
    double fixed_r = 0, fixed_w = 0;
    std::vector<char> &fixed = fixed_;
    fixed.assign(flows_.size(), 0);
    for (;;) {
        double nr = 0, nw = 0;
        for (int i : open)
            if (!fixed[i]) (flows_[i].write ? nw : nr) += 1;
        if (nr + nw == 0) break;
        double a = (fixed_r + fixed_w) / peak_, b = (nr + nw) / peak_;
        double x1 = (b + penalty_ * nr) > 0 ? (1 - a - penalty_ * fixed_r) / (b + penalty_ * nr) : kInf;
        double x2 = (b + penalty_ * nw) > 0 ? (1 - a - penalty_ * fixed_w) / (b + penalty_ * nw) : kInf;
        double x = std::max(0.0, std::max(x1, x2));
        bool changed = false;
        for (int i : open) {
            if (!fixed[i] && flows_[i].cap < x) {
                fixed[i] = 1;
                flows_[i].rate = flows_[i].cap;
                (flows_[i].write ? fixed_w : fixed_r) += flows_[i].cap;
                changed = true;
            }
        }
        if (!changed) {
            for (int i : open)
                if (!fixed[i]) flows_[i].rate = x;
            break;
        }
    }
}

}  // namespace spyre
