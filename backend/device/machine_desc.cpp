#include "machine_desc.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "error.h"

namespace spyre {

const char *param_source_name(ParamSource s) {
    switch (s) {
    case ParamSource::PublicFact: return "public fact";
    case ParamSource::Measured: return "measured";
    case ParamSource::Calibrated: return "calibrated";
    case ParamSource::Assumption: return "assumption";
    }
    return "?";
}

namespace {

MachineParam int_param(const char *key, const char *unit, ParamSource src, const char *doc,
                       int64_t MachineDesc::*field) {
    return MachineParam{key, unit, src, doc, true, field, nullptr};
}

MachineParam real_param(const char *key, const char *unit, ParamSource src, const char *doc,
                        double MachineDesc::*field, bool may_be_zero = false) {
    return MachineParam{key, unit, src, doc, false, nullptr, field, may_be_zero};
}

using PS = ParamSource;
using MD = MachineDesc;

// The single parameter table, in MachineDesc declaration order. JSON I/O and docs/machine.md follow it.
std::vector<MachineParam> build_params() {
    return {
        int_param("cores", "cores", PS::PublicFact,
                  "AI cores on the ring (\"32 active AI cores\"; torch-spyre spyre_accelerator.md)", &MD::cores),
        int_param("corelets_per_core", "corelets", PS::PublicFact,
                  "corelets per core, sharing one LX scratchpad (spyre_accelerator.md, glossary.md)",
                  &MD::corelets_per_core),
        int_param("lx_bytes", "bytes", PS::PublicFact, "LX scratchpad SRAM per core, 2 MiB (scratchpad_planning.md)",
                  &MD::lx_bytes),
        int_param("lx_usable_bytes", "bytes", PS::PublicFact,
                  "LX usable by compiled kernels: round_up_128((2 MiB - 64 KiB) * 0.8) (scratchpad_planning.md)",
                  &MD::lx_usable_bytes),
        int_param("stick_bytes", "bytes", PS::PublicFact,
                  "stick size, the unit of DMA and vector ops: 64 fp16 / 32 fp32 (key_concepts.md, "
                  "tensors_and_layouts.md)",
                  &MD::stick_bytes),
        int_param("max_span_bytes", "bytes", PS::PublicFact,
                  "contiguous device memory one core may address (MAX_SPAN_BYTES, _inductor/work_division.py)",
                  &MD::max_span_bytes),
        int_param("device_memory_bytes", "bytes", PS::PublicFact,
                  "LPDDR5 device memory per card, 128 GB (about 112 GB usable with ECC; dataflow_architecture.md)",
                  &MD::device_memory_bytes),
        real_param("clock_ghz", "GHz", PS::Assumption,
                   "core clock; not public, a core of the same lineage ran at 1.5 GHz (VLSI 2018)", &MD::clock_ghz),
        real_param("vec_add_sticks_per_cycle", "sticks/cycle", PS::Calibrated,
                   "vector throughput per core for add, sub, mul, fma, neg, abs, copy (one scale over the four element-wise classes (add, min/max, transcendental, convert), fit to IBM's single-core dim-0 softmax, stage 4 (softmax_table/1c/512x1024/stage4, 23.67 us): 2.7x the rates an earlier fit to a misread of that table gave, whose ratios (add = min/max = 3.25x transcendental = 4.4x convert) are kept as an assumption; no measurement separates the classes)",
                   &MD::vec_add_sticks_per_cycle),
        real_param("vec_minmax_sticks_per_cycle", "sticks/cycle", PS::Calibrated,
                   "vector throughput per core for max, min, compare, select and `VROUND` (the add rate; fit with it, see vec_add_sticks_per_cycle)",
                   &MD::vec_minmax_sticks_per_cycle),
        real_param("vec_transc_sticks_per_cycle", "sticks/cycle", PS::Calibrated,
                   "vector throughput per core for exp, log, tanh, reciprocal, rsqrt, sqrt, div (fit with the add rate, see vec_add_sticks_per_cycle)",
                   &MD::vec_transc_sticks_per_cycle),
        real_param("vec_reduce_sticks_per_cycle", "sticks/cycle", PS::Calibrated,
                   "vector throughput per core for lane reductions: sum, max, min (fit to the row reductions on 1 and "
                   "4 cores, 0.11 and 0.43 of the 32-core rate: 1 to 4 cores scale linearly at ~14.7 GB/s per core, "
                   "what one core's reductions consume; pointwise kernels are core-count independent from 2 cores up, "
                   "so the DMA does not bind there; the single-core dim-0 softmax table has no lane reductions)",
                   &MD::vec_reduce_sticks_per_cycle),
        real_param("vec_convert_sticks_per_cycle", "sticks/cycle", PS::Calibrated,
                   "vector throughput per core for conversions (fp16, fp32, int32, int8, uint8; a `VCVT` costs the "
                   "wider side's sticks) and broadcast fills (fit with the add rate, see vec_add_sticks_per_cycle; no "
                   "public figure for the int8 conversions or the fp8 ones (`VCVTF8`), which are assumed to run at this rate)",
                   &MD::vec_convert_sticks_per_cycle),
        real_param("vec_op_overhead_cycles", "cycles", PS::Assumption,
                   "issue + pipeline fill per vector instruction (kept from an earlier fit to a misread of the single-core softmax table; no measurement isolates it)", &MD::vec_op_overhead_cycles),
        real_param("pe_macs_per_ns", "MAC/ns", PS::Calibrated,
                   "steady-state fp16 MAC rate per core once the pipeline is full; fit so that whole matmuls "
                   "sustain IBM's measured 1140 MAC/ns (_inductor/cost_model.py); datasheet peak 1536",
                   &MD::pe_macs_per_ns),
        int_param("pe_pass_rows", "rows", PS::PublicFact,
                  "rows of A per pass through the PE array; a MATMUL's rows round up to whole passes (cost_model.py: "
                  "\"passes of 8 rows\")",
                  &MD::pe_pass_rows),
        real_param("pe_fill_rows", "rows", PS::Calibrated,
                   "pipeline fill per MATMUL, in rows of A: a MATMUL of m rows costs (m + fill) rows of time "
                   "(fit to the PE fill sweep, efficiency ~ (rows/64)^0.35 below 64 rows per core)",
                   &MD::pe_fill_rows),
        real_param("pe_int8_rate_factor", "x", PS::Assumption,
                   "int8 MATMUL rate over the fp16 rate (pe_macs_per_ns); IBM publishes no int8 PE rate. The "
                   "card's \"more than 300 TOPS\" (IBM announcements) against 32 cores x 1536 fp16 MAC/ns x 2 ops "
                   "(98 TOPS) suggests about 3x for the lowest precision (int4); 2x is taken for int8, as "
                   "systolic arrays that halve the operand width commonly double the MACs per cycle",
                   &MD::pe_int8_rate_factor),
        real_param("dram_bytes_per_ns", "bytes/ns", PS::Measured,
                   "device-memory one-way peak, shared by all cores (IBM's cost-model sweep, _inductor/cost_model.py)",
                   &MD::dram_bytes_per_ns),
        real_param("dram_turnaround_ns_per_byte", "ns/byte", PS::Measured,
                   "read/write turnaround, over the run's totals: extra time per byte moved in the direction whose "
                   "total so far is the smaller (the one that grows min(R, W)); a balanced copy runs ~105 GB/s "
                   "however its reads and writes are ordered (_inductor/cost_model.py)",
                   &MD::dram_turnaround_ns_per_byte),
        real_param("dram_read_run_overhead_bytes", "bytes", PS::Calibrated,
                   "channel time one contiguous run read from device memory costs beyond its bytes (row "
                   "activation), in bytes at the peak (fit to the gather, transport and column-reduction sweeps)",
                   &MD::dram_read_run_overhead_bytes, true),
        real_param("dram_write_run_overhead_bytes", "bytes", PS::Calibrated,
                   "channel time one contiguous run written to device memory costs beyond its bytes, in bytes at "
                   "the peak (fit to the run length of the written sticks: -16% at 4 sticks, -27% at 2)",
                   &MD::dram_write_run_overhead_bytes, true),
        real_param("dma_core_bytes_per_ns", "bytes/ns", PS::Calibrated,
                   "what one core's DMA engine can draw per direction. IBM's single-core dim-0 softmax bounds it from "
                   "below: stage 3 reads the input whole (the max pass) before it writes anything (the div pass), 2 MiB "
                   "one way at a time in 23.93 us, so one core draws at least 88 GB/s; stage 4 moves 2 MiB in 23.67 us "
                   "with its compute. No listed measurement shows one core below the channel (the few-core row "
                   "reductions are bound by their lane reductions), so the channel's one-way peak",
                   &MD::dma_core_bytes_per_ns),
        real_param("dma_replicated_read_bytes_per_ns", "bytes/ns", PS::Calibrated,
                   "what one core draws when it loads bytes another core has loaded at the same instruction (an "
                   "operand each consumer core loads itself): IBM measured ~2.3 GB/s per core for such replicated "
                   "reads (cost_model.py); fit to the replicated_load point (32 cores, 1 MiB each)",
                   &MD::dma_replicated_read_bytes_per_ns),
        real_param("dma_setup_cycles", "cycles", PS::Calibrated,
                   "start latency per DMA descriptor (fit to the tiled-softmax underfill sweep at 8 and 16 rows per tile, 32 KiB per core per tile)",
                   &MD::dma_setup_cycles),
        int_param("dma_queue_depth", "descriptors", PS::Assumption,
                  "outstanding DMAs per direction per core", &MD::dma_queue_depth),
        int_param("lx_ws_knee_bytes", "bytes", PS::Measured,
                  "LX working set per core above which streaming slows (cost_model.md: ~512 KB, two live tiles)",
                  &MD::lx_ws_knee_bytes),
        real_param("lx_ws_exponent", "1", PS::Measured,
                   "a core with LX working set ws above the knee moves data (ws / knee)^exponent slower "
                   "(cost_model.md: bandwidth x (512 KB / ws)^0.06)",
                   &MD::lx_ws_exponent),
        real_param("kernel_launch_ns", "ns", PS::Measured,
                   "fixed time from launch until the cores start; the sweep's intercept is ~0 (cost_model.py: "
                   "\"the golden kernel has no fixed term\")",
                   &MD::kernel_launch_ns, true),
        real_param("host_launch_ns", "ns", PS::Assumption,
                   "host time to launch one kernel (setup and dispatch), outside the kernel's modelled time; added "
                   "once per launch to figures that span several kernels (a layer, a token: spyre-llama, "
                   "llama/* in spyre-bench). IBM's cost model notes a ~20 us non-deterministic Memset/host-setup "
                   "bucket kept apart from the kernel time (cost_model.py: \"the old ~20us fixed was a separate "
                   "... host-setup bucket, not kernel\"); 0 gives device time alone",
                   &MD::host_launch_ns, true),
        real_param("link_bytes_per_ns", "bytes/ns", PS::Assumption,
                   "effective rate of a transfer between two cards over PCIe (tensor parallelism: spyre-llama "
                   "--cards). IBM's Spyre card is PCIe Gen5 x16, 63 GB/s a direction before packet overhead; 50 "
                   "assumes about 80% of that is reached",
                   &MD::link_bytes_per_ns),
        real_param("link_latency_ns", "ns", PS::Assumption,
                   "latency of one step of a ring all-reduce between cards (a transfer over PCIe and its "
                   "synchronisation); a ring all-reduce of B bytes over N cards takes 2 (N - 1) / N x B / "
                   "link_bytes_per_ns + 2 (N - 1) x link_latency_ns",
                   &MD::link_latency_ns, true),
        real_param("ring_bytes_per_cycle", "bytes/cycle", PS::PublicFact,
                   "ring bandwidth per direction between cores (spyre_accelerator.md, scratchpad_planning.md)",
                   &MD::ring_bytes_per_cycle),
        real_param("ring_hop_latency_cycles", "cycles", PS::Assumption, "latency per ring hop",
                   &MD::ring_hop_latency_cycles),
        real_param("barrier_latency_cycles", "cycles", PS::Assumption, "all-core barrier release latency",
                   &MD::barrier_latency_cycles),
        real_param("restickify_bytes_per_ns", "bytes/ns", PS::Measured,
                   "restickify (transpose between stick layouts) rate, IBM's fitted figure (_inductor/cost_model.py, "
                   "cost_model.md)",
                   &MD::restickify_bytes_per_ns),
        real_param("scalar_op_cycles", "cycles", PS::Assumption, "one scalar / control instruction",
                   &MD::scalar_op_cycles),
        real_param("ibm_pe_macs_per_ns", "MAC/ns", PS::Measured,
                   "IBM's formula: sustained PE rate per core, compute-isolated at 4-8 cores, RMS 1.7% over 4-32 cores (cost_model.py mac_peak_per_core_ns)",
                   &MD::ibm_pe_macs_per_ns),
        real_param("ibm_pe_full_rows", "rows", PS::Measured,
                   "IBM's formula: rows per core from which the PE array runs at full rate, 8 passes of 8 rows (cost_model.py underfill_target_passes_matmul)",
                   &MD::ibm_pe_full_rows),
        real_param("ibm_pe_fill_exponent", "1", PS::Measured,
                   "IBM's formula: PE efficiency (rows / ibm_pe_full_rows)^exponent below the full rows (cost_model.py underfill_exponent)",
                   &MD::ibm_pe_fill_exponent),
        real_param("ibm_reduce_floor_bytes_per_ns", "bytes/ns", PS::Measured,
                   "IBM's formula: standalone row reduction read rate min(peak, floor + amp exp(-rows / scale)), its floor (cost_model.py red_read_bw_*)",
                   &MD::ibm_reduce_floor_bytes_per_ns),
        real_param("ibm_reduce_amp_bytes_per_ns", "bytes/ns", PS::Measured,
                   "IBM's formula: the row reduction rate's amplitude (see ibm_reduce_floor_bytes_per_ns)",
                   &MD::ibm_reduce_amp_bytes_per_ns),
        real_param("ibm_reduce_scale_rows", "rows", PS::Measured,
                   "IBM's formula: the row reduction rate's decay in rows (see ibm_reduce_floor_bytes_per_ns)",
                   &MD::ibm_reduce_scale_rows),
        real_param("ibm_reduce_frac_1c", "1", PS::Measured,
                   "IBM's formula: row reduction rate on 1 core over the 32-core rate; log-linear between the listed core counts (cost_model.py red_bw_cores_g)",
                   &MD::ibm_reduce_frac_1c),
        real_param("ibm_reduce_frac_2c", "1", PS::Measured,
                   "IBM's formula: the same on 2 cores",
                   &MD::ibm_reduce_frac_2c),
        real_param("ibm_reduce_frac_4c", "1", PS::Measured,
                   "IBM's formula: the same on 4 cores",
                   &MD::ibm_reduce_frac_4c),
        real_param("ibm_reduce_frac_8c", "1", PS::Measured,
                   "IBM's formula: the same on 8 cores (single-shot)",
                   &MD::ibm_reduce_frac_8c),
        real_param("ibm_reduce_frac_16c", "1", PS::Measured,
                   "IBM's formula: the same on 16 cores (single-shot)",
                   &MD::ibm_reduce_frac_16c),
        real_param("ibm_reduce_cols_bytes_per_ns", "bytes/ns", PS::Measured,
                   "IBM's formula: column reduction (reduce over rows) rate (cost_model.py bw_reduce_outer_gbps)",
                   &MD::ibm_reduce_cols_bytes_per_ns),
        real_param("ibm_bcast_bytes_per_ns", "bytes/ns", PS::Measured,
                   "IBM's formula: rate of a kernel streaming a full input plus a small broadcast operand, below ibm_bcast_min_rows rows (cost_model.py bw_broadcast_gbps)",
                   &MD::ibm_bcast_bytes_per_ns),
        real_param("ibm_bcast_min_rows", "rows", PS::Measured,
                   "IBM's formula: rows from which the broadcast surfaces a - b log2(cols) - d log2(rows) apply (cost_model.py bcast_bw_min_rows)",
                   &MD::ibm_bcast_min_rows),
        real_param("ibm_bcast_row_a", "bytes/ns", PS::Measured,
                   "IBM's formula: row-operand broadcast surface, a (cost_model.py bcast_bw_a; 1.3% RMS)",
                   &MD::ibm_bcast_row_a),
        real_param("ibm_bcast_row_b", "bytes/ns", PS::Measured,
                   "IBM's formula: row-operand broadcast surface, b per log2(cols)",
                   &MD::ibm_bcast_row_b),
        real_param("ibm_bcast_row_d", "bytes/ns", PS::Measured,
                   "IBM's formula: row-operand broadcast surface, d per log2(rows)",
                   &MD::ibm_bcast_row_d),
        real_param("ibm_bcast_scalar_a", "bytes/ns", PS::Measured,
                   "IBM's formula: scalar- or column-operand broadcast surface, a (cost_model.py cbc_bw_a; 5.1% RMS)",
                   &MD::ibm_bcast_scalar_a),
        real_param("ibm_bcast_scalar_b", "bytes/ns", PS::Measured,
                   "IBM's formula: scalar- or column-operand surface, b per log2(cols)",
                   &MD::ibm_bcast_scalar_b),
        real_param("ibm_bcast_scalar_d", "bytes/ns", PS::Measured,
                   "IBM's formula: scalar- or column-operand surface, d per log2(rows)",
                   &MD::ibm_bcast_scalar_d),
        real_param("ibm_underfill_cap", "1", PS::Measured,
                   "IBM's formula: row-tiled kernel pipeline underfill min(cap, (h / rows)^rows_exponent (cols / cols)^cols_exponent), h rows per core per tile; its cap (cost_model.py coarse_underfill_cap; RMS 9%)",
                   &MD::ibm_underfill_cap),
        real_param("ibm_underfill_rows", "rows", PS::Measured,
                   "IBM's formula: the underfill's full-fill rows per core per tile at ibm_underfill_cols (coarse_underfill_rfull)",
                   &MD::ibm_underfill_rows),
        real_param("ibm_underfill_rows_exponent", "1", PS::Measured,
                   "IBM's formula: the underfill's exponent on h (coarse_underfill_exp)",
                   &MD::ibm_underfill_rows_exponent),
        real_param("ibm_underfill_cols", "columns", PS::Measured,
                   "IBM's formula: the underfill's reference width (coarse_underfill_col_ref)",
                   &MD::ibm_underfill_cols),
        real_param("ibm_underfill_cols_exponent", "1", PS::Measured,
                   "IBM's formula: the underfill's exponent on the width (coarse_underfill_col_exp)",
                   &MD::ibm_underfill_cols_exponent),
        real_param("ibm_underfill_floor", "1", PS::Measured,
                   "IBM's formula: smallest efficiency the underfill surface was fitted at (cols 128, h 4); below it IBM does not extrapolate the power law (coarse_underfill_eff0)",
                   &MD::ibm_underfill_floor),
        real_param("ibm_underfill_floor_exponent", "1", PS::Measured,
                   "IBM's formula: below the floor the efficiency decays as floor x (eff / floor)^this, a form IBM chose, not fitted (coarse_underfill_gamma)",
                   &MD::ibm_underfill_floor_exponent),
        real_param("ibm_mm_reread_area_elems", "elements", PS::Measured,
                   "IBM's formula: per-core matmul output tile above which the operands are re-read (cost_model.py mm_spill_area0)",
                   &MD::ibm_mm_reread_area_elems),
        real_param("ibm_mm_reread_slope", "1", PS::Measured,
                   "IBM's formula: extra (A + B bytes) x min(cap, slope log2(area / area0)) (mm_spill_slope)",
                   &MD::ibm_mm_reread_slope),
        real_param("ibm_mm_reread_cap", "1", PS::Measured,
                   "IBM's formula: the re-read fraction's cap (mm_spill_cap)",
                   &MD::ibm_mm_reread_cap),
        real_param("ibm_replicated_bytes_per_ns", "bytes/ns", PS::Measured,
                   "IBM's formula: per core, matmul operand bytes each consumer core loads itself (SPYRE_FACTS.md: ~2.3 GB/s per core for those replicated reads)",
                   &MD::ibm_replicated_bytes_per_ns),
        real_param("ibm_mm_overlap_exposed", "1", PS::Assumption,
                   "IBM's formula: share of min(compute, memory) a matmul does not hide. IBM measured max(compute, memory) 22-31% low and compute + memory high by a similar margin, so the midpoint of the two is taken (SPYRE_FACTS.md; cost_model.py itself uses max)",
                   &MD::ibm_mm_overlap_exposed),
    };
}

// Plain Levenshtein distance, for "did you mean" on unknown keys.
size_t edit_distance(const std::string &a, const std::string &b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); j++) prev[j] = j;
    for (size_t i = 1; i <= a.size(); i++) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); j++) {
            size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

const MachineParam *find_param(const std::string &key) {
    for (const MachineParam &p : machine_params()) {
        if (key == p.key) return &p;
    }
    return nullptr;
}

std::string did_you_mean(const std::string &key) {
    const MachineParam *best = nullptr;
    size_t best_d = 3;  // suggest only within distance 2
    for (const MachineParam &p : machine_params()) {
        size_t d = edit_distance(key, p.key);
        if (d < best_d) {
            best_d = d;
            best = &p;
        }
    }
    return best ? std::string(" (did you mean '") + best->key + "'?)" : std::string();
}

const char *json_type_desc(const nlohmann::json &v) {
    if (v.is_number_float()) return "a non-integer number";
    return v.type_name();
}

}  // namespace

