#include "ktir_import.h"

#include <algorithm>

#include "ktir_importer.h"
#include "ktir_reader.h"

namespace spyre::ktir {

namespace lowering {

int64_t Importer::lx_attr(const std::string &name) const {
    auto off = f_.attrs.find(name);
    if (off == f_.attrs.end()) return name == "spyre.lx_offset" ? 0 : -1;
    if (off->second.kind != Attr::Int || off->second.i < 0 || off->second.i >= m_.lx_bytes || off->second.i % m_.stick_bytes)
        throw_error("func.func @", f_.name, ": ", name, " must be a whole number of ", m_.stick_bytes,
                    "-byte sticks in [0, ", m_.lx_bytes, ") bytes");
    return off->second.i;
}

DeviceProgram Importer::run() {
    auto sync = f_.attrs.find("spyre.sync");
    explicit_ = sync != f_.attrs.end() && sync->second.kind == Attr::String && sync->second.s == "explicit";
    // spyre.lx_offset, and spyre.lx_offset_<type> where our exporter gave an element type LX of its own.
    for (DType t : {DType::F16, DType::F32, DType::I32, DType::I8}) lx_offsets_[size_t(t)] = lx_attr("spyre.lx_offset_" + std::string(dtype_name(t)));
    lx_offset_ = lx_attr("spyre.lx_offset");
    for (int64_t &o : lx_offsets_) if (o < 0) o = lx_offset_;
    lx_offsets_[size_t(DType::U8)] = lx_offsets_[size_t(DType::I8)];
    specialise_dynamic_sizes();
    i64_views_as_words();
    num_cores_ = grid_cores();
    b_ = ProgramBuilder(f_.name, num_cores_);
    ssa_ = analyse_ssa(f_);
    find_buffers();
    find_index_selects();
    lx_ = LxArena(round_up(lx_base_, sb_));
    bind_args();
    lower_region(f_.body, /*top=*/true);
    if (!explicit_) drain();
    DeviceProgram p = b_.finish();
    // A buffer the kernel both loads and stores is updated in place: its initial contents are an
    // input and its final contents a result.
    for (size_t i = 0; i < bufs_.size(); i++) {
        const bool st = stored_.count(int(i)) > 0, ld = loaded_.count(int(i)) > 0;
        p.buffers[i].kind = bufs_[i].kind_fixed ? bufs_[i].kind
                            : st && ld          ? BufferKind::InOut
                            : st                ? BufferKind::Output
                                                : BufferKind::Input;
    }
    verify_program(p);
    verify_for_machine(p, m_);
    return p;
}

int Importer::grid_cores() {
    auto g = f_.attrs.find("grid");
    if (g == f_.attrs.end()) return 1;
    const Attr &a = g->second;
    int64_t n = 1;
    if (a.kind == Attr::Int) {
        n = a.i;
        grid_ = {a.i};
    } else if (a.kind == Attr::Array) {
        for (const Attr &x : a.items) {
            if (x.kind != Attr::Int || x.i <= 0)
                throw_error("line ", f_.line, ": function @", f_.name, ": grid entries must be positive integers");
            n *= x.i;
            grid_.push_back(x.i);
            if (n > 1 << 20) break;
        }
    } else {
        throw_error("line ", f_.line, ": function @", f_.name, ": grid must be a list of integers");
    }
    if (n <= 0 || n > m_.cores)
        throw_error("line ", f_.line, ": function @", f_.name, ": grid of ", n, " compute tiles does not fit the ",
                    m_.cores, " cores of the machine");
    return int(n);
}

std::string Importer::strip(std::string n, std::initializer_list<const char *> suffixes) {
    for (const char *s : suffixes) {
        size_t l = std::strlen(s);
        if (n.size() > l && n.compare(n.size() - l, l, s) == 0) return n.substr(0, n.size() - l);
    }
    return n;
}

const Op *Importer::def_op(const std::string &name) const {
    auto it = defs_.find(name);
    return it == defs_.end() ? nullptr : it->second;
}

// The memory space spellings of IBM's tools: torch-spyre's `#ktdp.spyre_memory_space<HBM|LX>` and
// ktir-cpu's `#ktdp.memory_space<global|ct_local[, ct_id = N]>` (global is device memory, ct_local a
// core's LX).
bool Importer::memory_space_hbm(const Op &op) {
    auto it = op.attrs.find("memory_space");
    if (it == op.attrs.end()) return true;  // unspecified: device memory
    const Attr &a = it->second;
    auto wrong = [&](const std::string &what) {
        throw_error("line ", op.line, ": ", op.name, ": memory_space ", what,
                    " (expected #ktdp.spyre_memory_space<HBM|LX> or #ktdp.memory_space<global|ct_local>)");
    };
    if (a.kind != Attr::Dialect || (a.s != "ktdp.spyre_memory_space" && a.s != "ktdp.memory_space"))
        wrong("is not a ktdp memory space");
    std::string body;
    for (char c : a.body)
        if (!std::isspace((unsigned char)c)) body += c;
    std::string kind = body.substr(0, body.find(','));
    if (kind == "HBM" || kind == "global" || kind == "unspecified") return true;
    if (kind == "LX" || kind == "ct_local") {
        if (body.find("core") != std::string::npos || body.find("ct_id") != std::string::npos)
            throw_error("line ", op.line, ": ", op.name, ": the LX of another core ('", a.body,
                        "') is not supported by the device model: each core addresses its own LX only");
        return false;
    }
    if (kind == "L0")
        throw_error("line ", op.line, ": ", op.name,
                    ": memory space L0 (the PE array's operand buffers) is not addressable in the device model");
    wrong("'" + a.body + "' is unknown");
    return true;
}

std::string Importer::base_arg(const std::string &v, int depth) const {
    if (depth > 64) return "";
    if (std::find(f_.args.begin(), f_.args.end(), v) != f_.args.end()) return v;
    const Op *d = def_op(v);
    if (!d || (d->name != "arith.addi" && d->name != "arith.subi")) return "";
    std::string a = base_arg(d->operands[0], depth + 1);
    if (!a.empty() || d->name == "arith.subi") return a;
    return base_arg(d->operands[1], depth + 1);
}

void Importer::find_buffers() {
    std::function<void(const Region &)> collect = [&](const Region &r) {
        for (const Op &op : r.ops) {
            for (const std::string &res : op.results) defs_[res] = &op;
            for (const Region &s : op.regions) collect(s);
        }
    };
    collect(f_.body);
    // Views constructed directly on an argument declare that argument's buffer.
    std::vector<const Op *> views;
    std::vector<const Op *> dist;
    std::function<void(const Region &)> find = [&](const Region &r) {
        for (const Op &op : r.ops) {
            if (op.name == "ktdp.construct_memory_view") views.push_back(&op);
            if (op.name == "ktdp.construct_distributed_memory_view") dist.push_back(&op);
            for (const Region &s : op.regions) find(s);
        }
    };
    find(f_.body);
    distributed_views(dist);  // the whole tensor's view declares its argument's buffer
    std::map<std::string, std::vector<const Op *>> views_of;  // HBM views by the argument they address
    for (const Op *v : views) {
        bool hbm = memory_space_hbm(*v);
        if (!hbm) {
            // Our allocations start above every LX view at a constant address.
            const Op *d = def_op(v->operands[0]);
            // (A malformed view is skipped here; lowering it reports the error.)
            if (d && d->name == "arith.constant" && d->value.kind == Attr::Int && v->sizes.size() == v->strides.size()) {
                int64_t extent = 1;
                for (size_t i = 0; i < v->sizes.size() && extent < m_.lx_bytes; i++) {
                    if (v->strides[i] < 0 || v->strides[i] > m_.lx_bytes || v->sizes[i] > m_.lx_bytes) {
                        extent = m_.lx_bytes;
                        break;
                    }
                    extent += std::max<int64_t>(0, v->sizes[i] - 1) * v->strides[i];
                }
                const Type &t = v->result_types[0];
                int eb = t.bits == 16 ? 2 : t.bits == 8 ? 1 : 4;
                const DType dt = t.bits == 16 ? DType::F16 : t.bits == 8 ? DType::I8
                                 : (t.shaped() ? t.elem : t.kind) == Type::Int ? DType::I32 : DType::F32;
                if (d->value.i >= 0 && d->value.i < m_.lx_bytes && extent < m_.lx_bytes)
                    lx_base_ = std::max<int64_t>(lx_base_, (d->value.i + extent) * eb - lx_offsets_[size_t(dt)]);
            }
            continue;
        }
        std::string arg = base_arg(v->operands[0]);
        if (arg.empty()) continue;
        auto it = std::find(f_.args.begin(), f_.args.end(), arg);
        size_t ai = size_t(it - f_.args.begin());
        if (f_.arg_types[ai].kind != Type::Index)
            throw_error("line ", v->line, ": ktdp.construct_memory_view: the address %", arg,
                        " must be an index argument, not ", f_.arg_types[ai].text());
        if (v->operands[0] == arg && !arg_view_.count(arg)) arg_view_[arg] = v;  // the first declares it
        pointer_args_.insert(arg);
        views_of[arg].push_back(v);
        // The innermost extents of the tiles cut from the view (see BufInfo::elem_sticks).
        auto uses = du_.find(v->results.empty() ? std::string() : v->results[0]);
        if (uses == du_.end()) continue;
        for (const Op *u : uses->second.users)
            if (u->name == "ktdp.construct_access_tile" && !u->result_types.empty() &&
                !u->result_types[0].shape.empty())
                tile_inner_[arg].push_back(u->result_types[0].shape.back());
    }
    // Declare argument buffers in argument order.
    for (const std::string &a : f_.args) {
        if (!pointer_args_.count(a)) continue;
        auto it = arg_view_.find(a);
        std::string why;
        if (it == arg_view_.end() && !infer_buffer_view(a, views_of[a], &why))
            throw_error("line ", f_.line, ": argument %", a,
                        " is used as an HBM address but no memory view is constructed directly on it (its view "
                        "gives the buffer's shape), and its views at offsets do not give it: ", why);
        it = arg_view_.find(a);
        arg_of_view_[it->second] = a;
        arg_buffer_[a] = declare_buffer(*it->second, strip(a, {"_ptr", "_addr", "_address"}), -1);
    }
}

int Importer::declare_buffer(const Op &v, const std::string &name, int64_t const_addr) {
    BufInfo bi;
    bi.name = name;
    const Type &t = v.result_types[0];
    if (t.kind != Type::MemRef)
        throw_error("line ", v.line, ": ktdp.construct_memory_view: result must be a memref, not ", t.text());
    bi.t = dtype_of(t, v);
    bi.shape = v.sizes;
    if (v.sizes.empty()) throw_error("line ", v.line, ": ktdp.construct_memory_view: a view needs sizes");
    if (v.sizes.size() != v.strides.size())
        throw_error("line ", v.line, ": ktdp.construct_memory_view: ", v.sizes.size(), " sizes but ",
                    v.strides.size(), " strides");
    if (t.shape != v.sizes)
        throw_error("line ", v.line, ": ktdp.construct_memory_view: sizes do not match the type ", t.text());
    for (int64_t s : v.sizes)
        if (s <= 0) throw_error("line ", v.line, ": ktdp.construct_memory_view: sizes must be positive");
    // The buffer's dimensions in memory order: by decreasing stride. A view may list them in another
    // order (torch-spyre's weight view `sizes: [4096, 64, 64], strides: [64, 262144, 1]`); the buffer
    // is the tensor in memory order, the view addresses it through its strides.
    const size_t n = v.sizes.size();
    // A size-1 dimension's stride addresses nothing: it sorts with the next larger dimension inward.
    std::vector<int64_t> key(n, 1);
    for (size_t i = n; i-- > 0;) key[i] = v.sizes[i] > 1 || i + 1 == n ? v.strides[i] : key[i + 1];
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] > key[b]; });
    const bool permuted = order.back() != n - 1 || !std::is_sorted(order.begin(), order.end());
    std::vector<int64_t> mem_sizes(n), mem_strides(n);
    for (size_t i = 0; i < n; i++) {
        mem_sizes[i] = v.sizes[order[i]];
        mem_strides[i] = v.strides[order[i]];
    }
    // The device layout: rows padded to whole sticks, row-major (the default layout).
    const int64_t lanes = sb_ / dtype_bytes(bi.t);
    std::vector<int64_t> want(n);
    int64_t st = 1;
    for (size_t i = n; i-- > 0;) {
        want[i] = st;
        st = wrap_mul(st, i + 1 == n ? round_up(mem_sizes[i], lanes) : mem_sizes[i]);
        if (st > (int64_t(1) << 40)) throw_error("line ", v.line, ": ktdp.construct_memory_view: view too large");
    }
    bi.elems = st;
    const bool dense = mem_strides == dense_strides(mem_sizes);
    auto ok_strides = [&](const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
        for (size_t i = 0; i < n; i++)  // a size-1 dimension's stride addresses nothing
            if (a[i] != b[i] && mem_sizes[i] > 1) return false;
        return true;
    };
    if ((!ok_strides(mem_strides, want) && !(dense || ok_strides(mem_strides, dense_strides(mem_sizes)))) ||
        order.back() != n - 1 || (permuted && !ok_strides(mem_strides, want))) {
        std::string w;
        for (int64_t x : want) w += (w.empty() ? "" : ", ") + std::to_string(x);
        throw_error("line ", v.line, ": ktdp.construct_memory_view of buffer '", name,
                    "': strides must be row-major, dense or in the stick layout [", w, "] (rows padded to whole ",
                    lanes, "-element sticks), in any order of the outer dimensions when rows are whole sticks; "
                    "the innermost dimension must have stride 1");
    }
    bi.shape = mem_sizes;
    // A buffer whose rows are not whole sticks and that is only ever read and written one element at a
    // time (ktir-cpu's layernorm stores each row's mean to Mean[row]) keeps each element in a stick of
    // its own: whole-stick DMAs of neighbouring elements, from different cores, would overwrite each
    // other. The host runtime packs and unpacks it like any padded layout.
    auto inner = tile_inner_.find(arg_of_view_[&v]);
    if (const_addr < 0 && mem_sizes.back() % lanes != 0 && mem_sizes.back() > 1 && inner != tile_inner_.end() &&
        std::all_of(inner->second.begin(), inner->second.end(), [](int64_t e) { return e == 1; })) {
        bi.elem_sticks = true;
        bi.shape.push_back(1);
        bi.elems = wrap_mul(elements(mem_sizes), lanes);
    }
    auto k = v.attrs.find("spyre.kind");
    if (k != v.attrs.end()) {
        const char *want = "spyre.kind must be \"input\", \"output\", \"inout\" or \"temp\"";
        if (k->second.kind != Attr::String) throw_error("line ", v.line, ": ", want);
        if (k->second.s == "input") bi.kind = BufferKind::Input;
        else if (k->second.s == "output") bi.kind = BufferKind::Output;
        else if (k->second.s == "inout") bi.kind = BufferKind::InOut;
        else if (k->second.s == "temp") bi.kind = BufferKind::Temp;
        else throw_error("line ", v.line, ": ", want);
        bi.kind_fixed = true;
    }
    bi.const_addr = const_addr;
    for (const BufInfo &o : bufs_)
        if (o.name == bi.name)
            throw_error("line ", v.line, ": two buffers are named '", bi.name, "'");
    std::vector<int64_t> halide(bi.shape.rbegin(), bi.shape.rend());
    DeviceLayout layout;
    if (!bi.elem_sticks) split_stick_layout(v, order, bi, halide, layout);
    auto sd = v.attrs.find("spyre.stick_dim");
    if (sd != v.attrs.end()) {
        // The export's mark of a rank-2 tensor sticked on dim 1: the view is its swapped tensor.
        if (sd->second.kind != Attr::Int || sd->second.i != 1 || halide.size() != 2 || bi.elem_sticks)
            throw_error("line ", v.line, ": ktdp.construct_memory_view: spyre.stick_dim must be 1, on a view of a "
                        "2-D tensor");
        std::vector<int> swapped;
        for (int d : layout.order.empty() ? default_layout(2).order : layout.order) swapped.push_back(1 - d);
        layout = DeviceLayout{1, swapped};
        halide = {halide[1], halide[0]};
    }
    int id = b_.buffer(bi.name, BufferKind::Input, bi.t, halide, layout);
    bufs_.push_back(bi);
    return id;
}

