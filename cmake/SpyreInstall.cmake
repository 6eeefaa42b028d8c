# `cmake --install build --prefix P`: the libraries and public headers a kernel author and a host
# program need (under P/include/spyre), the tools, the docs and a CMake package, SpyreHalide, that
# gives SpyreHalide::dsl, ::host, ::schedules and ::autoschedule, add_spyre_kernel() and add_spyre_generator().
# `make package` builds the same tree as a Debian package (CPack).
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SPYRE_INCLUDE_ROOT include/spyre)  # the targets' INSTALL_INTERFACE names the same
set(SPYRE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/SpyreHalide)

file(GLOB _dsl_h ${PROJECT_SOURCE_DIR}/dsl/*.h)
file(GLOB _sched_h ${PROJECT_SOURCE_DIR}/schedules/*.h)
file(GLOB _device_h ${PROJECT_SOURCE_DIR}/backend/device/*.h)
file(GLOB _sim_h ${PROJECT_SOURCE_DIR}/backend/sim/*.h)
set(_gen_h spyre_host.h spyre_generator.h generator_info.h generator_pipeline.h rebind.h)
list(TRANSFORM _gen_h PREPEND ${PROJECT_SOURCE_DIR}/apps/gen/)
# The autoscheduler's one public header; its auto_*.h internals stay in the source tree.
install(FILES ${_dsl_h} ${_sched_h} ${_gen_h} ${PROJECT_SOURCE_DIR}/autoschedule/auto_schedule.h
        DESTINATION ${SPYRE_INCLUDE_ROOT})
install(FILES ${_device_h} DESTINATION ${SPYRE_INCLUDE_ROOT}/device)
install(FILES ${_sim_h} DESTINATION ${SPYRE_INCLUDE_ROOT}/sim)

install(TARGETS spyre_device spyre_sim spyre_compiler spyre_dsl spyre_schedules spyre_autoschedule spyre_host spyre_gen_info
                spyre_gen_pipeline spyre_gen_driver spyre_ktir spyre-gen
        EXPORT SpyreHalideTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS spyre-run spyre-tune spyre-bench spyre-report spyre-machine spyre-calibrate
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT SpyreHalideTargets NAMESPACE SpyreHalide:: DESTINATION ${SPYRE_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/SpyreHalideConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/SpyreHalideConfig.cmake INSTALL_DESTINATION ${SPYRE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/SpyreHalideConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/SpyreHalideConfig.cmake ${PROJECT_BINARY_DIR}/SpyreHalideConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/SpyreKernel.cmake
        DESTINATION ${SPYRE_CMAKE_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The Debian package: the same tree, depending on the Debian packages we build on.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME spyre-halide)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "spyre-halide developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Halide scheduling DSL and simulator for IBM's Spyre accelerator")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libhalide14-0-dev, libbenchmark1debian, libjemalloc2, nlohmann-json3-dev, cmake (>= 3.22), g++, make")
include(CPack)
