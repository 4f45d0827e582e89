# shimgen's CMake package.
#
#   cmake -S . -B build -DShimgen_DIR="$(shimgen --cmake-dir)"
#
#   find_package(Shimgen REQUIRED)
#   add_library(my_ops SHARED csrc/my_ops.cpp)
#   shimgen_generate(my_ops
#     PROJECT ${CMAKE_CURRENT_SOURCE_DIR}/pyproject.toml   # the ops and target of [tool.shimgen] ...
#     # OPS add pad amax  TARGET_VERSION 2.10  [ONLY]       # ... or given here
#     [OUT <dir>]                                           # default: ${CMAKE_CURRENT_BINARY_DIR}/shimgen-<target>
#     [NO_AUDIT])                                           # no `shimgen audit` after linking (an overlay build)
#
# shimgen_generate makes the generated headers part of the build graph: a custom command runs shimgen into OUT
# before <target> compiles, and again whenever the op list (the OPS given here, or the pyproject.toml), the
# shimgen command (a reinstall or upgrade rewrites it) or shimgen's version (read at configure time) changes.
# <target> gets OUT first on its include path (the generated torch/csrc/stable/ops.h shadows torch's),
# TORCH_STABLE_ONLY, TORCH_TARGET_VERSION for the target release, torch's include directory and libtorch
# (torch, torch_cpu, c10: the stable ABI needs nothing else) of the torch shimgen runs with (set TORCH_ROOT to
# the folder of another torch package). No find_package(Torch) needed.
#
# After <target> links, `shimgen audit --after-link` reads the library (no torch import, well under a second): one
# line, and a library that would not load on every release from the target to the newest fails the build with one
# line naming the function and the release it needs. Off for every target with -DSHIMGEN_AUDIT=OFF, for one with
# NO_AUDIT, and for a single build with the environment variable SHIMGEN_AUDIT=0.

cmake_minimum_required(VERSION 3.18)

option(SHIMGEN_AUDIT "run shimgen audit on each library shimgen_generate builds, after it links" ON)

find_program(SHIMGEN_EXECUTABLE shimgen DOC "the shimgen command")
if(NOT SHIMGEN_EXECUTABLE)
  set(Shimgen_FOUND FALSE)
  set(Shimgen_NOT_FOUND_MESSAGE "the `shimgen` command is not on PATH (pip install shimgen, or set SHIMGEN_EXECUTABLE)")
  return()
endif()