// torch-spyre's form of a tensor in a layout whose stick count is not innermost: the logical dims
// outermost first, the stick dim split into its stick count and its lanes (`sizes: [4096, 64, 64],
// strides: [64, 262144, 1]` is a (4096, 4096) weight with the stick count outermost). The buffer is
// declared as that tensor in that layout, so the host packs the logical tensor into it; a view
// whose stick count is innermost stays the tensor in memory order, as before.
void Importer::split_stick_layout(const Op &v, const std::vector<size_t> &order, const BufInfo &bi,
                                  std::vector<int64_t> &halide, DeviceLayout &layout) {
    const size_t n = v.sizes.size();
    const int64_t lanes = sb_ / dtype_bytes(bi.t);
    if (n < 3 || v.sizes[n - 1] != lanes || v.strides[n - 1] != 1 || v.strides[n - 2] == lanes) return;
    const int rank = int(n) - 1;
    int64_t extent = wrap_mul(v.sizes[n - 2], lanes);
    auto ext = v.attrs.find("spyre.stick_extent");
    if (ext != v.attrs.end()) {
        if (ext->second.kind != Attr::Int || ext->second.i <= extent - lanes || ext->second.i > extent)
            throw_error("line ", v.line, ": ktdp.construct_memory_view: spyre.stick_extent must be an integer in (",
                        extent - lanes, ", ", extent, "], the elements of its ", v.sizes[n - 2], " sticks");
        extent = ext->second.i;
    }
    halide.assign(size_t(rank), 0);
    halide[0] = extent;
    for (size_t i = 0; i + 2 < n; i++) halide[size_t(rank) - 1 - i] = v.sizes[i];
    layout.stick_dim = 0;
    layout.order.clear();
    for (size_t i = 0; i + 1 < n; i++) {
        const size_t p = order[i];  // listed position, outermost in memory first
        layout.order.push_back(p == n - 2 ? 0 : rank - 1 - int(p));
    }
    if (device_geometry(layout, halide, bi.t, sb_).total_bytes != wrap_mul(bi.elems, dtype_bytes(bi.t)))
        throw_internal("line ", v.line, ": internal: the split-stick layout of '", bi.name, "' does not cover its view");
}

