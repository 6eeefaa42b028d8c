// spyre-bench rows of the llama app (apps/llama): Llama-3.1-8B's stages, layer and model, modelled
// in timing-only mode for a 2048-token prefill and decode steps.
#pragma once

namespace spyre {

void register_llama_benchmarks();

}  // namespace spyre
