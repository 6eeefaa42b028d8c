// Reusing a schedules/ kernel inside a Halide Generator. The kernels of schedules/ build their Funcs
// from ImageParams they create themselves (make_softmax(cols, rows) etc.); a Generator's inputs are
// its own Input<Buffer<>>s. rebind_input() points every call of the kernel's ImageParam at the
// generator input instead (the algorithm is written once, in schedules/) and replaces the kernel's
// ImageParam handle, so the kernel's schedule (stage_all_in_lx(k.in, ...)) wraps the generator
// input. Include only from generator translation units: it needs Halide.h.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

#include "Halide.h"

namespace spyre::gen {

namespace detail {
class RedirectCalls : public Halide::Internal::IRMutator {
public:
    RedirectCalls(Halide::Internal::Function from, Halide::Internal::Function to) : from_(from), to_(to) {}

protected:
    using Halide::Internal::IRMutator::visit;
    Halide::Expr visit(const Halide::Internal::Call *op) override {
        if (op->call_type == Halide::Internal::Call::Halide && op->func.defined() &&
            op->func.get() == from_.get_contents().get()) {
            std::vector<Halide::Expr> args;
            for (const Halide::Expr &a : op->args) args.push_back(mutate(a));
            return Halide::Internal::Call::make(to_, args, op->value_index);
        }
        return Halide::Internal::IRMutator::visit(op);
    }

private:
    Halide::Internal::Function from_, to_;
};
}  // namespace detail

// Makes every Func reachable from `output` read `input` where it read `param`, then sets
// param = input. Types and dimensions must agree.
inline void rebind_input(Halide::ImageParam &param, const Halide::ImageParam &input, Halide::Func output) {
    if (param.type() != input.type() || param.dimensions() != input.dimensions())
        throw std::runtime_error("rebind_input: generator input '" + input.name() + "' does not match kernel input '" +
                                 param.name() + "' in type or dimensions");
    Halide::Internal::Function from = Halide::Func(param).function();
    Halide::Internal::Function to = Halide::Func(input).function();
    detail::RedirectCalls redirect(from, to);
    std::map<std::string, Halide::Internal::Function> reachable =
        Halide::Internal::find_transitive_calls(output.function());
    reachable.emplace(output.name(), output.function());
    for (auto &entry : reachable) {
        if (entry.second.get_contents().get() == from.get_contents().get()) continue;
        entry.second.mutate(&redirect);
    }
    param = input;
}

}  // namespace spyre::gen
