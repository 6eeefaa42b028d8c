// The one exception type of the back end. Every rejection (bad file, bad machine description, bad
// program, runtime fault in the simulator) throws spyre::Error with a message that names what is
// wrong and where, so tools can print it and exit non-zero.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace spyre {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string &msg) : std::runtime_error(msg) {}
};

// Builds a message from streamable parts: throw_error("register ", r, " out of range").
template <typename... Parts>
[[noreturn]] void throw_error(const Parts &...parts) {
    std::ostringstream os;
    (os << ... << parts);
    throw Error(os.str());
}

}  // namespace spyre
