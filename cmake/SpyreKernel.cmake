# add_spyre_kernel(NAME GENERATOR <generator> PARAMS key=value... [MACHINE <file.json>] [FROM <driver>]
#                  [NO_CPU_REFERENCE] [KTIR])
#
# FROM names the generator driver to run: spyre-gen by default (in this tree, or the installed
# SpyreHalide::spyre-gen), or one built with add_spyre_generator() for your own generators.
#
# At build time, runs spyre-gen on <generator> with PARAMS (which must include schedule=<a Spyre
# schedule>) and writes into ${CMAKE_CURRENT_BINARY_DIR}/NAME/:
#   NAME.spyre  the device program       NAME.s     its disassembly
#   NAME.h      int NAME(halide_buffer_t *inputs..., halide_buffer_t *output): runs NAME.spyre on
#               the simulator            NAME.json  the compile report (cores, LX, DMA, modelled time)
# and, with KTIR, NAME.ktir: the device program as KTIR, IBM's ktdp MLIR dialect (docs/ktir.md);
# and defines:
#   NAME       an INTERFACE library: link it to include NAME.h (it brings spyre_host)
#   NAME_cpu   Halide's CPU AOT library of the same generator and shape with schedule=cpu (the
#              reference, add_halide_library; its header NAME_cpu.h declares NAME_cpu(...))
# Variables set in the caller: NAME_SPYRE_FILE (the .spyre path), NAME_SPYRE_DIR, and with KTIR
# NAME_KTIR_FILE (the .ktir path).
include_guard(GLOBAL)

# The project's own targets in this tree, the SpyreHalide:: ones from an installed package.
function(_spyre_target OUT NAME EXPORTED)
  if(TARGET ${NAME})
    set(${OUT} ${NAME} PARENT_SCOPE)
  else()
    set(${OUT} SpyreHalide::${EXPORTED} PARENT_SCOPE)
  endif()
endfunction()

# add_spyre_generator(NAME SOURCES <file.cpp>... [LINK <library>...])
#
# Builds NAME, a spyre-gen driver with your Generators (HALIDE_REGISTER_GENERATOR plus a
# spyre::gen::Registrar, as in apps/<kernel>/<kernel>_generator.cpp) linked in, as Halide's
# add_halide_generator does. Use it as add_spyre_kernel(... FROM NAME).
function(add_spyre_generator NAME)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "add_spyre_generator(${NAME}): SOURCES is required")
  endif()
  _spyre_target(driver spyre_gen_driver gen_driver)
  add_executable(${NAME} ${ARG_SOURCES})
  target_link_libraries(${NAME} PRIVATE ${driver} ${ARG_LINK})
endfunction()

function(add_spyre_kernel NAME)
  cmake_parse_arguments(ARG "NO_CPU_REFERENCE;KTIR" "GENERATOR;MACHINE;FROM" "PARAMS" ${ARGN})
  if(NOT ARG_GENERATOR)
    message(FATAL_ERROR "add_spyre_kernel(${NAME}): GENERATOR is required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_spyre_kernel(${NAME}): unexpected arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(params ${ARG_PARAMS})
  if(ARG_FROM)
    set(gen ${ARG_FROM})
  else()
    _spyre_target(gen spyre-gen spyre-gen)
  endif()
  _spyre_target(host spyre_host host)
  set(depends ${gen})
  if(ARG_MACHINE)
    get_filename_component(machine "${ARG_MACHINE}" ABSOLUTE)
    list(APPEND params "machine=${machine}")
    list(APPEND depends "${machine}")
  endif()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${NAME}")
  set(outputs "${dir}/${NAME}.spyre" "${dir}/${NAME}.h" "${dir}/${NAME}.s" "${dir}/${NAME}.json")
  set(emit "")
  if(ARG_KTIR)
    list(APPEND outputs "${dir}/${NAME}.ktir")
    set(emit -e ktir)
    set(${NAME}_KTIR_FILE "${dir}/${NAME}.ktir" PARENT_SCOPE)
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${gen} -g ${ARG_GENERATOR} -n ${NAME} -o "${dir}" ${emit} ${params}
    DEPENDS ${depends}
    COMMENT "spyre-gen ${ARG_GENERATOR} -> ${NAME}.spyre"
    VERBATIM)
  add_custom_target(${NAME}.spyre_update ALL DEPENDS ${outputs})
  add_library(${NAME} INTERFACE)
  target_include_directories(${NAME} INTERFACE "${dir}")
  target_link_libraries(${NAME} INTERFACE ${host})
  add_dependencies(${NAME} ${NAME}.spyre_update)
  set(${NAME}_SPYRE_FILE "${dir}/${NAME}.spyre" PARENT_SCOPE)
  set(${NAME}_SPYRE_DIR "${dir}" PARENT_SCOPE)

  if(NOT ARG_NO_CPU_REFERENCE)
    # The same generator and shape with the CPU reference schedule; spyre-gen speaks Halide's
    # generator command line for add_halide_library (target host = spyre::cpu_reference_target()).
    set(cpu_params ${ARG_PARAMS})
    list(FILTER cpu_params EXCLUDE REGEX "^(schedule|machine)=")
    # One Halide runtime for every reference library in the project.
    get_property(runtime GLOBAL PROPERTY SPYRE_KERNEL_HALIDE_RUNTIME)
    set(use_runtime "")
    if(runtime)
      set(use_runtime USE_RUNTIME ${runtime})
    endif()
    add_halide_library(${NAME}_cpu FROM ${gen}
                       GENERATOR ${ARG_GENERATOR}
                       FEATURES strict_float
                       ${use_runtime}
                       PARAMS ${cpu_params} schedule=cpu)
    if(NOT runtime)
      set_property(GLOBAL PROPERTY SPYRE_KERNEL_HALIDE_RUNTIME ${NAME}_cpu.runtime)
    endif()
  endif()
endfunction()