const std::vector<MachineParam> &machine_params() {
    static const std::vector<MachineParam> params = build_params();
    return params;
}

std::string machine_params_markdown(const MachineDesc &m) {
    std::ostringstream os;
    os << "| key | default | unit | source | what it is and where it comes from |\n|---|---|---|---|---|\n";
    for (const MachineParam &p : machine_params()) {
        os << "| `" << p.key << "` | ";
        if (p.is_integer) os << m.*(p.int_field);
        else os << m.*(p.real_field);
        os << " | " << p.unit << " | " << param_source_name(p.source) << " | " << p.doc << " |\n";
    }
    return os.str();
}

MachineDesc MachineDesc::from_json_text(const std::string &text, const std::string &origin) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception &e) {
        // parse_error carries the byte position / line; out_of_range covers number overflow.
        throw_error(origin, ": malformed JSON: ", e.what());
    }
    if (!j.is_object()) throw_error(origin, ": expected a JSON object of parameters at top level, got ", j.type_name());

    MachineDesc m;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string &key = it.key();
        const nlohmann::json &v = it.value();
        const MachineParam *p = find_param(key);
        if (!p) throw_error(origin, ": unknown key '", key, "'", did_you_mean(key));
        if (p->is_integer) {
            int64_t x = 0;
            if (v.is_number_integer() && !v.is_number_unsigned()) {
                x = v.get<int64_t>();
            } else if (v.is_number_unsigned()) {
                uint64_t u = v.get<uint64_t>();
                if (u > uint64_t(std::numeric_limits<int64_t>::max()))
                    throw_error(origin, ": '", key, "' = ", v.dump(), " is too large for a 64-bit integer");
                x = int64_t(u);
            } else {
                throw_error(origin, ": '", key, "' must be an integer, got ", json_type_desc(v), " ", v.dump());
            }
            if (x <= 0) throw_error(origin, ": '", key, "' must be > 0, got ", v.dump());
            m.*(p->int_field) = x;
        } else {
            if (!v.is_number())
                throw_error(origin, ": '", key, "' must be a number, got ", v.type_name(), " ", v.dump());
            double x = v.get<double>();
            if (!std::isfinite(x) || (p->may_be_zero ? x < 0 : !(x > 0)))
                throw_error(origin, ": '", key, "' must be ", p->may_be_zero ? ">= 0" : "> 0", ", got ", v.dump());
            m.*(p->real_field) = x;
        }
    }
    m.validate(origin);
    return m;
}

