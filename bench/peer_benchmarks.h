// spyre-bench rows peer/<op>/<shape>: IBM's own KTIR kernels for an op, imported and timed on the
// simulator, next to this project's DSL kernel for the same op and shape (each of its catalogue
// schedules and auto, the fastest reported). IBM's files are not part of this repository: the rows
// exist when SPYRE_PEER_KTIR_CPU names a checkout of IBM's ktir-cpu (its examples/triton-ktir
// softmax, layernorm and matmul), and each file that is missing there is skipped with a note.
#pragma once

namespace spyre {

void register_peer_benchmarks();

}  // namespace spyre
