#include "step_trace.h"

#include <cstdio>
#include <fstream>

#include "device/error.h"

namespace spyre::llama {

namespace {
constexpr int kKernelsPid = 1000;  // after every core's process
}

void StepTrace::add(const std::string &kernel_trace, const std::string &label, double start_us, double us) {
    std::ifstream in(kernel_trace);
    if (!in) throw_error("step trace: cannot read the kernel trace '", kernel_trace, "'");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception &e) {
        throw_error("step trace: kernel trace '", kernel_trace, "' is not JSON: ", e.what());
    }
    in.close();
    std::remove(kernel_trace.c_str());
    if (kernels_ == 0)
        events_.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kKernelsPid}, {"args", {{"name", "kernels"}}}});
    for (nlohmann::json &e : j.at("traceEvents")) {
        if (e.value("ph", "") == "M") {
            // Each core's process and track names once: every kernel's trace repeats them.
            if (metadata_.insert(e.dump()).second) events_.push_back(e);
            continue;
        }
        e["ts"] = e.value("ts", 0.0) + start_us;
        events_.push_back(e);
    }
    events_.push_back({{"ph", "X"}, {"name", label}, {"pid", kKernelsPid}, {"tid", 0}, {"ts", start_us}, {"dur", us}});
    kernels_++;
}

void StepTrace::write(const std::string &path) const {
    std::ofstream out(path);
    if (!out) throw_error("step trace: cannot open '", path, "' for writing");
    nlohmann::json j = {{"displayTimeUnit", "ns"}, {"traceEvents", events_}};
    out << j.dump() << "\n";
    if (!out) throw_error("step trace: failed writing '", path, "'");
}

}  // namespace spyre::llama
