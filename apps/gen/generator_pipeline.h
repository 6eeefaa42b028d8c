// Building a registered Spyre generator's pipeline from a driver (spyre-gen, spyre-run), and
// finding the buffer parameters (the generator's Input<Buffer<>>s) that pipeline reads.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "Halide.h"
#include "generator_info.h"

namespace spyre::gen {

// GeneratorBase::build_pipeline() and call_configure() are protected (Halide 14 exposes only
// build_module(), which would also compile the pipeline for the host, and get_pipeline() fails
// from a driver). A pointer to a protected member formed through a derived class may be applied to
// any GeneratorBase: what build_module() does first, without the host compile.
struct GeneratorAccess : Halide::Internal::GeneratorBase {
    static Halide::Pipeline build(Halide::Internal::GeneratorBase &g) {
        (g.*&GeneratorAccess::call_configure)();
        return (g.*&GeneratorAccess::build_pipeline)();
    }
};

// A generator instance and its built pipeline (the generator is kept alive with it), and what its
// schedule=auto chose (empty otherwise, and for a generator that is not a SpyreGenerator).
struct BuiltGenerator {
    std::unique_ptr<Halide::Internal::GeneratorBase> generator;
    Halide::Pipeline pipeline;
    AutoChoice auto_choice;
};

// Creates the registered generator `name` for `target`, sets `params` (GeneratorParam name ->
// value as text), hands a SpyreGenerator `request` and builds its pipeline. Throws Halide::Error on
// an unknown generator or param.
BuiltGenerator build_generator(const std::string &name, const Halide::Target &target,
                               const std::map<std::string, std::string> &params, const AutoRequest &request = {});

// The buffer parameters (ImageParams, a generator's Input<Buffer<>>s) that `p` reads, by name.
// Parameter::set_buffer() on one of them is ImageParam::set(): what Pipeline::realize() reads.
std::map<std::string, Halide::Internal::Parameter> buffer_parameters(const Halide::Pipeline &p);

}  // namespace spyre::gen
