#include "ktir_fuzz_kernel.h"

#include <cmath>
#include <cstdlib>
#include <random>
#include <set>
#include <sstream>

#include "device/half.h"

namespace spyre::ktirfuzz {

int Kernel::values() const {
    int n = 0;
    for (const Stmt &s : body) n += s.kind != Stmt::Store;
    return n;
}

Kernel random_kernel(uint32_t seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return int(rng() % uint32_t(n)); };
    Kernel k;
    k.rows = 2 << pick(3);  // 2, 4, 8
    do k.grid = 1 << pick(3);
    while (k.rows % k.grid);
    const int rpt = k.rows / k.grid;
    k.buffers = 2 + pick(2);
    k.cols = kTile * (1 + pick(2));
    k.form = Kernel::Form(pick(3));
    if (k.form == Kernel::Nested && rpt % 2) k.form = Kernel::Plain;
    int values = 0, stores = 0;
    const int n = 3 + pick(6);
    for (int i = 0; i < n || stores == 0; i++) {
        Stmt s;
        int what = values == 0 ? 0 : pick(5);
        if (i >= n) what = 2;  // end with a store
        s.col = kTile * pick(k.cols / kTile);
        if (what == 0) {
            s.kind = Stmt::Load;
            s.buffer = pick(k.buffers);
            s.mirror = pick(3) == 0;
            values++;
        } else if (what == 3) {
            s.kind = pick(2) ? Stmt::Unary : Stmt::Const;
            s.op = pick(s.kind == Stmt::Unary ? kNumUnaryOps : kNumConsts);
            s.a = pick(values);
            values++;
        } else if (what == 1 || what == 4) {
            s.kind = Stmt::Bin;
            s.op = pick(kNumBinOps);
            s.a = pick(values);
            s.b = pick(values);
            values++;
        } else {
            s.kind = Stmt::Store;
            s.buffer = pick(k.buffers);
            s.mirror = pick(3) == 0;
            s.a = pick(values);
            stores++;
        }
        k.body.push_back(s);
    }
    if (k.form != Kernel::Nested && pick(3) == 0) k.sum_of = pick(values);
    const int spelling = pick(16);
    k.short_types = spelling & 1;
    k.global_space = spelling & 2;
    k.locations = spelling & 4;
    k.grid_2d = spelling & 8;
    if (k.sum_of >= 0 && pick(2)) k.all_reduce = (int[]){0, 3, 4}[pick(3)];  // drawn last: earlier cases keep their draws
    if (k.all_reduce >= 0) {
        do k.group = 1 << pick(3);
        while (k.grid % k.group);
        k.strided = pick(2);
    }
    return k;
}

