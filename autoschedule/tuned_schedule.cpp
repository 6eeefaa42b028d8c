#include "tuned_schedule.h"

#include <nlohmann/json.hpp>

#include "device/error.h"

namespace spyre::autosched {

namespace {

using nlohmann::json;

// Field accessors that name what is wrong.
const json &field(const json &j, const char *name, const std::string &where) {
    if (!j.is_object() || !j.contains(name)) throw_error("tuning database entry: ", where, " has no field '", name, "'");
    return j.at(name);
}

std::string text_of(const json &j, const char *name, const std::string &where) {
    const json &v = field(j, name, where);
    if (!v.is_string()) throw_error("tuning database entry: ", where, ".", name, " is not a string");
    return v.get<std::string>();
}

double number_of(const json &j, const char *name, const std::string &where) {
    const json &v = field(j, name, where);
    if (!v.is_number()) throw_error("tuning database entry: ", where, ".", name, " is not a number");
    return v.get<double>();
}

int64_t int_of(const json &v, const std::string &where, int64_t lo, int64_t hi) {
    if (!v.is_number_integer()) throw_error("tuning database entry: ", where, " is not an integer");
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi) throw_error("tuning database entry: ", where, " = ", x, " is outside [", lo, ", ", hi, "]");
    return x;
}

const json &array_of(const json &j, const char *name, const std::string &where) {
    const json &v = field(j, name, where);
    if (!v.is_array()) throw_error("tuning database entry: ", where, ".", name, " is not an array");
    return v;
}

// The fewest loop names each record kind reads (apply_directives).
size_t min_vars(Directive::Kind k) {
    switch (k) {
    case Directive::LxRoot:
    case Directive::DeviceRoot: return 0;
    case Directive::HUpdateRename: return 2;
    case Directive::Split:
    case Directive::HSplit:
    case Directive::HFuse:
    case Directive::HUpdateSplit: return 3;
    default: return 1;
    }
}

}  // namespace

std::string encode_tuned_schedule(const TunedSchedule &t) {
    json j;
    json ds = json::array();
    for (const Directive &d : t.directives)
        ds.push_back({{"kind", int(d.kind)}, {"func", d.func}, {"vars", d.vars}, {"ints", d.ints}, {"at_func", d.at_func},
                      {"update", d.update}, {"fixed", d.fixed}});
    j["directives"] = ds;
    json ls = json::array();
    for (const DeviceLayout &l : t.layouts) ls.push_back({{"stick_dim", l.stick_dim}, {"order", l.order}});
    j["layouts"] = ls;
    j["us"] = t.us;
    j["exact"] = t.exact;
    if (t.validity_known) j["validity"] = t.validity;
    j["family"] = t.family;
    j["summary"] = t.summary;
    j["candidates"] = t.candidates;
    j["timed"] = t.timed;
    j["failed"] = t.failed;
    j["search_seconds"] = t.search_seconds;
    return j.dump();
}

TunedSchedule decode_tuned_schedule(const std::string &json_text) {
    json j;
    try {
        j = json::parse(json_text);
    } catch (const json::exception &e) {
        throw_error("tuning database entry: not JSON (", e.what(), ")");
    }
    TunedSchedule t;
    const json &ds = array_of(j, "directives", "entry");
    for (size_t i = 0; i < ds.size(); i++) {
        const std::string where = "directives[" + std::to_string(i) + "]";
        Directive d;
        d.kind = Directive::Kind(int_of(field(ds[i], "kind", where), where + ".kind", 0, Directive::OnPe));
        d.func = text_of(ds[i], "func", where);
        d.at_func = text_of(ds[i], "at_func", where);
        d.update = int(int_of(field(ds[i], "update", where), where + ".update", 0, 1 << 16));
        const json &fixed = field(ds[i], "fixed", where);
        if (!fixed.is_boolean()) throw_error("tuning database entry: ", where, ".fixed is not a boolean");
        d.fixed = fixed.get<bool>();
        for (const json &v : array_of(ds[i], "vars", where)) {
            if (!v.is_string()) throw_error("tuning database entry: ", where, ".vars holds a non-string");
            d.vars.push_back(v.get<std::string>());
        }
        const json &ints = array_of(ds[i], "ints", where);
        for (size_t k = 0; k < ints.size(); k++)
            d.ints.push_back(int(int_of(ints[k], where + ".ints[" + std::to_string(k) + "]", INT32_MIN, INT32_MAX)));
        if (d.vars.size() < min_vars(d.kind))
            throw_error("tuning database entry: ", where, " names ", d.vars.size(), " loops, its kind takes ", min_vars(d.kind));
        t.directives.push_back(std::move(d));
    }
    const json &ls = array_of(j, "layouts", "entry");
    for (size_t i = 0; i < ls.size(); i++) {
        const std::string where = "layouts[" + std::to_string(i) + "]";
        DeviceLayout l;
        l.stick_dim = int(int_of(field(ls[i], "stick_dim", where), where + ".stick_dim", 0, 16));
        for (const json &o : array_of(ls[i], "order", where)) l.order.push_back(int(int_of(o, where + ".order", 0, 16)));
        t.layouts.push_back(l);
    }
    t.us = number_of(j, "us", "entry");
    const json &exact = field(j, "exact", "entry");
    if (!exact.is_boolean()) throw_error("tuning database entry: entry.exact is not a boolean");
    t.exact = exact.get<bool>();
    if (j.contains("validity")) {
        for (const json &v : array_of(j, "validity", "entry")) {
            if (!v.is_string()) throw_error("tuning database entry: entry.validity holds a non-string");
            t.validity.push_back(v.get<std::string>());
        }
        t.validity_known = true;
    }
    t.family = text_of(j, "family", "entry");
    t.summary = text_of(j, "summary", "entry");
    t.candidates = int_of(field(j, "candidates", "entry"), "entry.candidates", 0, INT64_MAX);
    t.timed = int_of(field(j, "timed", "entry"), "entry.timed", 0, INT64_MAX);
    t.failed = int_of(field(j, "failed", "entry"), "entry.failed", 0, INT64_MAX);
    t.search_seconds = number_of(j, "search_seconds", "entry");
    return t;
}

}  // namespace spyre::autosched
