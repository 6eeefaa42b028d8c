#include "generator_info.h"

#include <algorithm>

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

std::vector<IntParam> GeneratorInfo::integer_params() const {
    if (!int_params.empty()) return int_params;
    return {{"cols", 1024}, {"rows", 512}};
}

ParamValues GeneratorInfo::with_defaults(const ParamValues &values) const {
    ParamValues v = values;
    for (const IntParam &p : integer_params()) v.emplace(p.name, p.default_value);
    return v;
}

std::vector<BufferShape> GeneratorInfo::input_shapes(const ParamValues &values) const {
    ParamValues v = with_defaults(values);
    if (int_params.empty()) return inputs(v.at("cols"), v.at("rows"));
    return inputs_of(v);
}

std::vector<BufferShape> GeneratorInfo::output_shapes(const ParamValues &values) const {
    ParamValues v = with_defaults(values);
    if (int_params.empty()) return {output(v.at("cols"), v.at("rows"))};
    if (outputs_of) return outputs_of(v);
    return {output_of(v)};
}

std::map<std::string, std::string> param_defaults(const GeneratorInfo &info) {
    std::map<std::string, std::string> p = common_params();
    for (const IntParam &i : info.integer_params()) p[i.name] = std::to_string(i.default_value);
    for (const auto &e : info.extra_params) p[e.first] = e.second;
    return p;
}

GeneratorInfo rows_generator_info(const std::string &name, const std::string &description,
                                  std::function<std::vector<std::string>()> schedules, const std::string &output_name,
                                  const std::vector<std::string> &row_vectors) {
    GeneratorInfo g;
    g.name = name;
    g.description = description;
    g.schedules = std::move(schedules);
    g.inputs = [row_vectors](int64_t c, int64_t r) {
        std::vector<BufferShape> in = {{"in", {c, r}}};
        for (const std::string &v : row_vectors) in.push_back({v, {c}});
        return in;
    };
    g.output = [output_name](int64_t c, int64_t r) { return BufferShape{output_name, {c, r}}; };
    return g;
}

Registrar::Registrar(GeneratorInfo info) {
    std::string name = info.name;
    if (info.schedules) {
        auto named = info.schedules;
        info.schedules = [named] {
            std::vector<std::string> s = named();
            if (std::find(s.begin(), s.end(), "auto") == s.end()) s.push_back("auto");
            return s;
        };
    }
    registry()[name] = std::move(info);
}

}  // namespace spyre::gen