std::string ktir_text(const Kernel &k) {
    const int rpt = k.rows / k.grid;
    const std::string row_t = "memref<" + std::to_string(k.rows) + "x" + std::to_string(k.cols) + "xf16>";
    const std::string tile_t = "!ktdp.access_tile<1x64xindex>", tens_t = "tensor<1x64xf16>";
    const std::string ls_tile_t = k.short_types ? "<1x64xindex>" : tile_t;  // in ktdp.load / ktdp.store
    const char *hbm = k.global_space ? "{memory_space = #ktdp.memory_space<global>}"
                                     : "{memory_space = #ktdp.spyre_memory_space<HBM>}";
    const bool sum = k.sum_of >= 0;
    std::ostringstream o;
    o << "module {\n  func.func @fuzz(";
    for (int b = 0; b < k.buffers; b++) o << (b ? ", " : "") << "%b" << b << "_ptr: index";
    if (sum) o << ", %acc_ptr: index";
    o << ") attributes {grid = [" << k.grid << (k.grid_2d ? ", 1" : "") << "]} {\n";
    o << "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n"
      << "    %c64 = arith.constant 64 : index\n"
      << "    %c2 = arith.constant 2 : index\n    %rpt = arith.constant " << rpt << " : index\n"
      << "    %rptm1 = arith.constant " << rpt - 1 << " : index\n"
      << "    %core = ktdp.get_compute_tile_id : index\n    %base = arith.muli %core, %rpt : index\n"
      << "    %end = arith.addi %base, %rpt : index\n    %base2 = arith.addi %base, %base : index\n"
      << "    %mirror = arith.addi %base2, %rptm1 : index\n";
    for (int b = 0; b < k.buffers; b++)
        o << "    %v" << b << " = ktdp.construct_memory_view %b" << b << "_ptr, sizes: [" << k.rows << ", " << k.cols
          << "], strides: [" << k.cols << ", 1] " << hbm << " : " << row_t << "\n";
    if (sum) {
        o << "    %vacc = ktdp.construct_memory_view %acc_ptr, sizes: [" << k.grid << ", 64], strides: [64, 1] " << hbm
          << " : memref<" << k.grid << "x64xf16>\n";
        o << "    %zero = arith.constant dense<0.0> : " << tens_t << "\n";
    }
    std::string ind = "      ";
    switch (k.form) {
    case Kernel::Plain:
        o << "    " << (sum ? "%sum = " : "") << "scf.for %r = %base to %end step %c1 "
          << (sum ? "iter_args(%acc = %zero) -> (" + tens_t + ") " : "") << "{\n";
        break;
    case Kernel::Nested:
        o << "    scf.for %i = %c0 to %rpt step %c2 {\n      %first = arith.addi %base, %i : index\n"
          << "      %last = arith.addi %first, %c2 : index\n      scf.for %r = %first to %last step %c1 {\n";
        ind = "        ";
        break;
    case Kernel::IndexIterArg:
        o << "    %rend" << (sum ? ", %sum" : "") << " = scf.for %k = %c0 to %rpt step %c1 iter_args(%r = %base"
          << (sum ? ", %acc = %zero" : "") << ") -> (index" << (sum ? ", " + tens_t : "") << ") {\n";
        break;
    }
    o << ind << "%m = arith.subi %mirror, %r : index\n";
    int v = 0, t = 0;
    for (const Stmt &s : k.body) {
        std::string row = s.mirror ? "%m" : "%r", col = s.col ? "%c64" : "%c0";
        if (s.kind == Stmt::Const) {
            o << ind << "%x" << v++ << " = arith.constant dense<" << kConsts[s.op] << "> : " << tens_t << "\n";
        } else if (s.kind == Stmt::Unary) {
            o << ind << "%x" << v++ << " = " << kUnaryOps[s.op] << " %x" << s.a << " : " << tens_t << "\n";
        } else if (s.kind == Stmt::Load) {
            o << ind << "%t" << t << " = ktdp.construct_access_tile %v" << s.buffer << "[" << row << ", " << col << "] : " << row_t
              << " -> " << tile_t << "\n";
            o << ind << "%x" << v++ << " = ktdp.load %t" << t++ << " : " << ls_tile_t << " -> " << tens_t << "\n";
        } else if (s.kind == Stmt::Bin) {
            o << ind << "%x" << v++ << " = " << kBinOps[s.op] << " %x" << s.a << ", %x" << s.b << " : " << tens_t << "\n";
        } else {
            o << ind << "%t" << t << " = ktdp.construct_access_tile %v" << s.buffer << "[" << row << ", " << col << "] : " << row_t
              << " -> " << tile_t << "\n";
            o << ind << "ktdp.store %x" << s.a << ", %t" << t++ << " : " << tens_t << ", " << ls_tile_t << "\n";
        }
    }
    if (sum) o << ind << "%acc2 = arith.addf %acc, %x" << k.sum_of << " : " << tens_t << "\n";
    switch (k.form) {
    case Kernel::Plain:
        if (sum) o << ind << "scf.yield %acc2 : " << tens_t << "\n";
        o << "    }\n";
        break;
    case Kernel::Nested: o << "      }\n    }\n"; break;
    case Kernel::IndexIterArg:
        o << ind << "%rn = arith.addi %r, %c1 : index\n";
        o << ind << "scf.yield %rn" << (sum ? ", %acc2" : "") << " : index" << (sum ? ", " + tens_t : "") << "\n    }\n";
        break;
    }
    std::string stored = "%sum";
    if (sum && k.all_reduce >= 0) {
        // The future's type spelt out, or shortened as ktir-mlir-frontend prints it.
        // Groups of adjacent tiles (i in [S g, S g + S - 1]) or of every G-th tile (i = g mod G).
        const int groups = k.grid / k.group;
        const std::string S = std::to_string(k.group), G = std::to_string(groups);
        const std::string tiles =
            k.strided ? "affine_set<(i)[g] : ((i - g) mod " + G + " == 0, i - g >= 0, -i + g + " +
                            std::to_string((k.group - 1) * groups) + " >= 0)>"
                      : "affine_set<(i)[g] : (i - " + S + "*g >= 0, -i + " + S + "*g + " + std::to_string(k.group - 1) +
                            " >= 0)>";
        const std::string fut = (k.short_types ? "<(" + tens_t + ")" : "!ktdp.tile_future<" + tens_t) +
                                ", groups = affine_set<(g) : (g >= 0, -g + " + std::to_string(groups - 1) + " >= 0)>>";
        o << "    %fut = ktdp.inter_tile_produce producer_tiles_per_group = " << tiles << " -> " << fut << " {\n"
          << "    ^bb0(%gid: index):\n      ktdp.yield_partial %sum : " << tens_t << "\n    }\n"
          << "    %ident = arith.constant dense<0.0> : " << tens_t << "\n"
          << "    %red = ktdp.inter_tile_reduce(%fut) consumer_tiles_per_group = " << tiles << ", identity(%ident : "
          << tens_t << ") : " << fut << " -> " << tens_t << " {\n    ^bb0(%lhs: " << tens_t << ", %rhs: " << tens_t
          << "):\n      %comb = " << kBinOps[k.all_reduce] << " %lhs, %rhs : " << tens_t
          << "\n      ktdp.yield_reduced %comb : " << tens_t << "\n    }\n";
        stored = "%red";
    }
    if (sum) {
        o << "    %tacc = ktdp.construct_access_tile %vacc[%core, %c0] : memref<" << k.grid << "x64xf16> -> " << tile_t
          << "\n";
        o << "    ktdp.store " << stored << ", %tacc : " << tens_t << ", " << ls_tile_t << "\n";
    }
    o << "    return\n  }\n}\n";
    if (!k.locations) return o.str();
    // torch-spyre's locations: `loc(#locN)` after every op (aliases defined after the module) and a
    // file location on the function.
    std::istringstream in(o.str());
    std::ostringstream out;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        const bool op = line.find(" = ") != std::string::npos || line.find("ktdp.store") != std::string::npos ||
                        line.find("return") != std::string::npos;
        out << line << (op && line.back() != '{' ? " loc(#loc" + std::to_string(n++ % 3) + ")" : "") << "\n";
    }
    out << "#loc0 = loc(\"/tmp/fuzz.py\":3:7)\n#loc1 = loc(unknown)\n#loc2 = loc(\"x\"(#loc0))\n";
    return out.str();
}

