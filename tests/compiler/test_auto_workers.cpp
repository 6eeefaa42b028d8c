// The autoscheduler's worker pool (autoschedule/auto_workers.h): every task's result comes back once,
// a worker keeps its state from one run to the next, a worker that dies strands only the task it was
// on, and a pool past its time bound does no more work.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

#include "auto_workers.h"

namespace spyre::autosched {
namespace {

using Clock = WorkerPool::Clock;

std::vector<WorkTask> tasks_for(int n, int first = 0) {
    std::vector<WorkTask> ts;
    for (int i = 0; i < n; i++) {
        WorkTask t;
        t.pos = i;
        t.candidate = first + i;
        ts.push_back(t);
    }
    return ts;
}

Clock::time_point later() { return Clock::now() + std::chrono::hours(1); }

class WorkerPoolSizes : public ::testing::TestWithParam<int> {};

TEST_P(WorkerPoolSizes, EveryTaskComesBackOnceWithItsResult) {
    WorkerPool pool(GetParam(), [](const WorkTask &t) {
        WorkResult r;
        r.pos = t.pos;
        r.status = 1;
        r.us = 2.0 * double(t.candidate);
        return r;
    });
    const std::vector<WorkTask> ts = tasks_for(40, 100);
    std::vector<int> worker_of(ts.size());
    for (size_t i = 0; i < ts.size(); i++) worker_of[i] = int(i % 3) % pool.size();
    std::map<int, int> seen;
    pool.run(ts, worker_of, later(), [&](const WorkResult &r) {
        seen[r.pos]++;
        EXPECT_EQ(r.status, 1);
        EXPECT_EQ(r.us, 2.0 * double(100 + r.pos));
    });
    ASSERT_EQ(seen.size(), ts.size());
    for (const auto &s : seen) EXPECT_EQ(s.second, 1) << "task " << s.first;
}

INSTANTIATE_TEST_SUITE_P(Workers, WorkerPoolSizes, ::testing::Values(1, 2, 3),
                         [](const auto &i) { return std::to_string(i.param) + "_workers"; });

// A task that throws in a worker (a bug, not a refused candidate) is raised in the caller's process,
// with its message; the worker's copy of the caller never runs on past it (it ran the rest of this
// test binary's tests in the child before).
TEST(WorkerPool, ATaskThatThrowsInAWorkerIsRaisedInTheCallerWithItsMessage) {
    const pid_t caller = getpid();
    WorkerPool pool(2, [&](const WorkTask &t) {
        if (t.candidate == 3) throw std::runtime_error("candidate 3 broke");
        WorkResult r;
        r.pos = t.pos;
        r.status = 1;
        return r;
    });
    const std::vector<WorkTask> ts = tasks_for(6);
    std::string what;
    try {
        pool.run(ts, std::vector<int>(ts.size(), 0), later(), [](const WorkResult &) {});
    } catch (const std::runtime_error &e) {
        what = e.what();
    }
    ASSERT_EQ(getpid(), caller);
    EXPECT_EQ(what, "candidate 3 broke");
}

TEST(WorkerPool, AWorkerKeepsItsStateFromOneRunToTheNext) {
    int done = 0;  // each worker's own count (a copy in each process)
    WorkerPool pool(2, [&](const WorkTask &t) {
        WorkResult r;
        r.pos = t.pos;
        r.status = 1;
        r.us = ++done;
        return r;
    });
    std::vector<double> first, second;
    pool.run(tasks_for(3), {1, 1, 1}, later(), [&](const WorkResult &r) { first.push_back(r.us); });
    pool.run(tasks_for(2), {1, 1}, later(), [&](const WorkResult &r) { second.push_back(r.us); });
    EXPECT_EQ(first, (std::vector<double>{1, 2, 3}));
    EXPECT_EQ(second, (std::vector<double>{4, 5})) << "the second run is on the same process";
    EXPECT_EQ(done, 0) << "the work happened in the workers";
}

TEST(WorkerPool, AWorkerThatDiesStrandsOnlyTheTaskItWasOn) {
    WorkerPool pool(2, [](const WorkTask &t) {
        if (t.candidate == 3) std::abort();  // a crash inside a lowering
        WorkResult r;
        r.pos = t.pos;
        r.status = 1;
        r.us = double(t.candidate);
        return r;
    });
    std::vector<int> worker_of(10, 0);  // all on the worker that dies
    std::map<int, double> got;
    pool.run(tasks_for(10), worker_of, later(), [&](const WorkResult &r) { got[r.pos] = r.us; });
    EXPECT_EQ(got.size(), 9u);
    EXPECT_FALSE(got.count(3));
    // The pool goes on with the live worker.
    got.clear();
    pool.run(tasks_for(4, 10), {0, 0, 0, 0}, later(), [&](const WorkResult &r) { got[r.pos] = r.us; });
    EXPECT_EQ(got.size(), 4u);
}

TEST(WorkerPool, PastItsTimeBoundThePoolDoesNoMoreWork) {
    for (int workers : {1, 2}) {
        WorkerPool pool(workers, [](const WorkTask &t) {
            WorkResult r;
            r.pos = t.pos;
            r.status = 1;
            return r;
        });
        int results = 0;
        pool.run(tasks_for(5), std::vector<int>(5, 0), Clock::now() - std::chrono::seconds(1),
                 [&](const WorkResult &) { results++; });
        pool.run(tasks_for(5), std::vector<int>(5, 0), later(), [&](const WorkResult &) { results++; });
        EXPECT_EQ(results, 0) << workers << " workers";
    }
}

// With no file descriptor to spare (RLIMIT_NOFILE at 0 here), the pool cannot make its workers'
// sockets and says so. (A failed fork, the other way a pool cannot start, cannot be provoked as
// root: RLIMIT_NPROC does not bind root.)
TEST(WorkerPool, NoSocketForAWorkerIsNamed) {
    rlimit saved{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
    rlimit none = saved;
    none.rlim_cur = 0;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &none), 0);
    std::string e;
    try {
        WorkerPool pool(2, [](const WorkTask &t) { return WorkResult{t.pos, 1, 0}; });
    } catch (const std::exception &ex) {
        e = ex.what();
    }
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
    EXPECT_NE(e.find("auto_schedule: cannot create a socket for a search worker"), std::string::npos) << e;
}

}  // namespace
}  // namespace spyre::autosched