void Importer::bind_args() {
    std::set<std::string> used;
    for (size_t i = 0; i < f_.args.size(); i++) {
        const std::string &a = f_.args[i];
        const Type &t = f_.arg_types[i];
        Val v;
        v.k = Val::S;
        if (pointer_args_.count(a)) {
            v.s.buffer = arg_buffer_[a];
            v.s.known = true;
            v.s.c = 0;
        } else {
            if (!t.scalar())
                throw_error("line ", f_.line, ": argument %", a, " of type ", t.text(),
                            " is not supported (pass buffers as index addresses with a memory view)");
            auto it = opt_.args.find(a);
            auto uses = du_.find(a);
            if (it == opt_.args.end() && (uses == du_.end() || uses->second.users.empty()))
                continue;  // unused (torch-spyre passes element counts the kernel never reads)
            if (it == opt_.args.end())
                throw_error("function @", f_.name, ": scalar argument %", a, " (", t.text(),
                            ") has no value; give --arg ", a, "=VALUE");
            used.insert(a);
            const std::string &text = it->second;
            char *endp = nullptr;
            if (t.kind == Type::Float) {
                if (t.bits != 16 && t.bits != 32)
                    throw_error("argument %", a, ": type ", t.text(), " is not supported (f16, f32)");
                double d = std::strtod(text.c_str(), &endp);
                if (text.empty() || *endp) throw_error("--arg ", a, "=", text, ": not a number");
                v.s.is_float = true;
                v.s.known = true;
                v.s.f = t.bits == 16 ? half_to_float(float_to_half(float(d))) : double(float(d));
            } else {
                errno = 0;
                long long x = std::strtoll(text.c_str(), &endp, 0);
                if (text.empty() || *endp || errno) throw_error("--arg ", a, "=", text, ": not an integer");
                if (t.kind == Type::Int && t.bits < 64) {
                    int64_t lo = t.bits == 1 ? 0 : -(int64_t(1) << (t.bits - 1));
                    int64_t hi = t.bits == 1 ? 1 : (int64_t(1) << (t.bits - 1)) - 1;
                    if (x < lo || x > hi)
                        throw_error("--arg ", a, "=", text, ": out of range for ", t.text());
                }
                v.s.known = true;
                v.s.c = x;
            }
        }
        vals_[a] = v;
    }
    for (const auto &kv : opt_.args)
        if (!used.count(kv.first))
            throw_error("--arg ", kv.first, ": function @", f_.name, " has no scalar argument %", kv.first);
}

Val &Importer::val(const std::string &name, const Op &op) {
    auto it = vals_.find(name);
    if (it == vals_.end() || it->second.released)
        throw_error("line ", op.line, ": ", op.name, ": value %", name, " is not defined");
    return it->second;
}

Scalar Importer::scalar(const std::string &name, const Op &op) {
    Val &v = val(name, op);
    if (v.k != Val::S) throw_error("line ", op.line, ": ", op.name, ": %", name, " is not a scalar");
    return v.s;
}

Tens &Importer::tensor(const std::string &name, const Op &op) {
    if (shift_parts_.count(name))
        throw_error("line ", op.line, ": ", op.name, ": %", name,
                    " is a slice of a shifted read or a lane select, which only the tensor.insert_slice that carries "
                    "spyre.shift or spyre.lane_select (and slices and reshapes on the way to it) may read");
    Val &v = val(name, op);
    if (v.k != Val::T) throw_error("line ", op.line, ": ", op.name, ": %", name, " is not a tensor");
    return v.x;
}

Reg Importer::new_reg(const Op &op) {
    if (std::optional<Reg> r = b_.try_alloc()) {
        refs_[r->id] = 0;
        return *r;
    }
    throw_error("line ", op.line, ": ", op.name, ": more than ", kNumRegs - 1,
                " index values live at once (the device has 31 scalar registers)");
}

void Importer::hold(Val &v, Reg r) {
    if (r.id == 0) return;
    refs_[r.id]++;
    v.regs.push_back(r.id);
}

void Importer::hold_s(Val &v, const Scalar &s) {
    if (!s.known && !s.lazy) hold(v, s.r);
    if (s.div_k) hold(v, s.div_src);
}

void Importer::hold_tensor(Val &v) {
    if (v.x.kind == Tens::InLx) hold(v, v.x.at.reg);
    if (v.x.kind == Tens::Bcast) hold(v, v.x.src.reg);
}

void Importer::sweep() {
    for (int r = 1; r < kNumRegs; r++)
        if (b_.allocated(Reg{r}) && refs_[r] <= 0) {
            refs_[r] = 0;
            b_.release(Reg{r});
        }
}