namespace {

std::string buffer_name(int b) { return "b" + std::to_string(b); }

// The device program's kinds: a buffer only stored to is an output (zeros before the run).
bool stored_only(const Kernel &k, int b) {
    bool ld = false, st = false;
    for (const Stmt &s : k.body) {
        if (s.kind == Stmt::Load && s.buffer == b) ld = true;
        if (s.kind == Stmt::Store && s.buffer == b) st = true;
    }
    return st && !ld;
}

uint16_t bin(int op, uint16_t x, uint16_t y) {
    float a = half_to_float(x), b = half_to_float(y);
    switch (op) {
    case 0: return float_to_half(a + b);
    case 1: return float_to_half(a - b);
    case 2: return float_to_half(a * b);
    default:
        // The importer's maximumf / minimumf are the device's VMAX / VMIN, a > b ? a : b (resp. <),
        // not MLIR's (which orders -0 below +0 and propagates NaN): docs/ktir.md.
        return (op == 3 ? a > b : a < b) ? x : y;
    }
}

}  // namespace

Images random_inputs(const Kernel &k, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-2, 2);
    Images in;
    for (int b = 0; b < k.buffers; b++) {
        if (stored_only(k, b)) continue;
        std::vector<uint16_t> h(size_t(k.rows * k.cols));
        for (uint16_t &x : h) x = float_to_half(d(rng));
        in[buffer_name(b)] = h;
    }
    return in;
}

