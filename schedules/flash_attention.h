// Multi-head attention with the keys in tiles and an online softmax (FlashAttention's algorithm):
// out = softmax(Q K^T / sqrt(dim)) V for every head, Q, K, V and out {dim, seq, heads} fp16
// (sticked on the head dimension). Queries are taken in tiles of q_tile positions, keys in tiles
// of k_tile; for query tile i and key tile j, scores S_ij (fp32, on the PE array, of the queries
// scaled by 1/sqrt(dim) in fp16) give a tile maximum m_ij, probabilities
// P_ij = fp16(exp(S_ij - m_ij)), their row sums l_ij (of the
// fp16 values, in fp32) and P_ij V_j (on the PE array). A running state (l, O, m) per query row folds the key tiles in one at a time,
// rescaling what it holds by exp(m_old - m_new), so no row of scores over the whole
// sequence is ever held: the state is a Halide Tuple, updated over the key tiles by one update
// definition. The tiles are part of the algorithm: the order in which key tiles are folded in
// decides the fp32 rounding, so the CPU reference uses the same tiles. Causal attention (each
// query sees the keys up to its own position) folds in the key tiles before the query tile by the
// first update and the one key tile holding it, masked, by a second.
//
// Schedules (heads are divided over the cores):
//   "kv_stream"   K and V tiles are streamed from device memory at every key tile;
//   "kv_resident" each core copies its head's K and V into LX once and reads them there, K by key
//                 tiles with the keys along the sticks (restickified once per head) when a key
//                 tile is whole sticks.
//   "kv_chunked"  (causal prefill only) kv_resident's K and V, loaded a key tile at a time: the query tiles
//                 go in segments, one per key tile, and each segment loads its key tile (Halide's
//                 sliding window over K and V stored per head) while the previous one computes.
//                 The first query tiles start once their key tile has arrived, not the head's.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

// What one key tile gives: its maximum, exponentials, fp16 probabilities, their row sums and P V.
struct FlashTileFuncs {
    Halide::Func tile_max, exps, probs, tile_sum, pv;
};

struct FlashAttentionKernel {
    Halide::ImageParam q, k, v;
    Halide::ImageParam kv_bias;      // AttentionShape::key_bias only (else undefined)
    Halide::ImageParam block_table;  // AttentionShape::pool_blocks only (else undefined)
    // Per (query tile, key tile): scores, tile max, exponentials, their sums, fp16 probabilities,
    // probabilities times V. The state Tuple (l, O, m) per query row; out = O / l.
    Halide::Func qs;  // Q * 1/sqrt(dim), fp16
    Halide::Func kt;  // K by key tiles, keys along the sticks: kt(t, d, j, h) = k(d, j * k_tile + t, h)
    Halide::Func scores, tile_max, exps, tile_sum, probs, pv, state, out;
    // Causal only: the scores with later keys at the lowest float, and what the diagonal key tile
    // (the one holding the query tile) gives from them; folded in by the state's second update.
    Halide::Func masked;
    FlashTileFuncs diag;
    Halide::RDom rdiag;
    Halide::Var d, t, qi, j, i, sq, h;  // head dim, key in tile, query in tile, key tile, query tile, position, head
    Halide::RDom rd, rt, rj;             // over dim, over a key tile, over the key tiles
    int dim = 128, seq = 2048, heads = 32, q_tile = 64, k_tile = 512;
    int kv_seq = 2048, kv_heads = 32;    // keys and values: {dim, kv_seq, kv_heads}
};

// Grouped-query attention (GQA, as in Llama 3): `heads` query heads share `kv_heads` heads of K
// and V, query head h reading K and V head h / (heads / kv_heads); and queries that are the last
// `seq` of `kv_seq` positions (a decode step: its new tokens against a KV cache holding them and
// every earlier position; seq == kv_seq is a prefill). q and out are {dim, seq, heads}, k and v
// {dim, kv_seq, kv_heads}. Causal, query s sits at position kv_seq - seq + s.
struct AttentionShape {
    int dim = 128, seq = 2048, heads = 32;
    int kv_seq = 0, kv_heads = 0;  // 0: seq, heads (plain multi-head attention)
    int q_tile = 64, k_tile = 256;
    bool causal = false;
    // Without the causal mask: the keys attended, the first valid_kv of kv_seq (0: all). A decode
    // step reads its cache in whole key tiles, kv_seq rounded up from its context, and the keys past
    // the context weigh 0 (a select on the key index in each tile; the tiles past the last valid
    // key are not visited).
    int valid_kv = 0;
    // Without the causal mask: a fourth input, kv_bias {kv_seq} fp16, added to every query's score
    // of each key (0 for a key attended; -65504, fp16's lowest, for one that weighs 0). The keys
    // attended are then data, not a compile-time bound: one kernel serves every context of a
    // window (a decode step's bucket), every key tile visited. valid_kv must be 0 with it.
    bool key_bias = false;
    // A paged KV cache read in place: k and v are pools of `pool_blocks` blocks of k_tile positions
    // ({dim, pool_blocks * k_tile, kv_heads}), and a further input, block_table {kv_seq / k_tile}
    // int32, names the pool block that holds each key tile (an indirect DMA of the tile). 0: k and v
    // hold the kv_seq positions in order. Without the causal mask; schedule kv_stream only.
    int pool_blocks = 0;
};

// The tiles the catalogue and the generator take by default: the largest that divide seq, up to 64
// query rows (whole PE passes, a state that leaves LX for the key tile) and 256 keys (the key
// tile's scores, exponentials and probabilities beside the head's K and V); causal, up to 32 query
// rows, so that kv_chunked's next key tile and its double-buffered query tiles fit beside the head's
// K and V (at 64 rows its producer rotation does not fit), and a key tile that is a multiple of the
// query tile.
struct FlashTiles {
    int q_tile, k_tile;
};
FlashTiles flash_attention_tiles(int seq, bool causal = false);

// With `causal`, query position p attends to keys 0..p only: the key tiles after its query tile
// are skipped (RDom::where, which Halide turns into the loop's bound) and the later keys of the
// others score the lowest float (select on key vs query index: one VSELIDX per tile).
// Throws spyre::Error naming the parameter when seq is not a whole number of tiles, a size is not
// positive, or (causal) k_tile is not a multiple of q_tile.
FlashAttentionKernel make_flash_attention(int dim, int seq, int heads, int q_tile, int k_tile, bool causal = false);
// The same for GQA and decode steps (AttentionShape). Also throws when heads is not a multiple of
// kv_heads, seq exceeds kv_seq or kv_seq is not whole key tiles.
FlashAttentionKernel make_flash_attention(const AttentionShape &shape);
const std::vector<std::string> &flash_attention_schedules();
void schedule_flash_attention(FlashAttentionKernel &k, const std::string &name, int cores, const MachineDesc &machine = {});

}  // namespace spyre