# key=value lines from `shimgen --cmake-info [--project P]`: version, torch (the installed torch's folder), target.
function(_shimgen_info out_prefix)
  execute_process(COMMAND "${SHIMGEN_EXECUTABLE}" --cmake-info ${ARGN} OUTPUT_VARIABLE _out ERROR_VARIABLE _err
                  RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${SHIMGEN_EXECUTABLE} --cmake-info failed: ${_err}")
  endif()
  string(REPLACE "\n" ";" _lines "${_out}")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^([a-z]+)=(.*)$")
      set(${out_prefix}_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

_shimgen_info(_shimgen)
set(_shimgen_dir "${CMAKE_CURRENT_LIST_DIR}")
set(Shimgen_VERSION "${_shimgen_version}")
if(NOT TORCH_ROOT)
  set(TORCH_ROOT "${_shimgen_torch}")  # the torch shimgen runs with: its headers and libtorch
endif()

# The hex value of TORCH_TARGET_VERSION for a release X.Y.
function(_shimgen_version_hex release out_var)
  if(NOT release MATCHES "^([0-9]+)\\.([0-9]+)(\\.[0-9]+)?$")
    message(FATAL_ERROR "shimgen_generate: TARGET_VERSION must be X.Y, not '${release}'")
  endif()
  math(EXPR _major "${CMAKE_MATCH_1}" OUTPUT_FORMAT HEXADECIMAL)
  math(EXPR _minor "${CMAKE_MATCH_2}" OUTPUT_FORMAT HEXADECIMAL)
  string(REPLACE "0x" "" _major "${_major}")
  string(REPLACE "0x" "" _minor "${_minor}")
  string(LENGTH "${_major}" _n)
  if(_n LESS 2)
    set(_major "0${_major}")
  endif()
  string(LENGTH "${_minor}" _n)
  if(_n LESS 2)
    set(_minor "0${_minor}")
  endif()
  set(${out_var} "0x${_major}${_minor}000000000000" PARENT_SCOPE)
endfunction()

function(shimgen_generate target)
  cmake_parse_arguments(ARG "ONLY;NO_AUDIT" "PROJECT;TARGET_VERSION;OUT" "OPS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "shimgen_generate: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_PROJECT AND NOT ARG_OPS)
    message(FATAL_ERROR "shimgen_generate: give PROJECT <pyproject.toml> or OPS <op>...")
  endif()
  set(_depends "${SHIMGEN_EXECUTABLE}")
  set(_args)
  if(ARG_TARGET_VERSION)  # a release shimgen knows, checked by shimgen itself (as [tool.shimgen]'s target is)
    _shimgen_info(_given --cmake-target "${ARG_TARGET_VERSION}")
    set(ARG_TARGET_VERSION "${_given_target}")
  endif()
  if(ARG_PROJECT)
    get_filename_component(_pyproject "${ARG_PROJECT}" ABSOLUTE)
    list(APPEND _args --project "${_pyproject}")
    list(APPEND _depends "${_pyproject}")
    if(NOT ARG_TARGET_VERSION)  # [tool.shimgen]'s target, read with the interpreter shimgen runs on
      _shimgen_info(_project --project "${_pyproject}")
      set(ARG_TARGET_VERSION "${_project_target}")
    endif()
  endif()
  if(ARG_OPS)
    list(JOIN ARG_OPS "," _ops)
    list(APPEND _args --ops "${_ops}")
  endif()
  if(ARG_ONLY)
    list(APPEND _args --only)
  endif()
  if(NOT ARG_OUT)
    set(ARG_OUT "${CMAKE_CURRENT_BINARY_DIR}/shimgen-${target}")
  endif()
  # What the command depends on besides its inputs: shimgen's version and the arguments (rewritten only when
  # they change, so an unchanged configure does not re-run the generation).
  set(_inputs "${CMAKE_CURRENT_BINARY_DIR}/shimgen-${target}.inputs")
  file(CONFIGURE OUTPUT "${_inputs}" CONTENT "shimgen ${Shimgen_VERSION}\n${_args}\n")
  list(APPEND _depends "${_inputs}")
  # The rule's output is a stamp touched after each run, not the headers: shimgen leaves a header that already
  # holds its bytes alone (its modification time too, so nothing recompiles), and a header older than an edited
  # pyproject.toml would make Unix Makefiles run the rule on every build (Ninja restats byproducts). The
  # headers are byproducts; a build after one of them is deleted regenerates (ShimgenOutputs.cmake).
  set(_stamp "${CMAKE_CURRENT_BINARY_DIR}/shimgen-${target}.stamp")
  set(_outputs "${ARG_OUT}/shimgen.yaml" "${ARG_OUT}/torch/csrc/stable/ops.h")
  add_custom_command(
    OUTPUT "${_stamp}"
    BYPRODUCTS ${_outputs}
    COMMAND "${SHIMGEN_EXECUTABLE}" ${_args} --out "${ARG_OUT}"
    COMMAND "${CMAKE_COMMAND}" -E touch "${_stamp}"
    DEPENDS ${_depends}
    COMMENT "shimgen: generating the stable-ABI headers of ${target} into ${ARG_OUT}"
    VERBATIM)
  add_custom_target(${target}_shimgen DEPENDS "${_stamp}")
  if(NOT CMAKE_GENERATOR MATCHES "Ninja")  # Ninja reruns the rule itself when a byproduct is missing
    add_custom_target(${target}_shimgen_outputs
      COMMAND "${CMAKE_COMMAND}" "-DSTAMP=${_stamp}" -P "${_shimgen_dir}/ShimgenOutputs.cmake" -- ${_outputs}
      VERBATIM)
    add_dependencies(${target}_shimgen ${target}_shimgen_outputs)
  endif()
  add_dependencies(${target} ${target}_shimgen)

  target_include_directories(${target} BEFORE PRIVATE "${ARG_OUT}")
  target_compile_definitions(${target} PRIVATE TORCH_STABLE_ONLY)
  if(ARG_TARGET_VERSION)
    _shimgen_version_hex("${ARG_TARGET_VERSION}" _hex)
    target_compile_definitions(${target} PRIVATE TORCH_TARGET_VERSION=${_hex})
  endif()
  target_compile_features(${target} PRIVATE cxx_std_17)

  target_include_directories(${target} PRIVATE "${TORCH_ROOT}/include")
  foreach(_lib torch torch_cpu c10)
    find_library(_shimgen_lib_${_lib} ${_lib} PATHS "${TORCH_ROOT}/lib" NO_DEFAULT_PATH REQUIRED)
    target_link_libraries(${target} PRIVATE "${_shimgen_lib_${_lib}}")
  endforeach()

  if(SHIMGEN_AUDIT AND NOT ARG_NO_AUDIT)
    set(_audit_target)
    if(ARG_TARGET_VERSION)
      set(_audit_target --target "${ARG_TARGET_VERSION}")
    endif()
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND "${SHIMGEN_EXECUTABLE}" audit --after-link ${_audit_target} "$<TARGET_FILE:${target}>"
      VERBATIM)
  endif()
endfunction()
