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

void DramModel::move(double dt) {
    if (dt <= 0) return;
    next_known_ = false;
    for (Flow &f : flows_)
        if (f.live && std::isfinite(f.remaining)) f.remaining = std::max(0.0, f.remaining - f.rate * dt);
    tot_r_ += rate_r_ * dt;
    tot_w_ += rate_w_ * dt;
}

double DramModel::time_to_cross() const {
    // Only the penalised (smaller) direction can catch up, and only while it moves faster.
    if (penalised_ == Penalised::Reads && rate_r_ > rate_w_) return (tot_w_ - tot_r_) / (rate_r_ - rate_w_);
    if (penalised_ == Penalised::Writes && rate_w_ > rate_r_) return (tot_r_ - tot_w_) / (rate_w_ - rate_r_);
    return kInf;
}

void DramModel::advance(double now) {
    // At the instant the totals cross, the other direction becomes the smaller one: the totals are
    // made equal there (so the tie is exact) and the rates recomputed in the tie's form, which then
    // holds until the flows change. The crossing is one of next_completion()'s answers, so callers
    // arrive at it exactly; the loop also catches a crossing inside [now_, now].
    for (;;) {
        double dt = now - now_;
        if (dt <= 0) break;
        double tc = time_to_cross();
        if (!(now_ + tc <= now)) {
            move(dt);
            now_ = now;
            break;
        }
        move(tc);
        now_ += tc;
        tot_r_ = tot_w_ = std::max(tot_r_, tot_w_);
        recompute_rates();
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
    // The totals crossing changes the rates: it is an event like a completion.
    double tc = time_to_cross();
    if (now_ + tc < best) {
        best = now_ + tc;
        best_id = -1;
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
//   (R + W) / peak + penalty * P = 1   (one cycle of channel time per cycle),
// R and W being the total read and write rates and P the rate of the penalised direction: R when the
// read total is the smaller, W when the write total is. At a tie P = min(R, W): that function of x is
// the minimum of two increasing linear functions, so its root is the larger of their two roots.
void DramModel::recompute_rates() {
    next_known_ = false;
    // Totals within a part in 10^12 (or a millionth of a byte) are a tie: floating-point residue
    // of moving both at equal rates must not flip the penalty back and forth.
    const double gap = tot_r_ - tot_w_, tol = 1e-12 * std::max(tot_r_, tot_w_) + 1e-6;
    penalised_ = gap < -tol ? Penalised::Reads : gap > tol ? Penalised::Writes : Penalised::Tie;
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
        double x = penalised_ == Penalised::Reads    ? x1
                   : penalised_ == Penalised::Writes ? x2
                                                     : std::max(x1, x2);
        x = std::max(0.0, x);
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
    rate_r_ = rate_w_ = 0;
    for (int i : open) (flows_[i].write ? rate_w_ : rate_r_) += flows_[i].rate;
}

}  // namespace spyre
