// The machine description: every parameter of the modelled Spyre chip in one object.
// Defaults come from SPYRE_FACTS.md (public facts) or are our assumptions / calibration fits;
// machine_params() says which is which and is the single table that JSON reading, writing and the
// docs are driven from. Nothing in the compiler or the simulator hard-codes a hardware number.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spyre {

struct MachineDesc {
    // --- chip structure (public facts) ---
    int64_t cores = 32;                 // AI cores on the ring
    int64_t corelets_per_core = 2;      // corelets sharing one LX
    int64_t lx_bytes = 2 * 1024 * 1024; // LX scratchpad per core
    int64_t lx_usable_bytes = 1625344;  // round_up_128(((2 MiB) - 64 KiB) * 0.8)
    int64_t stick_bytes = 128;          // unit of DMA and of vector ops
    int64_t max_span_bytes = 256LL * 1024 * 1024;        // contiguous device memory one core may address
    int64_t device_memory_bytes = 128LL * 1000 * 1000 * 1000;

    // --- clock (assumption: same lineage core ran at 1.5 GHz) ---
    double clock_ghz = 1.5;

    // --- vector unit: sticks per cycle per core (both corelets), per op class ---
    // Fitted to the softmax table by spyre-calibrate --fit (minmax: assumption, equal to add).
    double vec_add_sticks_per_cycle = 7.0;      // add, sub, mul, fma, neg, abs, copy (calibrated)
    double vec_minmax_sticks_per_cycle = 7.0;   // max, min, compare, select (calibrated)
    double vec_transc_sticks_per_cycle = 2.2;  // exp, log, tanh, reciprocal, rsqrt, sqrt, div (calibrated)
    double vec_reduce_sticks_per_cycle = 0.077; // lane reductions (calibrated: row reductions on 1-4 cores)
    double vec_convert_sticks_per_cycle = 1.6;  // conversions (any types), broadcast fills (calibrated)
    double vec_op_overhead_cycles = 6.0;        // issue + pipeline fill per vector instruction

    // --- PE array ---
    // Time of one MATMUL: (m rounded up to whole passes + fill rows) x n' x k' / rate, n and k padded
    // to sticks. The fill is the pipeline's start-up, in rows of the pass (docs/device_model.md).
    double pe_macs_per_ns = 1176.0;  // steady-state fp16 MAC rate per core (calibrated: IBM's sustained 1140)
    int64_t pe_pass_rows = 8;        // rows of A per pass through the array (public: passes of 8 rows)
    double pe_fill_rows = 7.35;      // pipeline fill per MATMUL, in rows (calibrated: PE fill sweep)
    double pe_int8_rate_factor = 2.0;  // int8 MACs per fp16 MAC time (assumption: no public int8 rate)

    // --- device memory and DMA ---
    // One channel shared by every core: moving R read and W write bytes takes
    // (R + W) / peak + min(R, W) * turnaround (IBM's measured form and figures). Each contiguous run
    // of a transfer also costs the channel a fixed overhead (reads and writes apart), and a core's
    // DMA engine keeps a bounded number of requests in flight, which caps what one core can draw.
    double dram_bytes_per_ns = 150.0;               // one-way peak (measured)
    double dram_turnaround_ns_per_byte = 0.00574;   // per byte of the smaller direction (measured)
    double dram_read_run_overhead_bytes = 160.0;    // channel cost of one contiguous run read (calibrated)
    double dram_write_run_overhead_bytes = 367.0;   // channel cost of one contiguous run written (calibrated)
    double dma_core_bytes_per_ns = 150.0;           // one core's limit per direction (calibrated)
    double dma_replicated_read_bytes_per_ns = 2.4;  // one core's load of bytes another core loaded (calibrated)
    double dma_setup_cycles = 220.0;                // per-descriptor start latency (calibrated)
    int64_t dma_queue_depth = 16;                   // outstanding DMAs per direction per core (assumption)
    // A core whose LX working set exceeds the knee streams slower: its transfers cost
    // (ws / knee)^exponent more channel time (measured: IBM's tiled-kernel working-set sweep).
    int64_t lx_ws_knee_bytes = 512 * 1024;
    double lx_ws_exponent = 0.06;
    double kernel_launch_ns = 0.0;  // fixed time before the cores start (measured: the sweep's intercept, ~0)
    // Host time per kernel launch (setup and dispatch), outside a kernel's own time: paid between
    // the kernels of a figure that spans several (a layer, a token). Assumption, after IBM's note of
    // a ~20 us non-deterministic Memset/host-setup bucket beside the kernel time (cost_model.py).
    double host_launch_ns = 20000.0;
    // Between cards (tensor parallelism, spyre-llama --cards): each card is a PCIe Gen5 x16 device
    // (IBM), 63 GB/s a direction raw. The effective rate of a card-to-card transfer and the latency
    // of one step of a ring all-reduce are assumptions (nothing measured is public).
    double link_bytes_per_ns = 50.0;
    double link_latency_ns = 5000.0;