Images evaluate(const Kernel &k, const Images &inputs) {
    Images mem;
    for (int b = 0; b < k.buffers; b++) {
        auto it = inputs.find(buffer_name(b));
        mem[buffer_name(b)] = it != inputs.end() ? it->second : std::vector<uint16_t>(size_t(k.rows * k.cols), 0);
    }
    if (k.sum_of >= 0) mem["acc"].assign(size_t(k.grid * kTile), 0);
    const int rpt = k.rows / k.grid;
    using Tile = std::vector<uint16_t>;
    for (int c = 0; c < k.grid; c++) {
        const int base = c * rpt;
        Tile acc(kTile, 0);
        for (int r = base; r < base + rpt; r++) {
            const int m = 2 * base + rpt - 1 - r;
            std::vector<Tile> val;
            for (const Stmt &s : k.body) {
                const size_t at = size_t((s.mirror ? m : r) * k.cols + s.col);
                Tile x(kTile);
                if (s.kind == Stmt::Load) {
                    const std::vector<uint16_t> &src = mem[buffer_name(s.buffer)];
                    val.emplace_back(src.begin() + long(at), src.begin() + long(at) + kTile);
                } else if (s.kind == Stmt::Bin) {
                    for (int j = 0; j < kTile; j++) x[size_t(j)] = bin(s.op, val[size_t(s.a)][size_t(j)], val[size_t(s.b)][size_t(j)]);
                    val.push_back(x);
                } else if (s.kind == Stmt::Unary) {
                    // negf flips the sign bit, absf clears it (NaN too).
                    for (int j = 0; j < kTile; j++)
                        x[size_t(j)] = uint16_t(s.op == 0 ? val[size_t(s.a)][size_t(j)] ^ 0x8000 : val[size_t(s.a)][size_t(j)] & 0x7fff);
                    val.push_back(x);
                } else if (s.kind == Stmt::Const) {
                    x.assign(kTile, float_to_half(float(std::atof(kConsts[s.op]))));
                    val.push_back(x);
                } else {
                    std::vector<uint16_t> &dst = mem[buffer_name(s.buffer)];
                    std::copy(val[size_t(s.a)].begin(), val[size_t(s.a)].end(), dst.begin() + long(at));
                }
            }
            if (k.sum_of >= 0)
                for (int j = 0; j < kTile; j++) acc[size_t(j)] = bin(0, acc[size_t(j)], val[size_t(k.sum_of)][size_t(j)]);
        }
        if (k.sum_of >= 0) std::copy(acc.begin(), acc.end(), mem["acc"].begin() + long(c * kTile));
    }
    if (k.all_reduce >= 0) {  // each group's sums combined in tile order, each of its tiles given the result
        std::vector<uint16_t> &a = mem["acc"];
        const int groups = k.grid / k.group;
        for (int g = 0; g < groups; g++) {
            std::vector<int> tiles;
            for (int m = 0; m < k.group; m++) tiles.push_back(k.strided ? g + m * groups : g * k.group + m);
            for (int j = 0; j < kTile; j++) {
                uint16_t r = a[size_t(tiles[0] * kTile + j)];
                for (size_t m = 1; m < tiles.size(); m++) r = bin(k.all_reduce, r, a[size_t(tiles[m] * kTile + j)]);
                for (int t : tiles) a[size_t(t * kTile + j)] = r;
            }
        }
    }
    return mem;
}

}  // namespace spyre::ktirfuzz
