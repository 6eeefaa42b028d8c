#include "auto_workers.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>

#include "device/error.h"

namespace spyre::autosched {

namespace {

constexpr int32_t kStopWorker = -1;
// Tasks sent ahead of a worker's results: enough that it never waits for the next one, few enough
// that a worker's death strands little (its queued tasks go to another worker).
constexpr size_t kInFlight = 2;

// Message sockets: each send is one whole record, and a send to a dead worker fails (MSG_NOSIGNAL)
// instead of raising SIGPIPE.
bool send_record(int fd, const void *p, size_t n) { return send(fd, p, n, MSG_NOSIGNAL) == ssize_t(n); }
bool recv_record(int fd, void *p, size_t n) { return recv(fd, p, n, 0) == ssize_t(n); }

}  // namespace

WorkerPool::WorkerPool(int workers, Evaluate evaluate) : evaluate_(std::move(evaluate)) {
    if (workers <= 1) {
        in_process_ = true;
        return;
    }
    for (int w = 0; w < workers; w++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) {
            stop_all(true);
            throw_error("auto_schedule: cannot create a socket for a search worker");
        }
        std::fflush(nullptr);
        pid_t pid = fork();
        if (pid < 0) {
            close(sv[0]);
            close(sv[1]);
            stop_all(true);
            throw_error("auto_schedule: cannot start a search worker process");
        }
        if (pid == 0) {
            close(sv[0]);
            for (const Worker &o : workers_) close(o.fd);  // the other workers' ends, inherited
            WorkTask t;
            while (recv_record(sv[1], &t, sizeof t) && t.kind != kStopWorker) {
                // An exception must not leave this process's copy of the caller's stack (it would
                // run the caller's code on in the child): the caller repeats the task to raise it.
                WorkResult r;
                try {
                    r = evaluate_(t);
                } catch (...) {
                    r = WorkResult{};
                    r.pos = t.pos;
                    r.status = kThrew;
                }
                if (!send_record(sv[1], &r, sizeof r)) break;
            }
            _exit(0);
        }
        close(sv[1]);
        Worker wk;
        wk.pid = pid;
        wk.fd = sv[0];
        wk.live = true;
        workers_.push_back(wk);
    }
}

WorkerPool::~WorkerPool() { stop_all(false); }

void WorkerPool::stop_all(bool kill_now) {
    for (Worker &w : workers_) {
        if (w.pid < 0) continue;
        if (w.live && !kill_now) {
            WorkTask stop;
            stop.kind = kStopWorker;
            if (!send_record(w.fd, &stop, sizeof stop)) kill(w.pid, SIGKILL);
        } else {
            kill(w.pid, SIGKILL);
        }
        close(w.fd);
        int status = 0;
        waitpid(w.pid, &status, 0);
        w.pid = -1;
        w.live = false;
    }
}

void WorkerPool::run(const std::vector<WorkTask> &tasks, const std::vector<int> &worker_of, Clock::time_point deadline,
                     const std::function<void(const WorkResult &)> &note) {
    if (spent_) return;
    if (in_process_) {
        for (const WorkTask &t : tasks) {
            if (Clock::now() > deadline) {
                spent_ = true;
                return;
            }
            note(evaluate_(t));
        }
        return;
    }
    const size_t n = workers_.size();
    auto first_live = [&]() {
        for (size_t w = 0; w < n; w++)
            if (workers_[w].live) return int(w);
        return -1;
    };
    std::vector<std::deque<size_t>> pending(n), in_flight(n);
    for (size_t i = 0; i < tasks.size(); i++) {
        int w = worker_of.at(i);
        if (w < 0 || size_t(w) >= n || !workers_[size_t(w)].live) w = first_live();
        if (w < 0) return;
        pending[size_t(w)].push_back(i);
    }
    std::function<void(size_t)> lost;
    auto feed = [&](size_t w) {
        while (workers_[w].live && in_flight[w].size() < kInFlight && !pending[w].empty()) {
            const size_t i = pending[w].front();
            if (!send_record(workers_[w].fd, &tasks[i], sizeof tasks[i])) return lost(w);
            pending[w].pop_front();
            in_flight[w].push_back(i);
        }
    };
    // A worker that died (a crash in Halide or the back end): the task it was on gets no result;
    // the rest of its tasks go to a live worker.
    lost = [&](size_t w) {
        Worker &wk = workers_[w];
        wk.live = false;
        kill(wk.pid, SIGKILL);
        if (!in_flight[w].empty()) in_flight[w].pop_front();
        std::deque<size_t> rest;
        for (size_t i : in_flight[w]) rest.push_back(i);
        for (size_t i : pending[w]) rest.push_back(i);
        in_flight[w].clear();
        pending[w].clear();
        const int to = first_live();
        if (to < 0) return;
        for (size_t i : rest) pending[size_t(to)].push_back(i);
        feed(size_t(to));
    };
    for (size_t w = 0; w < n; w++) feed(w);
    for (;;) {
        std::vector<pollfd> polls;
        std::vector<size_t> which;
        for (size_t w = 0; w < n; w++)
            if (workers_[w].live && !in_flight[w].empty()) {
                polls.push_back(pollfd{workers_[w].fd, POLLIN, 0});
                which.push_back(w);
            }
        if (polls.empty()) return;
        // At the wall-time bound the workers stop, mid-candidate if need be (one simulation of a
        // model-size kernel takes seconds): what they have not reported stays undone.
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) {
            stop_all(true);
            spent_ = true;
            return;
        }
        if (poll(polls.data(), polls.size(), int(std::min<int64_t>(left, 1000))) <= 0) continue;
        for (size_t k = 0; k < polls.size(); k++) {
            if (!(polls[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const size_t w = which[k];
            WorkResult r;
            if (recv_record(workers_[w].fd, &r, sizeof r)) {
                const size_t i = in_flight[w].front();
                in_flight[w].pop_front();
                if (r.status == kThrew) {  // raised here, with its own message, or a result after all
                    stop_all(true);
                    spent_ = true;
                    r = evaluate_(tasks[i]);
                }
                note(r);
                feed(w);
            } else {
                lost(w);
            }
        }
    }
}

}  // namespace spyre::autosched
