// One timeline (a Chrome trace event file, for Perfetto or chrome://tracing) of a model step made of
// many kernel launches: each kernel's own trace (one process per core, one track per engine, from
// the simulator) shifted to where the kernel starts in the step, under a "kernels" process with a
// span per launch naming its stage and layer.
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace spyre::llama {

class StepTrace {
public:
    // Appends the kernel whose simulator trace is at `kernel_trace` (read, then removed), labelled
    // `label`, starting `start_us` into the step and lasting `us`.
    void add(const std::string &kernel_trace, const std::string &label, double start_us, double us);
    // Writes the step's timeline; spyre::Error naming the path when it cannot.
    void write(const std::string &path) const;
    size_t kernels() const { return kernels_; }

private:
    nlohmann::json events_ = nlohmann::json::array();
    std::set<std::string> metadata_;
    size_t kernels_ = 0;
};

}  // namespace spyre::llama
