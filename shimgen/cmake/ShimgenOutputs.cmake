# Run by shimgen_generate's <target>_shimgen_outputs step before each build with the generators that do not
# restat byproducts (Unix Makefiles, ...):
#   cmake -DSTAMP=<generation stamp> -P ShimgenOutputs.cmake -- <generated file>...
# removes the stamp when one of the generated files is missing, so that build regenerates them.
set(_after_dashes FALSE)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE ${_last})
  if(_after_dashes AND NOT EXISTS "${CMAKE_ARGV${_i}}")
    file(REMOVE "${STAMP}")
    break()
  endif()
  if(CMAKE_ARGV${_i} STREQUAL "--")
    set(_after_dashes TRUE)
  endif()
endforeach()
