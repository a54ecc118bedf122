#!/usr/bin/env bash
# Install the Debian packages phew needs (only the missing ones), then configure and build
# into build/. Used by scripts/demo.sh and scripts/test.sh; safe to run again.
#   --tests   also install what the test command's format, sanitizer and fuzzing stages
#             need, and build with warnings as errors
set -euo pipefail
cd "$(dirname "$0")/.."
with_tests=0
[ "${1-}" = "--tests" ] && with_tests=1

packages=(
  # compilers, build, tests
  build-essential cmake libgtest-dev googletest
  # MPI
  libopenmpi-dev openmpi-bin
  # ParaView 5.11 (its own VTK) and the -dev packages its CMake config needs
  paraview paraview-dev python3-paraview
  libdouble-conversion-dev liblz4-dev libutfcpp-dev qtbase5-dev libqt5svg5-dev qttools5-dev
  libqt5x11extras5-dev libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libhdf5-dev
  libnetcdf-dev libboost-dev libglew-dev libgl2ps-dev libtheora-dev libxml2-dev libtiff-dev
  libpng-dev libjpeg-dev libfreetype-dev libx11-dev libgl-dev python3-dev python3-mpi4py
  libexpat1-dev liblzma-dev zlib1g-dev qtxmlpatterns5-dev-tools libgdal-dev libqt5opengl5-dev
  # headless rendering, numerics for tests and benchmarks; nanoflann (header only) for the
  # particle benchmark's peer, bench/knn_peer_nanoflann.cpp
  xvfb xauth python3-numpy python3-scipy libnanoflann-dev
  # in situ (catalyst/): FFTW with MPI for the example simulation, gfortran for the adaptor's
  # Fortran module
  libfftw3-dev libfftw3-mpi-dev gfortran
  # simulation snapshots (readers/): HDF5's Open MPI build (the one ParaView loads) with its
  # pkg-config file; h5py for the tests' HDF5 snapshots and the docs' converter
  libhdf5-openmpi-dev pkgconf python3-h5py
  # the Python package (python/): cffi builds its compiled module; pandas for Table.to_pandas,
  # yt for phew.yt, pytest for its tests
  python3-cffi python3-pandas python3-yt python3-pytest
)
if [ "$with_tests" = 1 ]; then
  packages+=(
    # the fuzzing stage (scripts/fuzz.sh): clang with libFuzzer and its sanitizer runtimes
    # (Debian 12 names; only recommended by clang, so listed), llvm-symbolizer for the
    # stack traces of its reports. GCC's ASan/UBSan runtimes come with build-essential.
    clang libclang-rt-14-dev llvm
    # the format stage (scripts/check_format.sh): clang-format 14, the version the
    # .clang-format files are written for (Debian 12's clang-format)
    clang-format
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "phew setup: installing ${#missing[@]} Debian package(s): ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

jobs=$(nproc 2>/dev/null || echo 2)
werror=()
[ "$with_tests" = 1 ] && werror=(-DPHEW_WERROR=ON) # warnings fail the test command (CI)
cmake --preset release "${werror[@]}" # CMakePresets.json: build/, Release
cmake --build --preset release -j"$jobs"
