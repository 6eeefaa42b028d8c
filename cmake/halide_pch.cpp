// The one source of spyre_halide_pch and spyre_halide_test_pch (cmake/SpyreHalidePch.cmake), the
// targets that build the precompiled headers the others reuse: a target needs a source to build one.
