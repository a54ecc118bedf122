#!/usr/bin/env bash
# Install what is missing, build, and run the whole test suite (ctest: GoogleTest for the
# core, command-line checks, pvbatch tests of the plugin).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd build
ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" "$@"