MachineDesc MachineDesc::from_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw_error("cannot open machine description '", path, "': ", std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw_error("error reading machine description '", path, "'");
    return from_json_text(ss.str(), path);
}

std::string MachineDesc::to_json_text() const {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const MachineParam &p : machine_params()) {
        if (p.is_integer)
            j[p.key] = this->*(p.int_field);
        else
            j[p.key] = this->*(p.real_field);  // nlohmann prints doubles with round-trip precision
    }
    return j.dump(2) + "\n";
}

void MachineDesc::validate(const std::string &origin) const {
    // Positivity is checked here too, so a MachineDesc built in code gets the same guarantees as one
    // read from JSON.
    for (const MachineParam &p : machine_params()) {
        if (p.is_integer) {
            int64_t x = this->*(p.int_field);
            if (x <= 0) throw_error(origin, ": '", p.key, "' must be > 0, got ", x);
        } else {
            double x = this->*(p.real_field);
            if (!std::isfinite(x) || (p.may_be_zero ? x < 0 : !(x > 0)))
                throw_error(origin, ": '", p.key, "' must be ", p.may_be_zero ? ">= 0" : "> 0", " and finite, got ", x);
        }
    }
    if (lx_usable_bytes > lx_bytes)
        throw_error(origin, ": 'lx_usable_bytes' (", lx_usable_bytes, ") exceeds 'lx_bytes' (", lx_bytes, ")");
    if (stick_bytes < 4 || (stick_bytes & (stick_bytes - 1)) != 0)
        throw_error(origin, ": 'stick_bytes' (", stick_bytes, ") must be a power of two >= 4");
    if (lx_bytes % stick_bytes != 0)
        throw_error(origin, ": 'lx_bytes' (", lx_bytes, ") must be a multiple of 'stick_bytes' (", stick_bytes, ")");
    if (cores > 1024) throw_error(origin, ": 'cores' (", cores, ") exceeds the limit of 1024");
    if (dma_queue_depth > 1024)
        throw_error(origin, ": 'dma_queue_depth' (", dma_queue_depth, ") exceeds the limit of 1024");
}

}  // namespace spyre
