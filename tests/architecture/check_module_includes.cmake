# Checks the module boundaries of docs/ARCHITECTURE.md: every project include
# (`#include "module/file.h"`) in a module's sources must name the module itself or one of
# the modules it may include. Run by ctest as `cmake -DSOURCE_DIR=... -P` this file; fails
# listing each offending file:line and the include.
#
# The table below is the one in docs/ARCHITECTURE.md ("Modules and who may include whom");
# change both together.
set(allowed_base "base")
set(allowed_topology "base;topology")
set(allowed_sim "base;topology;sim")
set(allowed_perf "base;topology;sim;perf")
set(allowed_parallelism "base;topology;sim;perf;parallelism")
set(allowed_goodput "base;topology;sim;perf;parallelism;goodput")
set(allowed_calibrate "base;topology;sim;perf;parallelism;calibrate")
set(allowed_validation "base;topology;sim;perf;parallelism;calibrate;validation")
set(allowed_sweep "base;topology;sim;perf;parallelism;goodput;sweep")
set(allowed_python "base;cli")
set(modules base topology sim perf parallelism goodput calibrate validation sweep python)
set(all_modules ${modules} cli)

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repository root> -P check_module_includes.cmake")
endif()

set(violations "")
foreach(module ${modules})
  if(NOT IS_DIRECTORY "${SOURCE_DIR}/${module}")
    continue()
  endif()
  file(GLOB_RECURSE sources "${SOURCE_DIR}/${module}/*.h" "${SOURCE_DIR}/${module}/*.cpp")
  foreach(source ${sources})
    file(STRINGS "${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
    foreach(line ${lines})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"/]+)/.*$" "\\1" included "${line}")
      if(included STREQUAL line)
        continue()  # an include without a module folder (a file beside this one)
      endif()
      list(FIND all_modules "${included}" known)
      if(known EQUAL -1)
        continue()  # not a project module (a third-party path such as CLI/CLI.hpp)
      endif()
      list(FIND allowed_${module} "${included}" ok)
      if(ok EQUAL -1)
        file(RELATIVE_PATH relative "${SOURCE_DIR}" "${source}")
        string(APPEND violations "\n  ${relative}: ${line}  (${module}/ may include: ${allowed_${module}})")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "module boundary violations (docs/ARCHITECTURE.md):${violations}")
endif()
message(STATUS "module boundaries hold for: ${modules}")