Reg Importer::reg_of(const Scalar &s, const Op &op, Reg *temp) {
    if (s.is_float) throw_error("line ", op.line, ": ", op.name, ": a float value cannot be used as an index");
    if (s.known) {
        if (s.c == 0) return kZero;
        *temp = new_reg(op);
        b_.li(*temp, s.c);
        return *temp;
    }
    if (s.lazy) {
        Reg k = new_reg(op);
        *temp = new_reg(op);
        b_.li(k, s.div_k);
        b_.op3(Opcode::DIV, *temp, s.div_src, k);
        if (s.div_add) b_.addi(*temp, *temp, int32_t(s.div_add));
        return *temp;
    }
    if (s.nonzero) {
        *temp = new_reg(op);
        b_.op3(Opcode::CMPEQ, *temp, s.r, kZero);
        b_.op3(Opcode::CMPEQ, *temp, *temp, kZero);
        return *temp;
    }
    return s.r;
}

void Importer::define(const Op &op, size_t i, Val v) {
    if (i >= op.results.size()) throw_error("line ", op.line, ": ", op.name, ": missing result");
    if (v.k == Val::S) hold_scalar(v);
    if (v.k == Val::T) hold_tensor(v);
    if (v.k == Val::V) hold_s(v, v.v.off);
    if (v.k == Val::X) {
        hold_s(v, v.tile.v.off);
        hold_s(v, v.tile.origin);
        for (const Scalar &s : v.tile.idx) hold_s(v, s);
        if (v.tile.ind) {
            for (const IndirectTile::Affine &a : v.tile.ind->direct) hold_s(v, a.base);
            for (const IndirectTile::Index &x : v.tile.ind->index) {
                hold_s(v, x.v.off);
                for (const IndirectTile::Affine &a : x.subs) hold_s(v, a.base);
            }
        }
    }
    vals_[op.results[i]] = std::move(v);
}

Val Importer::scalar_val(Scalar s) {
    Val v;
    v.k = Val::S;
    v.s = s;
    return v;
}

Val Importer::reg_val(Reg r) {
    Scalar s;
    s.r = r;
    return scalar_val(s);
}

void Importer::release_dead(int pos) {
    for (auto &kv : vals_) {
        Val &v = kv.second;
        if (v.released) continue;
        auto it = du_.find(kv.first);
        if (it == du_.end() || it->second.last > pos) continue;
        v.released = true;
        for (int r : v.regs) unhold(r);
        v.regs.clear();
        if (v.k == Val::T && v.x.alloc >= 0) lx_free(v.x.alloc);
    }
}

void Importer::before(Queue q, const Access &a) {
    if (!explicit_) hz_.before(q, a);
}

void Importer::after(int tag, Queue q, Access a) {
    if (!explicit_) hz_.after(tag, q, std::move(a));
}

int Importer::tag_for(const Op &op, Queue q) {
    if (!explicit_) return queue_tag(q);
    const Op *holder = &op;
    // The tag of the store that writes the op's result (our export's form), through the one user
    // of each value on the way (a row broadcast feeds the op whose result is stored), or the store
    // that is a value's first user (it is read again later from there: lx_store_of).
    for (int hop = 0; hop < 4 && !holder->attrs.count("spyre.tag") && !holder->results.empty(); hop++) {
        auto du = du_.find(holder->results[0]);
        if (du == du_.end() || du->second.users.empty() ||
            (du->second.users.size() != 1 && du->second.users[0]->name != "ktdp.store"))
            break;
        holder = du->second.users[0];
    }
    auto it = holder->attrs.find("spyre.tag");
    if (it == holder->attrs.end() || it->second.kind != Attr::Int || it->second.i < 0 || it->second.i >= kNumTags)
        throw_error("line ", op.line, ": ", op.name,
                    ": the function synchronises explicitly (spyre.sync) but this op has no spyre.tag in 0..15");
    return int(it->second.i);
}

void Importer::free_temps() {
    temps_.clear();
    sweep();
}

Scalar Importer::add(const Scalar &a, const Scalar &b, const Op &op, bool sub) {
    Scalar out;
    if (a.buffer >= 0 && b.buffer >= 0) {
        if (!sub) throw_error("line ", op.line, ": ", op.name, ": adds two HBM addresses");
        throw_error("line ", op.line, ": ", op.name, ": subtracts HBM addresses");
    }
    if (b.buffer >= 0 && sub) throw_error("line ", op.line, ": ", op.name, ": subtracts an HBM address");
    const Scalar &p = a.buffer >= 0 ? a : b;
    const Scalar &q = a.buffer >= 0 ? b : a;
    if (a.buffer >= 0 || b.buffer >= 0) {
        Scalar pa = p, qa = q;
        pa.buffer = -1;
        out = add(pa, qa, op, sub);
        out.buffer = p.buffer;
        return out;
    }
    if (a.known && b.known) {
        out.known = true;
        out.c = sub ? int64_t(uint64_t(a.c) - uint64_t(b.c)) : wrap_add(a.c, b.c);
        return out;
    }
    if (b.known && !a.nonzero) {
        int64_t c = sub ? int64_t(0 - uint64_t(b.c)) : b.c;
        if (c == 0) return a;
        if (a.lazy && std::llabs(c) < (int64_t(1) << 30)) {
            out = a;
            out.div_add = wrap_add(a.div_add, c);
            return out;
        }
        if (c >= INT32_MIN && c <= INT32_MAX) {
            Reg t;
            Reg ra = reg_of(a, op, &t);
            out = Scalar();
            out.r = new_reg(op);
            b_.addi(out.r, ra, int32_t(c));
            return out;
        }
    }
    if (a.known && !sub && !b.nonzero && a.c >= INT32_MIN && a.c <= INT32_MAX) return add(b, a, op, false);
    Reg ta, tb;
    Reg ra = reg_of(a, op, &ta), rb = reg_of(b, op, &tb);
    out = Scalar();
    out.r = new_reg(op);
    b_.op3(sub ? Opcode::SUB : Opcode::ADD, out.r, ra, rb);
    return out;
}

Scalar Importer::mul(const Scalar &a, const Scalar &b, const Op &op) {
    if (a.buffer >= 0 || b.buffer >= 0) throw_error("line ", op.line, ": ", op.name, ": multiplies an HBM address");
    Scalar out;
    if (a.known && b.known) {
        out.known = true;
        out.c = wrap_mul(a.c, b.c);
        return out;
    }
    const Scalar &v = a.known ? b : a;
    const Scalar &k = a.known ? a : b;
    if (k.known) {
        if (k.c == 0) {
            out.known = true;
            return out;
        }
        if (k.c == 1) return v;
        if (k.c >= INT32_MIN && k.c <= INT32_MAX) {
            Reg t;
            Reg rv = reg_of(v, op, &t);
            out.r = new_reg(op);
            b_.muli(out.r, rv, int32_t(k.c));
            return out;
        }
    }
    return binop(Opcode::MUL, a, b, op);
}

Scalar Importer::binop(Opcode oc, const Scalar &a, const Scalar &b, const Op &op) {
    if (a.buffer >= 0 || b.buffer >= 0)
        throw_error("line ", op.line, ": ", op.name, ": arithmetic on an HBM address other than + and -");
    Reg ta, tb;
    Reg ra = reg_of(a, op, &ta), rb = reg_of(b, op, &tb);
    Scalar out;
    out.r = new_reg(op);
    b_.op3(oc, out.r, ra, rb);
    return out;
}

int64_t Importer::fold(Opcode oc, int64_t x, int64_t y) {
    switch (oc) {
    case Opcode::DIV: return y == 0 ? 0 : y == -1 ? int64_t(0 - uint64_t(x)) : x / y;
    case Opcode::REM: return y == 0 || y == -1 ? 0 : x % y;
    case Opcode::MIN: return std::min(x, y);
    case Opcode::MAX: return std::max(x, y);
    case Opcode::CMPLT: return x < y;
    case Opcode::CMPEQ: return x == y;
    default: return 0;
    }
}