    // --- ring (public: 128 B/cycle per direction) ---
    double ring_bytes_per_cycle = 128.0;
    double ring_hop_latency_cycles = 4.0;     // per hop (assumption)
    double barrier_latency_cycles = 64.0;     // all-core barrier release (assumption)

    // --- layout conversion (public measured) ---
    double restickify_bytes_per_ns = 116.0;

    // --- scalar control ---
    double scalar_op_cycles = 1.0;  // one scalar / control instruction (assumption)

    // --- IBM's published cost formula (backend/sim/ibm_formula.h) ---
    // The second instrument the simulator is held against: torch-spyre's analytical model, fitted to
    // whole-kernel device timings (SPYRE_FACTS.md, "torch-spyre's cost-model sweeps"). The channel
    // law uses dram_bytes_per_ns and dram_turnaround_ns_per_byte above, the working-set term
    // lx_ws_knee_bytes and lx_ws_exponent, restickify restickify_bytes_per_ns. Nothing here is read
    // by the simulator's timing.
    double ibm_pe_macs_per_ns = 1140.0;          // sustained MAC/ns per core (measured)
    double ibm_pe_full_rows = 64.0;              // rows per core from which the PE runs at full rate
    double ibm_pe_fill_exponent = 0.35;          // efficiency (rows / full_rows)^exponent below it
    double ibm_reduce_floor_bytes_per_ns = 114.0;  // row reduction read rate 114 + 61 exp(-rows/3700)
    double ibm_reduce_amp_bytes_per_ns = 61.0;
    double ibm_reduce_scale_rows = 3700.0;
    double ibm_reduce_frac_1c = 0.11;            // row reduction rate on n cores over the 32-core rate
    double ibm_reduce_frac_2c = 0.22;
    double ibm_reduce_frac_4c = 0.43;
    double ibm_reduce_frac_8c = 0.54;
    double ibm_reduce_frac_16c = 0.54;
    double ibm_reduce_cols_bytes_per_ns = 113.0;  // column reduction (reduce over rows)
    double ibm_bcast_bytes_per_ns = 118.0;        // full input + small broadcast operand (short tensors)
    double ibm_bcast_min_rows = 1024.0;           // rows from which the surfaces below apply
    double ibm_bcast_row_a = 183.5;               // row operand: a - b log2(cols) - d log2(rows) GB/s
    double ibm_bcast_row_b = 2.8;
    double ibm_bcast_row_d = 2.6;
    double ibm_bcast_scalar_a = 162.0;            // scalar or column operand: the same form
    double ibm_bcast_scalar_b = 1.8;
    double ibm_bcast_scalar_d = 2.2;
    double ibm_underfill_cap = 1.08;              // min(cap, (h / rows)^rows_exp (cols / cols)^cols_exp)
    double ibm_underfill_rows = 7.9;
    double ibm_underfill_rows_exponent = 0.50;
    double ibm_underfill_cols = 2048.0;
    double ibm_underfill_cols_exponent = 0.38;
    double ibm_underfill_floor = 0.248;           // smallest fitted efficiency; below it the decay is
    double ibm_underfill_floor_exponent = 0.1;    //   (eff / floor)^this (cost_model.py)
    double ibm_mm_reread_area_elems = 65536.0;    // per-core output tile above which operands re-read
    double ibm_mm_reread_slope = 0.45;            // extra (A + B) x min(cap, slope log2(area / area0))
    double ibm_mm_reread_cap = 1.5;
    double ibm_replicated_bytes_per_ns = 2.3;     // per core, operands each consumer core loads itself
    double ibm_mm_overlap_exposed = 0.5;          // share of min(compute, memory) not hidden (assumption)

    int64_t stick_elems(int elem_bytes) const { return stick_bytes / elem_bytes; }
    double cycles_to_us(double cycles) const { return cycles / (clock_ghz * 1000.0); }
    double ns_to_cycles(double ns) const { return ns * clock_ghz; }

    // Reads a JSON object whose keys override the defaults. Throws spyre::Error naming the key on an
    // unknown key, a wrong type, or a non-positive value; `origin` (a file name) prefixes messages.
    static MachineDesc from_json_text(const std::string &text, const std::string &origin = "machine description");
    static MachineDesc from_file(const std::string &path);
    std::string to_json_text() const;  // every parameter, pretty-printed

    // Checks cross-parameter consistency (usable LX <= LX, stick a power of two, ...).
    void validate(const std::string &origin = "machine description") const;
};

// Where a parameter's default comes from.
enum class ParamSource { PublicFact, Measured, Calibrated, Assumption };
const char *param_source_name(ParamSource s);

// One row of the parameter table: the JSON key, units, source and a line of documentation.
struct MachineParam {
    const char *key;
    const char *unit;
    ParamSource source;
    const char *doc;
    bool is_integer;
    int64_t MachineDesc::*int_field;  // set when is_integer
    double MachineDesc::*real_field;  // set otherwise
    bool may_be_zero = false;         // 0 is a valid value (otherwise every parameter must be > 0)
};
const std::vector<MachineParam> &machine_params();

// The parameter table as Markdown rows (key, value, unit, source, doc), for docs/machine.md.
std::string machine_params_markdown(const MachineDesc &m);

}  // namespace spyre
