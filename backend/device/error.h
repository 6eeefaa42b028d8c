// The one exception type of the back end. Every rejection (bad file, bad machine description, bad
// program, runtime fault in the simulator) throws spyre::Error with a message that names what is
// wrong and where, so tools can print it and exit non-zero.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace spyre {

// What kind of rejection an Error is, for callers that act on it (the autoscheduler, the back
// end's retries) without reading the message:
//   Refused     the input is wrong or asks for what the back end does not do (the message says which)
//   LxOverflow  the kernel's buffers do not fit the usable LX (a smaller tile may)
//   Internal    a bug of this project: never retried, never taken for a refusal
enum class ErrorKind { Refused, LxOverflow, Internal };

class Error : public std::runtime_error {
public:
    explicit Error(const std::string &msg, ErrorKind kind = ErrorKind::Refused, std::string site = {})
        : std::runtime_error(msg), kind_(kind), site_(std::move(site)) {}
    ErrorKind kind() const { return kind_; }
    // Which check raised it: the fixed words of its message (the string literals throw_error was
    // given, without the names and numbers put between them), so that a caller can tell two
    // refusals of the same check apart from two different ones without reading the message.
    // Empty when unknown (an Error built from a finished message).
    const std::string &site() const { return site_; }
    // The same error with a message reworded for the user (a prefix, other names).
    Error reworded(const std::string &msg) const { return Error(msg, kind_, site_); }

private:
    ErrorKind kind_;
    std::string site_;
};

namespace detail {
template <typename Part>
void add_site_word(std::string &site, const Part &part) {
    if constexpr (std::is_array_v<Part>) {  // a string literal: part of the check's fixed words
        site += part;
        site += '|';
    }
}
}  // namespace detail

// Builds a message from streamable parts: throw_error("register ", r, " out of range").
template <typename... Parts>
[[noreturn]] void throw_error_of(ErrorKind kind, const Parts &...parts) {
    std::ostringstream os;
    (os << ... << parts);
    std::string site;
    (detail::add_site_word(site, parts), ...);
    throw Error(os.str(), kind, std::move(site));
}

template <typename... Parts>
[[noreturn]] void throw_error(const Parts &...parts) {
    throw_error_of(ErrorKind::Refused, parts...);
}

// A broken invariant of the compiler or importer (the message says "internal:" as well, for the
// user who reads it).
template <typename... Parts>
[[noreturn]] void throw_internal(const Parts &...parts) {
    throw_error_of(ErrorKind::Internal, parts...);
}

// The kind of any exception: an Error's own, Internal for anything else a pass lets escape.
inline ErrorKind error_kind(const std::exception &e) {
    const Error *err = dynamic_cast<const Error *>(&e);
    return err ? err->kind() : ErrorKind::Internal;
}

}  // namespace spyre