Scalar Importer::scalar_op(Opcode oc, const Scalar &a, const Scalar &b, const Op &op) {
    if (a.known && b.known && a.buffer < 0 && b.buffer < 0) {
        Scalar out;
        out.known = true;
        out.c = fold(oc, a.c, b.c);
        return out;
    }
    return binop(oc, a, b, op);
}

Scalar Importer::eval(const IExpr &e, const Op &op, int depth) {
    if (depth > 64) throw_error("line ", op.line, ": expression nested too deeply");
    Scalar out;
    switch (e.kind) {
    case IExpr::Const:
        out.known = true;
        out.c = e.c;
        return out;
    case IExpr::Value: return scalar(e.name, op);
    case IExpr::Neg: {
        Scalar z;
        z.known = true;
        return add(z, eval(e.args[0], op, depth + 1), op, true);
    }
    case IExpr::Add: return add(eval(e.args[0], op, depth + 1), eval(e.args[1], op, depth + 1), op);
    case IExpr::Mul: return mul(eval(e.args[0], op, depth + 1), eval(e.args[1], op, depth + 1), op);
    case IExpr::FloorDiv:
    case IExpr::CeilDiv:
    case IExpr::Mod: {
        Scalar a = eval(e.args[0], op, depth + 1), b = eval(e.args[1], op, depth + 1);
        if (!b.known || b.c <= 0)
            throw_error("line ", op.line, ": ", op.name, ": floordiv, ceildiv and mod need a positive constant");
        if (e.kind == IExpr::CeilDiv) {
            Scalar k;
            k.known = true;
            k.c = b.c - 1;
            a = add(a, k, op);
        }
        // Index values in kernels are non-negative, where floor and truncation agree.
        return scalar_op(e.kind == IExpr::Mod ? Opcode::REM : Opcode::DIV, a, b, op);
    }
    default: throw_error("line ", op.line, ": ", op.name, ": a dimension or symbol outside an affine map");
    }
}

Scalar Importer::apply_map(const IExpr &e, const std::vector<Scalar> &dims, const std::vector<Scalar> &syms,
    const Op &op, int depth) {
    if (depth > 64) throw_error("line ", op.line, ": expression nested too deeply");
    if (e.kind == IExpr::Dim || e.kind == IExpr::Sym) {
        const std::vector<Scalar> &v = e.kind == IExpr::Dim ? dims : syms;
        if (e.c < 0 || size_t(e.c) >= v.size()) throw_error("line ", op.line, ": ", op.name, ": operand missing");
        return v[size_t(e.c)];
    }
    if (e.kind == IExpr::Const || e.kind == IExpr::Value) return eval(e, op);
    std::vector<Scalar> a;
    for (const IExpr &x : e.args) a.push_back(apply_map(x, dims, syms, op, depth + 1));
    Scalar z;
    z.known = true;
    switch (e.kind) {
    case IExpr::Neg: return add(z, a[0], op, true);
    case IExpr::Add: return add(a[0], a[1], op);
    case IExpr::Mul: return mul(a[0], a[1], op);
    default: {
        if (!a[1].known || a[1].c <= 0)
            throw_error("line ", op.line, ": ", op.name, ": floordiv, ceildiv and mod need a positive constant");
        if (e.kind == IExpr::CeilDiv) {
            Scalar k;
            k.known = true;
            k.c = a[1].c - 1;
            a[0] = add(a[0], k, op);
        }
        return scalar_op(e.kind == IExpr::Mod ? Opcode::REM : Opcode::DIV, a[0], a[1], op);
    }
    }
}

void Importer::lower_region(const Region &r, bool top) {
    for (const Op &op : r.ops) {
        if (skip_.count(&op)) {
            release_dead(info_.at(&op).end);
            continue;
        }
        lower(op);
        free_temps();
        release_dead(info_.at(&op).end);
    }
    (void)top;
}

void Importer::lower(const Op &op) {
    const std::string &n = op.name;
    auto wait_attr = op.attrs.find("spyre.wait");
    if (n == "spyre.wait") {
        auto t = op.attrs.find("tags");
        if (t == op.attrs.end() || t->second.kind != Attr::Int || t->second.i <= 0 || t->second.i > 0xffff)
            throw_error("line ", op.line, ": spyre.wait needs tags = a non-zero 16-bit mask");
        b_.wait(uint32_t(t->second.i));
        return;
    }
    (void)wait_attr;
    if (n == "arith.constant") return constant(op);
    if (n == "ktdp.get_compute_tile_id") return tile_id(op);
    if (n == "ktdp.construct_memory_view") return memory_view(op);
    if (n == "ktdp.construct_access_tile") return access_tile(op);
    if (n == "ktdp.construct_indirect_access_tile") return indirect_access_tile(op);
    if (n == "ktdp.load") return load(op);
    if (n == "ktdp.store") return store(op);
    if (n == "scf.for") return for_loop(op);
    if (n == "scf.if") return if_op(op);
    if (n == "func.return" || n == "return") {
        if (!op.operands.empty()) throw_error("line ", op.line, ": ", n, ": a kernel returns no values");
        return;
    }
    if (n == "scf.yield") throw_error("line ", op.line, ": scf.yield outside scf.for / scf.if");
    if (n == "affine.apply") return affine_apply(op);
    if (n == "tensor.empty") {
        Val v;
        v.k = Val::T;
        v.x.kind = Tens::Empty;
        v.x.t = dtype_of(op.result_types[0], op);
        v.x.shape = op.result_types[0].shape;
        return define(op, 0, v);
    }
    if (n == "tensor.splat" || n == "linalg.fill") return splat(op);
    if (n == "tensor.extract") return extract(op);
    if (n == "tensor.collapse_shape" || n == "tensor.expand_shape" || n == "tensor.reshape") return reshape(op);
    if (n == "linalg.broadcast") return broadcast(op);
    if (n == "linalg.reduce") return reduce(op);
    if (n == "linalg.matmul") return matmul(op);
    if (n == "linalg.transpose") return transpose(op);
    if (n == "ktdp.reduce") return ring_reduce(op);
    if (n == "ktdp.inter_tile_produce") return inter_tile_produce(op);
    if (n == "ktdp.construct_distributed_memory_view") {
        auto m = multi_dist_of_.find(&op);
        if (m != multi_dist_of_.end()) return multi_dist_view(op, m->second);
        return memory_view(dist_views_.at(&op));
    }
    if (n == "ktdp.inter_tile_reduce") return inter_tile_reduce(op);
    if (n == "spyre.ring_send" || n == "spyre.ring_recv") return ring_transfer(op);
    if (n == "spyre.shift") return shift(op);
    if (n == "tensor.extract_slice" || n == "tensor.insert_slice") return slice(op);
    if (n == "spyre.to_fp8" || n == "spyre.from_fp8") return fp8_convert(op);
    if (n == "spyre.lane_select") return lane_select(op);
    if (n == "spyre.index_select") return index_select(op);
    if (n == "arith.select" && op.attrs.count("spyre.index_select")) return index_select_ops(op);
    if (n == "spyre.barrier") {
        if (!explicit_) drain();
        b_.barrier();
        return;
    }
    if (n == "tensor.generate") return generate(op);
    if ((n == "arith.cmpf" || n == "arith.cmpi" || n == "arith.select") && compares_in_lx(op))
        return n == "arith.select" ? mask_select(op) : compare(op);
    if (op.result_types.size() == 1 && op.result_types[0].kind == Type::Tensor) return tensor_op(op);
    if (element_arith(op)) return tensor_op(op);
    if (element_to_register(op)) return;
    if (n.rfind("arith.", 0) == 0) return scalar_arith(op);
    throw_error("line ", op.line, ": unsupported operation '", n, "'");
}

