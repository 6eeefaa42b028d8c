// The autoscheduler's worker processes: forked once per search, one per core. Each times the
// candidates it is sent, in the order sent, and keeps what it has learnt across the search's rounds
// (its Halide lowerings, the best time it has seen), so that a later round, or the finalists' exact
// runs, reuse a lowering the worker already holds. Processes, not threads: Halide's lowering shares
// a pipeline's Parameters between its copies.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

namespace spyre::autosched {

struct WorkTask {
    int32_t pos = 0;        // the caller's position of the task (echoed in the result)
    int32_t kind = 0;       // the caller's (kStopWorker is the pool's own)
    int64_t candidate = 0;  // index into the caller's candidate list
    double best_before = 0; // the best time known when the round began (0: none)
};

// A worker's task that threw (our bug, not a refused candidate): WorkerPool::run repeats it in the
// caller's process, which raises the exception there.
constexpr int32_t kThrew = 3;

struct WorkResult {
    int32_t pos = 0;
    int32_t status = 2;  // 0 failed, 1 timed, 2 not done (past the time bound, or its worker died), kThrew
    double us = 0;
    // The caller's: the search's `us` is the exact model's; its winner's own lowering is the same
    // program as the shared one (not timed again).
    int32_t exact = 0, same_program = 0;
    // The model's validity notes for the run, a bit per row of validity_bounds() (sim/model_validity.h).
    uint32_t validity = 0;
};

class WorkerPool {
public:
    using Clock = std::chrono::steady_clock;
    using Evaluate = std::function<WorkResult(const WorkTask &)>;
    // `workers` <= 1: the tasks run in this process, in order.
    WorkerPool(int workers, Evaluate evaluate);
    ~WorkerPool();
    WorkerPool(const WorkerPool &) = delete;
    WorkerPool &operator=(const WorkerPool &) = delete;

    int size() const { return in_process_ ? 1 : int(workers_.size()); }  // workers
    bool spent() const { return spent_; }  // a run reached its deadline
    // Runs tasks[i] on worker worker_of[i] (tasks of a worker in their order here) and calls `note`
    // with each result as it arrives. Past `deadline` the workers are stopped, mid-task if need be,
    // and the pool is spent: no result comes for what was not done, then or in later runs. A task of a
    // worker that died goes to the first live one.
    void run(const std::vector<WorkTask> &tasks, const std::vector<int> &worker_of, Clock::time_point deadline,
             const std::function<void(const WorkResult &)> &note);

private:
    struct Worker {
        int pid = -1;
        int fd = -1;  // this end of its socket: tasks out, results in
        bool live = false;
    };
    Evaluate evaluate_;
    std::vector<Worker> workers_;
    bool in_process_ = false;
    bool spent_ = false;
    void stop_all(bool kill_now);
};

}  // namespace spyre::autosched
