// The catalogue's multi-head attention with keys in tiles and an online softmax (catalogue_app.h):
// dim x seq x heads, heads over Shape::cores, the default tiles of flash_attention_tiles;
// causal_attention is the same generator with mask=causal. The running maxima's rescaling adds to
// attention's error: one fp16 ULP below 0.5.
#include <algorithm>

#include "catalogue_app.h"
#include "flash_attention.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_flash_attention() {
    std::vector<AppInfo> apps;
    for (bool causal : {false, true}) {
        AppInfo a;
        a.name = causal ? "causal_attention" : "flash_attention";
        a.order = causal ? 110 : 100;
        a.generator = "flash_attention";
        a.dims = {"dim", "seq", "heads"};
        a.takes_cores = true;
        a.report_shape_option = "flash-attention-shape";
        a.report_cores_option = "bmm-cores";
        a.schedules = [causal] {
            // kv_chunked loads key tiles as causal query tiles reach them: without the mask it has none.
            std::vector<std::string> s = without_cpu(flash_attention_schedules());
            if (!causal) s.erase(std::remove(s.begin(), s.end(), "kv_chunked"), s.end());
            return s;
        };
        a.generator_params = [causal](const Shape &s) {
            return std::vector<std::string>{kv("dim", s.dims[0]), kv("seq", s.dims[1]), kv("heads", s.dims[2]),
                                            kv("cores", s.cores), std::string("mask=") + (causal ? "causal" : "none")};
        };
        a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>(3, s.dims); };
        a.output = [](const Shape &s) { return s.dims; };
        a.input_range = 1;
        a.tolerance.abs = 2.5e-4;
        a.kernel = [causal](const Shape &s) {
            const FlashTiles t = flash_attention_tiles(s.dims[1], causal);
            FlashAttentionKernel k = make_flash_attention(s.dims[0], s.dims[1], s.dims[2], t.q_tile, t.k_tile, causal);
            const int cores = s.cores;
            return AppKernel{k.out, {k.q, k.k, k.v},
                             [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_flash_attention(k, n, cores, m); },
                             [k]() mutable { schedule_flash_attention(k, "cpu", 1); }};
        };
        a.max_cores = [](const Shape &s) { return s.dims[2]; };
        // 40 heads on 32 cores; the compiler tests run more shapes of both (test_flash_attention.cpp).
        a.shapes = {"128x512x4", 4, "64x128x2", 32, {"100x33x2", "128x1x1", "64x96x40"}, {"128x2048x32", "128x1152x7"}};
        apps.push_back(a);
    }
    return apps;
}

}  // namespace spyre::report
