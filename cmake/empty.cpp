// An executable whose main() comes from a library it links (spyre-gen: spyre_gen_driver) still
// needs a source file of its own in CMake.
