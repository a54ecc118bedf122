# The installed package: phewConfig.cmake (find_package(phew)), its version file, the exported
# targets and the pkg-config files. Included once, after every installed target exists: by the
# top-level CMakeLists.txt, or by core/CMakeLists.txt when the core is configured on its own.
#
# What `cmake --install` puts under the prefix (with the default GNUInstallDirs, lib = lib):
#   bin/phew                                   the command-line tool
#   include/phew/phew.h                        the core's C API
#   include/phew/phew_catalyst.h               the Catalyst adaptor's C API
#   include/phew/fortran/phew_catalyst.mod     its Fortran module (of the Fortran compiler that
#                                              built it: gfortran modules are compiler-specific)
#   lib/libphew.so, lib/libphew.a              the core, shared and static (the same objects)
#   lib/libphew_catalyst.so                    the adaptor (needs ParaView at run time only)
#   lib/libphew_catalyst_fortran.so            the Fortran module's procedures
#   lib/PHEW/PHEW.so, lib/PHEW/libPHEWFilters.so  the ParaView plugin (PV_PLUGIN_PATH=lib/PHEW)
#   lib/cmake/phew/phewConfig.cmake, ...       find_package(phew): phew::phew, phew::phew_static,
#                                              phew::catalyst, phew::catalyst_fortran
#   lib/pkgconfig/phew.pc, phew_catalyst.pc, phew_catalyst_fortran.pc
# Installed programs and libraries find theirs through a relative RPATH ($ORIGIN), so the
# prefix can be chosen at install time (cmake --install BUILD --prefix DIR) and moved.
include(CMakePackageConfigHelpers)

if(NOT DEFINED phew_package_version)
  set(phew_package_version "${PROJECT_VERSION}")
endif()
set(PHEW_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/phew" CACHE STRING
    "Where phewConfig.cmake is installed (relative to the prefix)")
if(NOT DEFINED PHEW_INSTALL_FORTRAN_MODULEDIR)
  set(PHEW_INSTALL_FORTRAN_MODULEDIR "${CMAKE_INSTALL_INCLUDEDIR}/phew/fortran")
endif()
mark_as_advanced(PHEW_INSTALL_CMAKEDIR)

# ---- what the build has, for phewConfig.cmake ---------------------------------------------
set(phew_with_mpi 0)
if(PHEW_ENABLE_MPI)
  set(phew_with_mpi 1)
endif()
set(phew_with_openmp 0)
if(PHEW_OPENMP_C_FLAGS) # (core/CMakeLists.txt: libphew links OpenMP)
  set(phew_with_openmp 1)
endif()
set(phew_with_static 0)
if(TARGET phew_static)
  set(phew_with_static 1)
endif()
set(phew_with_catalyst 0)
if(TARGET phew_catalyst)
  set(phew_with_catalyst 1)
endif()
set(phew_with_catalyst_fortran 0)
if(TARGET phew_catalyst_fortran)
  set(phew_with_catalyst_fortran 1)
endif()
set(phew_plugin_relative "")
if(TARGET PHEW)
  set(phew_plugin_relative "${CMAKE_INSTALL_LIBDIR}/PHEW/PHEW.so")
endif()
set(phew_cli_relative "")
if(TARGET phew_cli)
  set(phew_cli_relative "${CMAKE_INSTALL_BINDIR}/phew")
endif()

install(EXPORT phewTargets
  NAMESPACE phew::
  FILE phewTargets.cmake
  DESTINATION "${PHEW_INSTALL_CMAKEDIR}")

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/phewConfig.cmake.in"
  "${CMAKE_BINARY_DIR}/cmake/phewConfig.cmake"
  INSTALL_DESTINATION "${PHEW_INSTALL_CMAKEDIR}"
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR PHEW_INSTALL_FORTRAN_MODULEDIR)
# 0.x: a new minor version may change the API
write_basic_package_version_file(
  "${CMAKE_BINARY_DIR}/cmake/phewConfigVersion.cmake"
  VERSION "${phew_package_version}"
  COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_BINARY_DIR}/cmake/phewConfig.cmake" "${CMAKE_BINARY_DIR}/cmake/phewConfigVersion.cmake"
  DESTINATION "${PHEW_INSTALL_CMAKEDIR}")

# ---- pkg-config ---------------------------------------------------------------------------
# The prefix is found from the .pc file's own place (${pcfiledir}), so that a prefix given only
# at install time (cmake --install --prefix) is right.
set(phew_pc_to_prefix "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
file(RELATIVE_PATH phew_pc_to_prefix "/phew_prefix/${phew_pc_to_prefix}" "/phew_prefix")
string(REGEX REPLACE "/$" "" phew_pc_to_prefix "${phew_pc_to_prefix}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(phew_pc_libdir "${CMAKE_INSTALL_LIBDIR}")
else()
  set(phew_pc_libdir "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(phew_pc_includedir "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(phew_pc_includedir "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

# MPI: the pkg-config module of the MPI found (Open MPI's ompi-c on Debian, MPICH's mpich),
# else its libraries by path. Only a static link needs it (phew.h does not include mpi.h).
set(phew_pc_requires_private "")
set(phew_pc_libs_private "")
set(PHEW_PKG_CONFIG_MPI "" CACHE INTERNAL "the pkg-config module of MPI's C library (phew.pc)")
if(PHEW_ENABLE_MPI)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    foreach(module ompi-c mpich mpi-c mpi)
      execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --exists ${module}
                      RESULT_VARIABLE phew_pc_missing OUTPUT_QUIET ERROR_QUIET)
      if(phew_pc_missing EQUAL 0)
        set(phew_pc_requires_private "${module}")
        set(PHEW_PKG_CONFIG_MPI "${module}" CACHE INTERNAL "the pkg-config module of MPI's C library (phew.pc)")
        break()
      endif()
    endforeach()
  endif()
  if(NOT phew_pc_requires_private)
    foreach(library IN LISTS MPI_C_LIBRARIES)
      string(APPEND phew_pc_libs_private " ${library}")
    endforeach()
  endif()
endif()
if(phew_with_openmp)
  string(APPEND phew_pc_libs_private " ${PHEW_OPENMP_C_FLAGS}")
endif()
string(APPEND phew_pc_libs_private " -lm")
string(STRIP "${phew_pc_libs_private}" phew_pc_libs_private)

configure_file("${CMAKE_CURRENT_LIST_DIR}/phew.pc.in" "${CMAKE_BINARY_DIR}/pkgconfig/phew.pc" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/pkgconfig/phew.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(phew_with_catalyst)
  configure_file("${CMAKE_CURRENT_LIST_DIR}/phew_catalyst.pc.in" "${CMAKE_BINARY_DIR}/pkgconfig/phew_catalyst.pc" @ONLY)
  install(FILES "${CMAKE_BINARY_DIR}/pkgconfig/phew_catalyst.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()
if(phew_with_catalyst_fortran)
  configure_file("${CMAKE_CURRENT_LIST_DIR}/phew_catalyst_fortran.pc.in"
                 "${CMAKE_BINARY_DIR}/pkgconfig/phew_catalyst_fortran.pc" @ONLY)
  install(FILES "${CMAKE_BINARY_DIR}/pkgconfig/phew_catalyst_fortran.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()