void Importer::constant(const Op &op) {
    const Type &t = op.result_types[0];
    Val v;
    if (t.kind == Type::Tensor && op.value.kind == Attr::Array) {
        // A dense constant of several values: only the shape operand of tensor.reshape is one.
        if (t.shape.size() != 1 || (t.elem != Type::Index && t.elem != Type::Int))
            throw_error("line ", op.line, ": arith.constant: a dense constant of several values is only supported "
                        "as a 1-D index or integer shape (for tensor.reshape), not ", t.text());
        std::vector<int64_t> &shape = shape_consts_[op.results[0]];
        shape.clear();
        for (const Attr &a : op.value.items) {
            if (a.kind != Attr::Int) throw_error("line ", op.line, ": arith.constant: shape values must be integers");
            shape.push_back(a.i);
        }
        if (int64_t(shape.size()) != t.shape[0])
            throw_error("line ", op.line, ": arith.constant: ", shape.size(), " values for ", t.text());
        v.k = Val::None;
        return define(op, 0, v);
    }
    if (t.kind == Type::Tensor) {
        v.k = Val::T;
        v.x.kind = Tens::Splat;
        v.x.t = dtype_of(t, op);
        v.x.shape = t.shape;
        v.x.splat = const_value(op.value, v.x.t, op);
        return define(op, 0, v);
    }
    v.k = Val::S;
    if (t.kind == Type::Float) {
        if (t.bits != 16 && t.bits != 32)
            throw_error("line ", op.line, ": arith.constant: type ", t.text(), " is not supported");
        v.s.is_float = true;
        v.s.known = true;
        v.s.f = const_value(op.value, t.bits == 16 ? DType::F16 : DType::F32, op);
    } else {
        if (op.value.kind != Attr::Int) throw_error("line ", op.line, ": arith.constant: expected an integer");
        v.s.known = true;
        v.s.c = op.value.i;
    }
    define(op, 0, v);
}

