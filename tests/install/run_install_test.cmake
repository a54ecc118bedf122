# ctest's phew_install (tests/install/CMakeLists.txt passes the variables): installs the build
# into WORK_DIR/prefix, checks the installed files and where the installed binaries find
# their libraries, then builds the consumers outside the tree against that prefix and runs
# them. Any failure stops the script with FATAL_ERROR (the test fails) and the output of the
# failed step.
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DSOURCE_DIR=... [...] -P run_install_test.cmake
cmake_minimum_required(VERSION 3.16)

set(PREFIX ${WORK_DIR}/prefix)
set(WORK ${WORK_DIR}/work)
set(LIB ${PREFIX}/${LIBDIR})
file(REMOVE_RECURSE ${PREFIX} ${WORK})
file(MAKE_DIRECTORY ${WORK})
separate_arguments(MPIEXEC_PREFLAGS UNIX_COMMAND "${MPIEXEC_PREFLAGS}")
set(MPIRUN ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS})
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
set(ENV{OMPI_MCA_rmaps_base_oversubscribe} 1)
set(ENV{OMPI_MCA_pml} ob1)

# phew_run(<what> COMMAND <command...> [OUTPUT <variable>] [SHOW]): runs a step in WORK; fails
# the test with its output unless it exits with 0; SHOW prints its output.
function(phew_run what)
  cmake_parse_arguments(R "SHOW" "OUTPUT" "COMMAND" ${ARGN})
  string(REPLACE ";" " " shown "${R_COMMAND}")
  string(TIMESTAMP now "%H:%M:%S")
  message(STATUS "[${now}] ${what}: ${shown}")
  execute_process(COMMAND ${R_COMMAND} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  if(R_SHOW)
    message("${out}")
  endif()
  if(R_OUTPUT)
    set(${R_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

function(phew_expect what text pattern)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: expected '${pattern}' in:\n${text}")
  endif()
endfunction()

# phew_inside(<variable> <path> <directory>): whether path lies inside directory
function(phew_inside variable path directory)
  string(FIND "${path}/" "${directory}/" at)
  if(at EQUAL 0)
    set(${variable} 1 PARENT_SCOPE)
  else()
    set(${variable} 0 PARENT_SCOPE)
  endif()
endfunction()

# phew_check_libraries(<binary> <library file name>...): each named library the binary loads
# resolves (through its RPATH: ldd asks the dynamic loader) to the prefix's copy, and nothing
# it loads comes from the build tree outside the prefix.
find_program(LDD ldd)
function(phew_check_libraries binary)
  if(NOT LDD)
    return()
  endif()
  execute_process(COMMAND ${LDD} ${binary} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ldd ${binary} failed:\n${out}\n${err}")
  endif()
  string(REPLACE "\n" ";" lines "${out}")
  set(paths)
  set(unresolved)
  foreach(line IN LISTS lines)
    if(line MATCHES "=> not found")
      list(APPEND unresolved "${line}")
    endif()
    if(NOT line MATCHES "=> (/[^ ]+) \\(")
      continue()
    endif()
    get_filename_component(path ${CMAKE_MATCH_1} ABSOLUTE)
    list(APPEND paths ${path})
    phew_inside(in_build ${path} ${BUILD_DIR})
    phew_inside(in_prefix ${path} ${PREFIX})
    if(in_build AND NOT in_prefix)
      message(FATAL_ERROR "${binary} loads ${path} from the build tree")
    endif()
  endforeach()
  if(unresolved)
    message(FATAL_ERROR "${binary}: libraries not found: ${unresolved}")
  endif()
  foreach(name IN LISTS ARGN)
    set(found "")
    foreach(path IN LISTS paths)
      get_filename_component(file_name ${path} NAME)
      if(file_name STREQUAL name)
        set(found ${path})
      endif()
    endforeach()
    phew_inside(in_prefix "${found}" ${PREFIX})
    if(NOT found OR NOT in_prefix)
      message(FATAL_ERROR "${binary} loads ${name} from '${found}', not from ${PREFIX} (unresolved: ${unresolved})")
    endif()
  endforeach()
  message(STATUS "${binary}: ${ARGN} from the prefix")
endfunction()

# ---- install ------------------------------------------------------------------------------
set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
phew_run("install" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} ${config_args})
set(expected
  ${BINDIR}/phew ${INCLUDEDIR}/phew/phew.h ${LIBDIR}/libphew.so ${LIBDIR}/libphew.a
  ${LIBDIR}/cmake/phew/phewConfig.cmake ${LIBDIR}/cmake/phew/phewConfigVersion.cmake
  ${LIBDIR}/cmake/phew/phewTargets.cmake ${LIBDIR}/pkgconfig/phew.pc)
if(WITH_PLUGIN)
  list(APPEND expected ${LIBDIR}/PHEW/PHEW.so ${LIBDIR}/PHEW/libPHEWFilters.so)
endif()
if(WITH_FORTRAN)
  list(APPEND expected ${INCLUDEDIR}/phew/phew_catalyst.h ${LIBDIR}/libphew_catalyst.so
       ${LIBDIR}/libphew_catalyst_fortran.so ${INCLUDEDIR}/phew/fortran/phew_catalyst.mod
       ${LIBDIR}/pkgconfig/phew_catalyst.pc ${LIBDIR}/pkgconfig/phew_catalyst_fortran.pc)
endif()
foreach(file IN LISTS expected)
  if(NOT EXISTS ${PREFIX}/${file})
    message(FATAL_ERROR "not installed: ${PREFIX}/${file}")
  endif()
endforeach()
message(STATUS "installed: ${expected}")
phew_check_libraries(${PREFIX}/${BINDIR}/phew libphew.so)
if(WITH_PLUGIN)
  phew_check_libraries(${LIB}/PHEW/PHEW.so libphew.so libPHEWFilters.so)
endif()
if(WITH_FORTRAN)
  phew_check_libraries(${LIB}/libphew_catalyst_fortran.so libphew_catalyst.so)
endif()

# ---- C through find_package ---------------------------------------------------------------
set(compilers -DCMAKE_C_COMPILER=${C_COMPILER})
phew_run("configure the C consumer (find_package)"
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/c_consumer -B ${WORK}/c -G "${GENERATOR}" ${compilers}
          -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${PREFIX})
phew_run("build the C consumer (find_package)" COMMAND ${CMAKE_COMMAND} --build ${WORK}/c)
phew_check_libraries(${WORK}/c/consumer libphew.so)

# ---- C through pkg-config -----------------------------------------------------------------
set(ENV{PKG_CONFIG_PATH} ${LIB}/pkgconfig)
phew_run("pkg-config" COMMAND ${PKG_CONFIG} --cflags phew OUTPUT pc_cflags)
phew_run("pkg-config" COMMAND ${PKG_CONFIG} --libs phew OUTPUT pc_libs)
phew_run("pkg-config --static" COMMAND ${PKG_CONFIG} --static --libs phew OUTPUT pc_static_libs)
phew_run("pkg-config libdir" COMMAND ${PKG_CONFIG} --variable=libdir phew OUTPUT pc_libdir)
phew_run("pkg-config MPI" COMMAND ${PKG_CONFIG} --cflags --libs ${MPI_PKG} OUTPUT mpi_flags)
foreach(var pc_cflags pc_libs pc_static_libs pc_libdir mpi_flags)
  string(STRIP "${${var}}" ${var})
  separate_arguments(${var} UNIX_COMMAND "${${var}}")
endforeach()
phew_expect("pkg-config --libs phew" "${pc_libs}" "-lphew")
phew_expect("pkg-config --static --libs phew" "${pc_static_libs}" "-lm")
# the static variant: libphew.a chosen for -lphew, the private libraries of phew.pc after it
string(REPLACE "-lphew" "-Wl,-Bstatic;-lphew;-Wl,-Bdynamic" pc_static_libs "${pc_static_libs}")
phew_run("build the C consumer (pkg-config)"
  COMMAND ${C_COMPILER} -std=c11 -O2 ${SOURCE_DIR}/c_consumer/main.c ${pc_cflags} ${pc_libs} ${mpi_flags} -lm
          -Wl,-rpath,${pc_libdir} -o ${WORK}/consumer_pc)
phew_run("build the C consumer (pkg-config --static)"
  COMMAND ${C_COMPILER} -std=c11 -O2 ${SOURCE_DIR}/c_consumer/main.c ${pc_cflags} ${pc_static_libs} ${mpi_flags}
          -o ${WORK}/consumer_pc_static)
phew_check_libraries(${WORK}/consumer_pc libphew.so)

# ---- run the C consumers ------------------------------------------------------------------
phew_run("installed tool's field" COMMAND ${WORK}/c/consumer ${WORK}/field.raw OUTPUT out SHOW)
phew_expect("consumer" "${out}" "OK: 2 clumps expected on 1 rank\\(s\\), 0 failed")
foreach(consumer c/consumer c/consumer_static consumer_pc consumer_pc_static)
  phew_run("${consumer}" COMMAND ${WORK}/${consumer} OUTPUT out)
  phew_expect("${consumer}" "${out}" "OK: 2 clumps expected on 1 rank\\(s\\), 0 failed")
  phew_run("${consumer} on 2 ranks" COMMAND ${MPIRUN} ${WORK}/${consumer} OUTPUT out)
  phew_expect("${consumer} on 2 ranks" "${out}" "OK: 2 clumps expected on 2 rank\\(s\\), 0 failed")
  message(STATUS "${consumer}: 2 clumps at the known cells on 1 and 2 ranks")
endforeach()
foreach(static c/consumer_static consumer_pc_static)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LANG=C readelf -d ${WORK}/${static} OUTPUT_VARIABLE needed)
  if(needed MATCHES "libphew\\.so")
    message(FATAL_ERROR "${static} needs libphew.so:\n${needed}")
  endif()
endforeach()

# ---- the installed command-line tool ------------------------------------------------------
phew_run("installed tool"
  COMMAND ${PREFIX}/${BINDIR}/phew --input ${WORK}/field.raw --dims 16 16 16 --type float64 --threshold 1
          --output ${WORK}/field)
file(STRINGS ${WORK}/field-clumps.csv rows)
list(GET rows 0 header)
string(REPLACE "," ";" header "${header}")
list(FIND header PeakId column)
list(LENGTH rows n_rows)
set(peaks)
foreach(row IN LISTS rows)
  string(REPLACE "," ";" row "${row}")
  list(GET row ${column} peak)
  list(APPEND peaks ${peak})
endforeach()
if(NOT n_rows EQUAL 3 OR NOT peaks STREQUAL "PeakId;1364;2475")
  message(FATAL_ERROR "installed tool: clumps with peaks ${peaks}, expected 1364 and 2475")
endif()
message(STATUS "installed tool: 2 clumps, peaks 1364 and 2475")

# ---- the installed Python package: found on PYTHONPATH under the prefix, its compiled module
# finding the prefix's libphew ---------------------------------------------------------------
if(PYTHON)
  set(ENV{PYTHONPATH} ${PREFIX}/${PYTHONDIR})
  phew_run("installed Python package" COMMAND ${PYTHON} -c
    "import numpy, phew\nrho = numpy.ones((10, 10, 10))\nrho[2, 2, 2], rho[7, 7, 7] = 5.0, 6.0\nr = phew.find_clumps(rho, threshold=2.0)\nprint(phew.__file__, list(r.clumps['PeakId']))"
    OUTPUT out)
  unset(ENV{PYTHONPATH})
  phew_expect("import phew from the prefix" "${out}" "^${PREFIX}/${PYTHONDIR}/phew/__init__.py \\[777, 222\\]")
  message(STATUS "installed Python package: ${out}")
endif()

# ---- the installed plugin in pvpython (found through PV_PLUGIN_PATH); with Fortran the
# Catalyst script below loads it too ---------------------------------------------------------
if(WITH_PLUGIN AND PVPYTHON AND NOT WITH_FORTRAN)
  set(ENV{PV_PLUGIN_PATH} ${LIB}/PHEW)
  phew_run("installed plugin" COMMAND ${PVPYTHON} -c "from paraview.simple import *\nprint(PHEWClumpFinder)"
           OUTPUT out)
  unset(ENV{PV_PLUGIN_PATH})
  phew_expect("pvpython with PV_PLUGIN_PATH=${LIB}/PHEW" "${out}" "<function ")
  message(STATUS "installed plugin: PHEWClumpFinder in pvpython")
endif()

# ---- Fortran through find_package and pkg-config, one Catalyst step -----------------------
if(WITH_FORTRAN)
  phew_run("configure the Fortran consumer (find_package)"
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/fortran_consumer -B ${WORK}/fortran -G "${GENERATOR}"
            -DCMAKE_Fortran_COMPILER=${Fortran_COMPILER} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${PREFIX})
  phew_run("build the Fortran consumer (find_package)" COMMAND ${CMAKE_COMMAND} --build ${WORK}/fortran)
  phew_check_libraries(${WORK}/fortran/fortran_consumer libphew_catalyst_fortran.so libphew_catalyst.so)
  phew_run("pkg-config Fortran" COMMAND ${PKG_CONFIG} --cflags --libs phew_catalyst_fortran OUTPUT pc_fortran)
  # the adaptor takes the core's types: its .pc brings libphew and its headers (Requires: phew)
  phew_run("pkg-config Catalyst" COMMAND ${PKG_CONFIG} --libs phew_catalyst OUTPUT pc_catalyst)
  phew_expect("pkg-config --libs phew_catalyst" "${pc_catalyst}" "-lphew_catalyst.*-lphew( |$)")
  separate_arguments(pc_fortran UNIX_COMMAND "${pc_fortran}")
  phew_run("build the Fortran consumer (pkg-config)"
    COMMAND ${MPI_Fortran_COMPILER} ${SOURCE_DIR}/fortran_consumer/main.f90 ${pc_fortran}
            -Wl,-rpath,${pc_libdir} -o ${WORK}/fortran_consumer_pc)
  phew_check_libraries(${WORK}/fortran_consumer_pc libphew_catalyst_fortran.so libphew_catalyst.so)

  # the installed adaptor finds the installed plugin itself (PHEW/PHEW.so beside its library)
  unset(ENV{PHEW_PLUGIN})
  set(ENV{PHEW_CONSUMER_PREFIX} ${PREFIX})
  set(ENV{PHEW_CONSUMER_OUTPUT} ${WORK})
  set(script ${SOURCE_DIR}/fortran_consumer/count_clumps.py)
  phew_run("Fortran consumer" COMMAND ${WORK}/fortran/fortran_consumer ${script} OUTPUT out)
  phew_expect("Fortran consumer" "${out}" "OK: Catalyst step through module phew_catalyst on 1 rank")
  phew_run("Fortran consumer on 2 ranks" COMMAND ${MPIRUN} ${WORK}/fortran/fortran_consumer ${script} OUTPUT out)
  phew_expect("Fortran consumer on 2 ranks" "${out}" "OK: Catalyst step through module phew_catalyst on 2 rank")
  foreach(ranks 1 2)
    file(READ ${WORK}/clumps_np${ranks}.txt found)
    phew_expect("Catalyst script on ${ranks} rank(s)" "${found}" "^clumps 2 peaks 1364 2475\n$")
  endforeach()
  message(STATUS "Fortran consumer: Catalyst found 2 clumps at the known cells on 1 and 2 ranks")
endif()
message(STATUS "phew_install: every check passed")
