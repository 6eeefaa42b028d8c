#include "kernel_plan.h"

#include "device/error.h"

namespace spyre {

const char *place_name(Place p) {
    switch (p) {
    case Place::DeviceInput: return "device-memory input";
    case Place::DeviceOutput: return "device-memory output";
    case Place::DeviceTemp: return "device memory";
    case Place::LX: return "LX";
    }
    return "?";
}

BufferInfo &KernelPlan::buffer(const std::string &name) {
    auto it = buffers.find(name);
    if (it == buffers.end()) throw_internal("kernel ", kernel_name, ": internal: unknown buffer '", name, "'");
    return it->second;
}

const BufferInfo &KernelPlan::buffer(const std::string &name) const {
    auto it = buffers.find(name);
    if (it == buffers.end()) throw_internal("kernel ", kernel_name, ": internal: unknown buffer '", name, "'");
    return it->second;
}

}  // namespace spyre
