// What identifies an autoscheduler search, for the tuning database (tuning_db.h): the pipeline's
// definitions, its argument shapes, types and layouts, the machine description and the search
// options, as one canonical text and its hash. Halide makes the names of Funcs, Vars and RDoms
// unique per process ("out$3", "v12"), so two builds of the same algorithm differ in names only:
// the text names every Func, input, pure Var and reduction variable by its position instead, and
// the same renaming maps a schedule's records to and from that form (CanonicalNames).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "Halide.h"
#include "auto_directives.h"
#include "auto_schedule.h"
#include "auto_structure.h"

namespace spyre::autosched {

// Halide name -> canonical name ("F0", "I0", "P0", "A0", "R0"), and back.
struct CanonicalNames {
    std::map<std::string, std::string> to_canonical, from_canonical;
    // A name through the map, or unchanged when the map does not hold it (names a schedule makes
    // up, such as a split's "yo", are the same in every build).
    std::string canonical(const std::string &name) const;
    std::string actual(const std::string &canonical_name) const;
};

struct Fingerprint {
    std::string text;  // the canonical description
    std::string key;   // 32 hex digits: two 64-bit FNV-1a hashes of text
    CanonicalNames names;
};

Fingerprint fingerprint(const PipelineInfo &info, const std::vector<Halide::ImageParam> &inputs,
                        const CompileOptions &options, const AutoOptions &auto_options);

// `ds` with every Func, input and variable name mapped through `names` (to canonical names with
// `to_canonical`, back to the pipeline's with !to_canonical).
std::vector<Directive> rename_directives(const std::vector<Directive> &ds, const CanonicalNames &names,
                                         bool to_canonical);

}  // namespace spyre::autosched
