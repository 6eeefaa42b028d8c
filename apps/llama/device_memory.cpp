#include "device_memory.h"

#include <algorithm>
#include <numeric>

#include "device/error.h"

namespace spyre::llama {

DeviceMemory::DeviceMemory(bool timing_only, MachineDesc machine) : timing_only_(timing_only), machine_(machine) {}

void DeviceMemory::allocate(const std::string &name, int64_t bytes) {
    if (has(name)) throw_error("device memory: tensor '", name, "' is allocated already");
    if (bytes <= 0) throw_error("device memory: tensor '", name, "' of ", bytes, " bytes");
    sizes_[name] = bytes;
    if (!timing_only_) images_[name].assign(size_t(bytes), 0);
}

void DeviceMemory::ensure(const std::string &name, int64_t bytes) {
    if (has(name) && sizes_[name] >= bytes) return;
    sizes_.erase(name);
    images_.erase(name);
    allocate(name, bytes);
}

int64_t DeviceMemory::size(const std::string &name) const {
    auto it = sizes_.find(name);
    if (it == sizes_.end()) throw_error("device memory: no tensor '", name, "'");
    return it->second;
}

int64_t DeviceMemory::allocated_bytes() const {
    return std::accumulate(sizes_.begin(), sizes_.end(), int64_t(0), [](int64_t s, auto &kv) { return s + kv.second; });
}

TensorView DeviceMemory::whole(const std::string &name) const { return {name, 0, size(name)}; }

TensorView DeviceMemory::window(const std::string &name, int64_t offset, int64_t bytes) const {
    const int64_t n = size(name);
    if (offset < 0 || bytes <= 0 || offset > n - bytes)
        throw_error("device memory: window of ", bytes, " bytes at ", offset, " is outside tensor '", name, "' of ", n,
                    " bytes");
    return {name, offset, bytes};
}

std::vector<uint8_t> DeviceMemory::read(const TensorView &v) const {
    if (timing_only_) throw_error("device memory: no contents to read in timing-only mode ('", v.tensor, "')");
    window(v.tensor, v.offset, v.bytes);
    const std::vector<uint8_t> &img = images_.at(v.tensor);
    return std::vector<uint8_t>(img.begin() + v.offset, img.begin() + v.offset + v.bytes);
}

void DeviceMemory::write(const TensorView &v, const std::vector<uint8_t> &bytes) {
    if (timing_only_) return;
    window(v.tensor, v.offset, v.bytes);
    if (int64_t(bytes.size()) != v.bytes)
        throw_error("device memory: ", bytes.size(), " bytes written to a window of ", v.bytes, " of '", v.tensor, "'");
    std::copy(bytes.begin(), bytes.end(), images_.at(v.tensor).begin() + v.offset);
}

SimResult DeviceMemory::run(const DeviceProgram &program, const std::vector<TensorView> &args, SimOptions options) {
    options.timing_only = timing_only_;
    std::vector<size_t> arg_buffers;
    for (size_t i = 0; i < program.buffers.size(); i++)
        if (program.buffers[i].kind != BufferKind::Temp) arg_buffers.push_back(i);
    if (arg_buffers.size() != args.size())
        throw_error("kernel ", program.kernel_name, ": ", args.size(), " tensors bound to its ", arg_buffers.size(),
                    " arguments");
    std::vector<std::vector<uint8_t>> images;
    if (!timing_only_) images.resize(program.buffers.size());
    for (size_t a = 0; a < args.size(); a++) {
        const size_t b = arg_buffers[a];
        const BufferDecl &decl = program.buffers[b];
        const int64_t need = program.buffer_bytes(b, machine_.stick_bytes);
        window(args[a].tensor, args[a].offset, args[a].bytes);
        if (args[a].bytes != need)
            throw_error("kernel ", program.kernel_name, ": argument ", decl.name, " needs ", need,
                        " bytes of device memory; it is bound to ", args[a].bytes, " bytes of '", args[a].tensor,
                        "' at ", args[a].offset);
        if (!timing_only_ && decl.kind != BufferKind::Output) images[b] = read(args[a]);
    }
    SimResult r = simulate(program, machine_, std::move(images), options);
    if (!timing_only_)
        for (size_t a = 0; a < args.size(); a++) {
            const size_t b = arg_buffers[a];
            if (program.buffers[b].kind == BufferKind::Output || program.buffers[b].kind == BufferKind::InOut)
                write(args[a], r.buffers[b]);
        }
    return r;
}

}  // namespace spyre::llama
