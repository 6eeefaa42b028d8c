#include "generator_info.h"

namespace spyre::gen {

namespace {
std::map<std::string, GeneratorInfo> &registry() {
    static std::map<std::string, GeneratorInfo> r;
    return r;
}
}  // namespace

const std::map<std::string, GeneratorInfo> &generator_infos() { return registry(); }

const GeneratorInfo *find_generator_info(const std::string &name) {
    auto it = registry().find(name);
    return it == registry().end() ? nullptr : &it->second;
}

Registrar::Registrar(GeneratorInfo info) {
    std::string name = info.name;
    registry()[name] = std::move(info);
}

}  // namespace spyre::gen