double Importer::const_value(const Attr &a, DType t, const Op &op) {
    if (a.kind == Attr::Int && a.hex && t != DType::I32) {
        if (t == DType::F16) {
            if (a.i < 0 || a.i > 0xffff) throw_error("line ", op.line, ": f16 bit pattern out of range");
            return half_to_float(uint16_t(a.i));
        }
        if (a.i < 0 || a.i > 0xffffffffLL) throw_error("line ", op.line, ": f32 bit pattern out of range");
        uint32_t bits = uint32_t(a.i);
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    double d = a.kind == Attr::Int ? double(a.i) : a.f;
    if (t == DType::F16) return half_to_float(float_to_half(float(d)));
    if (t == DType::F32) return double(float(d));
    return double(int64_t(d));
}

void Importer::tile_id(const Op &op) {
    size_t n = op.results.size();
    std::vector<int64_t> grid = grid_.empty() ? std::vector<int64_t>{num_cores_} : grid_;
    // Fewer ids than grid dimensions read the leading ones, as ktir-cpu does (`grid = [32, 1]` with
    // one id: the core's coordinate along dimension 0).
    if (n == 0 || n > grid.size())
        throw_error("line ", op.line, ": ktdp.get_compute_tile_id returns ", n, " ids but the grid has ",
                    grid.size(), " dimensions");
    Reg core = new_reg(op);
    b_.core_id(core);
    // Dimension 0 varies fastest, as ktir-cpu numbers tiles (`GridExecutor._linear_to_grid`: the
    // core of tile (x, y, z) is x + nx * (y + ny * z)); the tile sets of inter-tile ops name tiles so.
    // id_i = (core / prod(grid[0..i-1])) % grid[i].
    int64_t inner = 1;
    std::vector<int64_t> div(grid.size());
    for (size_t i = 0; i < grid.size(); i++) {
        div[i] = inner;
        inner *= grid[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (div[i] == 1 && grid[i] == inner) {  // the only non-trivial dimension: the core id itself
            define(op, i, reg_val(core));
            continue;
        }
        Reg r = new_reg(op), k = new_reg(op);
        b_.li(k, div[i]);
        b_.op3(Opcode::DIV, r, core, k);
        if (i + 1 < grid.size()) {  // the last dimension needs no wrap: core < prod(grid)
            b_.li(k, grid[i]);
            b_.op3(Opcode::REM, r, r, k);
        }
        define(op, i, reg_val(r));
    }
}

void Importer::affine_apply(const Op &op) {
    const AffineMap &m = *op.attrs.at("map").map;
    if (m.results.size() != 1) throw_error("line ", op.line, ": affine.apply: the map must have one result");
    if (op.operands.size() != size_t(m.dims + m.syms))
        throw_error("line ", op.line, ": affine.apply: the map takes ", m.dims + m.syms, " operands, not ",
                    op.operands.size());
    std::vector<Scalar> d, s;
    for (int i = 0; i < m.dims; i++) d.push_back(scalar(op.operands[size_t(i)], op));
    for (int i = 0; i < m.syms; i++) s.push_back(scalar(op.operands[size_t(m.dims + i)], op));
    define(op, 0, scalar_val(apply_map(m.results[0], d, s, op)));
}

void Importer::scalar_arith(const Op &op) {
    const std::string &n = op.name;
    if (op.results.size() != 1) throw_error("line ", op.line, ": ", n, ": expected one result");
    std::vector<Scalar> a;
    for (const std::string &o : op.operands) a.push_back(scalar(o, op));
    auto need = [&](size_t k) {
        if (a.size() != k) throw_error("line ", op.line, ": ", n, ": expected ", k, " operands");
    };
    bool is_float = !a.empty() && a[0].is_float;
    if (is_float || n == "arith.addf" || n == "arith.mulf" || n == "arith.subf" || n == "arith.divf" ||
        n == "arith.negf" || n == "arith.extf" || n == "arith.truncf" || n == "arith.sitofp" ||
        n == "arith.uitofp" || n == "arith.maximumf" || n == "arith.minimumf")
        return float_arith(op, a);
    if (n == "arith.addi") {
        need(2);
        return define(op, 0, scalar_val(add(a[0], a[1], op)));
    }
    if (n == "arith.subi") {
        need(2);
        return define(op, 0, scalar_val(add(a[0], a[1], op, true)));
    }
    if (n == "arith.muli") {
        need(2);
        return define(op, 0, scalar_val(mul(a[0], a[1], op)));
    }
    if (n == "arith.divsi" || n == "arith.divui" || n == "arith.floordivsi" || n == "arith.ceildivsi" ||
        n == "arith.ceildivui") {
        need(2);
        Scalar x = a[0];
        if (n.find("ceil") != std::string::npos) {
            if (!a[1].known || a[1].c <= 0)
                throw_error("line ", op.line, ": ", n, ": needs a positive constant divisor");
            Scalar k;
            k.known = true;
            k.c = a[1].c - 1;
            x = add(x, k, op);
        }
        if (!a[0].known && a[1].known && a[1].c > 0 && a[1].c <= 8 && a[0].buffer < 0 &&
            n.find("ceil") == std::string::npos) {
            // Kept as R[x] / k until a register needs the value: an element address whose byte
            // address is R[x] (see lx_addr).
            Scalar out;
            Reg t;
            out.div_src = reg_of(a[0], op, &t);
            out.div_k = int(a[1].c);
            out.lazy = true;
            return define(op, 0, scalar_val(out));
        }
        return define(op, 0, scalar_val(scalar_op(Opcode::DIV, x, a[1], op)));
    }
    if (n == "arith.remsi" || n == "arith.remui") {
        need(2);
        return define(op, 0, scalar_val(scalar_op(Opcode::REM, a[0], a[1], op)));
    }
    if (n == "arith.minsi" || n == "arith.minui" || n == "arith.maxsi" || n == "arith.maxui") {
        need(2);
        return define(op, 0,
                      scalar_val(scalar_op(n.find("min") != std::string::npos ? Opcode::MIN : Opcode::MAX, a[0],
                                           a[1], op)));
    }
    if (n == "arith.shli" || n == "arith.shrsi" || n == "arith.shrui") {
        need(2);
        if (!a[1].known || a[1].c < 0 || a[1].c > 63)
            throw_error("line ", op.line, ": ", n, ": the shift must be a constant in 0..63");
        if (a[0].known) {
            Scalar o;
            o.known = true;
            o.c = n == "arith.shli" ? int64_t(uint64_t(a[0].c) << a[1].c) : a[0].c >> a[1].c;
            return define(op, 0, scalar_val(o));
        }
        Reg t;
        Reg r = reg_of(a[0], op, &t);
        Reg d = new_reg(op);
        Instr in;
        in.op = n == "arith.shli" ? Opcode::SHLI : Opcode::SHRI;
        in.a[0] = d.id;
        in.a[1] = r.id;
        in.a[2] = int32_t(a[1].c);
        b_.emit(in);
        return define(op, 0, reg_val(d));
    }
    if (n == "arith.cmpi") {
        need(2);
        const std::string &p = op.predicate;
        Scalar x = a[0], y = a[1];
        Scalar out;
        if (p == "eq" || p == "ne") {
            Scalar z;
            z.known = true;
            if (p == "ne" && y.known && y.c == 0 && !x.known && x.buffer < 0) {
                Reg t;
                out = Scalar();
                out.r = reg_of(x, op, &t);  // x != 0: the register itself, normalised only if used
                out.nonzero = true;          // as a number
                return define(op, 0, scalar_val(out));
            }
            out = scalar_op(Opcode::CMPEQ, x, y, op);
            if (p == "ne") out = not01(out, op);
        } else if (p == "slt" || p == "ult") {
            out = scalar_op(Opcode::CMPLT, x, y, op);
        } else if (p == "sgt" || p == "ugt") {
            out = scalar_op(Opcode::CMPLT, y, x, op);
        } else if (p == "sle" || p == "ule") {
            out = not01(scalar_op(Opcode::CMPLT, y, x, op), op);
        } else if (p == "sge" || p == "uge") {
            out = not01(scalar_op(Opcode::CMPLT, x, y, op), op);
        } else {
            throw_error("line ", op.line, ": arith.cmpi: unknown predicate '", p, "'");
        }
        return define(op, 0, scalar_val(out));
    }
    if (n == "arith.select") {
        need(3);
        if (a[0].known) return define(op, 0, scalar_val(a[0].c ? a[1] : a[2]));
        Reg t0, t1, t2;
        Reg c = a[0].nonzero ? a[0].r : reg_of(a[0], op, &t0);
        Reg x = reg_of(a[1], op, &t1), y = reg_of(a[2], op, &t2);
        Reg d = new_reg(op);
        Instr in;
        in.op = Opcode::SEL;
        in.a[0] = d.id;
        in.a[1] = c.id;
        in.a[2] = x.id;
        in.a[3] = y.id;
        b_.emit(in);
        return define(op, 0, reg_val(d));
    }
    if (n == "arith.index_cast" || n == "arith.index_castui" || n == "arith.extsi" || n == "arith.extui" ||
        n == "arith.trunci") {
        need(1);
        Scalar s = a[0];
        if (s.nonzero && n != "arith.trunci") {
            Reg t;
            Reg r = reg_of(s, op, &t);
            return define(op, 0, reg_val(r));
        }
        return define(op, 0, scalar_val(s));
    }
    throw_error("line ", op.line, ": unsupported operation '", n, "' on index or integer values");
}

void Importer::float_arith(const Op &op, const std::vector<Scalar> &a) {
    const std::string &n = op.name;
    const bool from_int = n == "arith.sitofp" || n == "arith.uitofp";
    for (const Scalar &s : a) {
        if (!s.known)
            throw_error("line ", op.line, ": ", n, ": a float scalar computed from run-time values is not supported "
                        "(the device has no scalar float unit); its inputs must be constants or --arg values");
        if (s.is_float == from_int)
            throw_error("line ", op.line, ": ", n,
                        from_int ? ": expected an integer operand" : ": mixes float and integer operands");
    }
    double r;
    if (from_int && a.size() == 1) r = double(a[0].c);  // uitofp of a negative i64 is not a KTIR case
    else if (n == "arith.addf" && a.size() == 2) r = a[0].f + a[1].f;
    else if (n == "arith.subf" && a.size() == 2) r = a[0].f - a[1].f;
    else if (n == "arith.mulf" && a.size() == 2) r = a[0].f * a[1].f;
    else if (n == "arith.divf" && a.size() == 2) r = a[0].f / a[1].f;
    else if (n == "arith.negf" && a.size() == 1) r = -a[0].f;
    else if (n == "arith.maximumf" && a.size() == 2) r = a[0].f > a[1].f ? a[0].f : a[1].f;  // as VMAX
    else if (n == "arith.minimumf" && a.size() == 2) r = a[0].f < a[1].f ? a[0].f : a[1].f;
    else if ((n == "arith.extf" || n == "arith.truncf") && a.size() == 1) r = a[0].f;
    else throw_error("line ", op.line, ": unsupported operation '", n, "' on float scalars");
    Scalar o;
    o.is_float = o.known = true;
    const Type &t = op.result_types[0];
    o.f = t.bits == 16 ? half_to_float(float_to_half(float(r))) : double(float(r));
    define(op, 0, scalar_val(o));
}

const Op *Importer::terminator(const Region &r) const {
    return r.ops.empty() ? nullptr : &r.ops.back();
}

const Op *Importer::lower_body(const Region &r) {
    const Op *term = terminator(r);
    for (const Op &o : r.ops) {
        if (&o == term && o.name == "scf.yield") break;
        if (!skip_.count(&o)) {
            lower(o);
            free_temps();
        }
        release_dead(info_.at(&o).end);
    }
    return term;
}

void Importer::for_loop(const Op &op) {
    Scalar lb = scalar(op.operands[0], op), ub = scalar(op.operands[1], op), step = scalar(op.operands[2], op);
    if (!step.known || step.c <= 0)
        throw_error("line ", op.line, ": scf.for: the step must be a positive constant");
    if (lb.buffer >= 0 || ub.buffer >= 0) throw_error("line ", op.line, ": scf.for: bounds are HBM addresses");
    const Region &body = op.regions[0];
    size_t n_iter = op.operands.size() - 3;
    if (body.args.size() != n_iter + 1) throw_error("line ", op.line, ": scf.for: iter_args mismatch");
    if (!explicit_) drain();
    // Iteration count.
    Scalar count;
    if (lb.known && ub.known) {
        count.known = true;
        count.c = ub.c > lb.c ? (ub.c - lb.c + step.c - 1) / step.c : 0;
        if (count.c > INT32_MAX) throw_error("line ", op.line, ": scf.for: more than 2^31 iterations");
    } else {
        Scalar k;
        k.known = true;
        k.c = step.c - 1;
        count = add(add(ub, lb, op, true), k, op);
        if (step.c != 1) {
            Scalar s = step;
            count = scalar_op(Opcode::DIV, count, s, op);
        }
        Scalar z;
        z.known = true;
        count = scalar_op(Opcode::MAX, count, z, op);
    }
    // Loop-carried values: registers for scalars, fixed LX places for tensors.
    std::vector<Val> carried(n_iter);
    for (size_t i = 0; i < n_iter; i++) {
        Val &init = val(op.operands[3 + i], op);
        const Type &ty = body.arg_types[i + 1];
        if (ty.scalar()) {
            if (init.k != Val::S || init.s.buffer >= 0 || init.s.is_float)
                throw_error("line ", op.line, ": scf.for: iter_arg ", i, " must be an index or integer value");
            Reg r = new_reg(op), t;
            Reg s = reg_of(init.s, op, &t);
            b_.mov(r, s);
            refs_[r.id]++;  // the loop's own hold, handed to the result after the loop
            carried[i] = reg_val(r);
        } else if (ty.kind == Type::Tensor) {
            if (init.k != Val::T) throw_error("line ", op.line, ": scf.for: iter_arg ", i, " must be a tensor");
            Tens x = init.x;
            Tens place;
            if (x.kind == Tens::InLx && du_[op.operands[3 + i]].last <= info_.at(&op).index && x.alloc >= 0) {
                place = x;
                vals_[op.operands[3 + i]].x.alloc = -1;
            } else {
                place = new_tensor(x.t, x.shape, op);
                if (x.kind != Tens::Empty) materialize(x, op, &place);
            }
            if (!explicit_) drain();
            carried[i].k = Val::T;
            carried[i].x = place;
        } else {
            throw_error("line ", op.line, ": scf.for: iter_arg ", i, " of type ", ty.text(), " is not supported");
        }
    }
    Reg iv = new_reg(op), cnt_t;
    Reg cnt = count.known ? kZero : reg_of(count, op, &cnt_t);
    const std::map<int, std::string> holders = register_holders();
    const size_t loop_pc = b_.size();
    b_.loop(iv, count.known ? int32_t(count.c) : 0, cnt);
    // The induction variable: lb + iv * step.
    Scalar ivs;
    ivs.r = iv;
    Scalar k;
    k.known = true;
    k.c = step.c;
    Scalar value = add(lb, mul(ivs, k, op), op);
    Val ivv = scalar_val(value);
    vals_[body.args[0]] = ivv;
    hold_scalar(vals_[body.args[0]]);
    for (size_t i = 0; i < n_iter; i++) {
        Val cv = carried[i];
        cv.regs.clear();
        if (cv.k == Val::S) hold_scalar(cv);
        else {
            cv.x.alloc = -1;
            hold_tensor(cv);
        }
        vals_[body.args[i + 1]] = cv;
    }
    const Op *term = lower_body(body);
    if (term && term->name == "scf.yield") {
        if (term->operands.size() != n_iter)
            throw_error("line ", term->line, ": scf.yield: yields ", term->operands.size(), " values, the loop carries ",
                        n_iter);
        yield_into(*term, carried);
    } else if (n_iter) {
        throw_error("line ", op.line, ": scf.for: a loop with iter_args must end in scf.yield");
    }
    if (!explicit_) drain();
    b_.end_loop();
    check_back_edge(op, loop_pc, carried, holders);
    for (size_t i = 0; i < n_iter; i++) {
        Val r = carried[i];
        r.regs.clear();
        if (r.k == Val::S) {
            hold_scalar(r);
            refs_[r.s.r.id]--;  // the register was allocated for the result: hand it over
        } else {
            hold_tensor(r);
        }
        vals_[op.results[i]] = r;
    }
}

std::map<int, std::string> Importer::register_holders() const {
    std::map<int, std::string> out;
    for (const auto &kv : vals_) {
        if (kv.second.released) continue;
        for (int r : kv.second.regs) {
            std::string &names = out[r];
            names += (names.empty() ? "%" : ", %") + kv.first;
        }
    }
    return out;
}

void Importer::check_back_edge(const Op &op, size_t loop_pc, const std::vector<Val> &carried,
                               const std::map<int, std::string> &holders) const {
    std::set<int> carried_regs;
    for (const Val &c : carried)
        if (c.k == Val::S) carried_regs.insert(c.s.r.id);
    for (const LoopHeadWrite &w : loop_head_writes(b_.code(), loop_pc)) {
        if (carried_regs.count(w.reg)) continue;
        auto h = holders.find(w.reg);
        throw_internal("line ", op.line, ": scf.for: internal error: register r", w.reg, " (",
                    h == holders.end() ? std::string("no value") : h->second,
                    " on entry) is read in every iteration, but instruction ", w.pc, " (",
                    op_info(b_.code()[w.pc].op).name, ") inside the loop overwrites it");
    }
}

void Importer::yield_into(const Op &y, const std::vector<Val> &carried) {
    std::vector<std::pair<Reg, Reg>> moves;
    for (size_t i = 0; i < carried.size(); i++) {
        Val &v = val(y.operands[i], y);
        if (carried[i].k == Val::S) {
            if (v.k != Val::S) throw_error("line ", y.line, ": scf.yield: value ", i, " must be a scalar");
            Reg t;
            Reg s = reg_of(v.s, y, &t);
            if (s.id != carried[i].s.r.id) {
                Reg tmp = new_reg(y);
                b_.mov(tmp, s);
                moves.push_back({carried[i].s.r, tmp});
            }
        } else {
            if (v.k != Val::T) throw_error("line ", y.line, ": scf.yield: value ", i, " must be a tensor");
            const Tens &x = v.x, &place = carried[i].x;
            if (x.kind == Tens::InLx && x.at.reg.id == place.at.reg.id && x.at.off == place.at.off) continue;
            materialize(x, y, &place);
        }
    }
    for (auto &m : moves) b_.mov(m.first, m.second);
}

void Importer::if_op(const Op &op) {
    Scalar c = scalar(op.operands[0], op);
    if (c.is_float || c.buffer >= 0) throw_error("line ", op.line, ": scf.if: the condition must be an i1 value");
    size_t nres = op.results.size();
    for (const Type &t : op.result_types)
        if (!t.scalar() || t.kind == Type::Float)
            throw_error("line ", op.line, ": scf.if: only index and integer results are supported");
    if (nres && op.regions.size() != 2) throw_error("line ", op.line, ": scf.if with results needs an else");
    std::vector<Val> out(nres);
    for (size_t i = 0; i < nres; i++) {
        out[i] = reg_val(new_reg(op));
        refs_[out[i].s.r.id]++;  // held across the branches, handed to the result
    }
    auto branch = [&](const Region &r) {
        const Op *term = lower_body(r);
        if (nres) {
            if (!term || term->name != "scf.yield" || term->operands.size() != nres)
                throw_error("line ", op.line, ": scf.if: each branch must yield ", nres, " values");
            yield_into(*term, out);
        }
        if (!explicit_) drain();
    };
    if (c.known) {
        if (c.c) branch(op.regions[0]);
        else if (op.regions.size() > 1) branch(op.regions[1]);
    } else {
        if (!explicit_) drain();
        Reg t;
        Reg cr = c.nonzero ? c.r : reg_of(c, op, &t);
        b_.if_(cr);
        branch(op.regions[0]);
        if (op.regions.size() > 1) {
            b_.else_();
            branch(op.regions[1]);
        }
        b_.end_if();
    }
    for (size_t i = 0; i < nres; i++) {
        Val r = out[i];
        hold_scalar(r);
        refs_[r.s.r.id]--;
        vals_[op.results[i]] = r;
    }
}

}  // namespace lowering


DeviceProgram import_ktir(const Module &module, const ImportOptions &options) {
    const Function *f = nullptr;
    std::string names;
    for (const Function &fn : module.funcs) {
        names += (names.empty() ? "" : ", ") + fn.name;
        if (options.func.empty() || fn.name == options.func) {
            if (f && options.func.empty())
                throw_error("the module has several functions (", names, "...); choose one with --func");
            if (!f) f = &fn;
        }
    }
    if (!f) {
        if (module.funcs.empty()) throw_error("the module has no function");
        throw_error("no function @", options.func, " (functions: ", names, ")");
    }
    options.machine.validate();
    lowering::Importer imp(*f, options);
    return imp.run();
}

DeviceProgram import_ktir_file(const std::string &path, const ImportOptions &options) {
    Module m = read_ktir_file(path);
    try {
        return import_ktir(m, options);
    } catch (const Error &e) {
        throw e.reworded(path + ": " + e.what());
    }
}

}  // namespace spyre::ktir
