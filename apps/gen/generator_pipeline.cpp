#include "generator_pipeline.h"

namespace spyre::gen {

using namespace Halide;

BuiltGenerator build_generator(const std::string &name, const Target &target,
                               const std::map<std::string, std::string> &params, const AutoRequest &request) {
    BuiltGenerator b;
    GeneratorContext context(target);
    b.generator = Internal::GeneratorRegistry::create(name, context);
    Internal::GeneratorParamsMap gp;
    for (const auto &p : params) gp[p.first] = p.second;
    b.generator->set_generator_param_values(gp);
    auto *state = dynamic_cast<SpyreGeneratorState *>(b.generator.get());
    if (state) state->auto_request = request;
    b.pipeline = GeneratorAccess::build(*b.generator);
    if (state) b.auto_choice = state->auto_choice;
    return b;
}

namespace {
class FindBufferParams : public Internal::IRGraphVisitor {
public:
    std::map<std::string, Internal::Parameter> found;

private:
    using Internal::IRGraphVisitor::visit;
    void visit(const Internal::Call *op) override {
        if (op->param.defined() && op->param.is_buffer()) found.emplace(op->param.name(), op->param);
        Internal::IRGraphVisitor::visit(op);
    }
};
}  // namespace

std::map<std::string, Internal::Parameter> buffer_parameters(const Pipeline &p) {
    FindBufferParams v;
    for (const Func &out : p.outputs())
        for (const auto &f : Internal::find_transitive_calls(out.function())) f.second.accept(&v);
    return v.found;
}

}  // namespace spyre::gen
