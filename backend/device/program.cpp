#include "program.h"

#include "error.h"

namespace spyre {

const char *buffer_kind_name(BufferKind k) {
    switch (k) {
    case BufferKind::Input: return "input";
    case BufferKind::Output: return "output";
    case BufferKind::Temp: return "temp";
    case BufferKind::InOut: return "inout";
    }
    return "?";
}

int64_t DeviceProgram::buffer_bytes(size_t i, int64_t stick_bytes) const {
    if (i >= buffers.size())
        throw_error("buffer index ", i, " out of range (program has ", buffers.size(), " buffers)");
    const BufferDecl &b = buffers[i];
    return device_geometry(b.layout, b.shape, b.type, stick_bytes).total_bytes;
}

}  // namespace spyre
