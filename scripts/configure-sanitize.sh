#!/usr/bin/env bash
# Configures ./build-sanitize, the one build that scripts/sanitize.sh and scripts/fuzz.sh
# share: clang, AddressSanitizer + UndefinedBehaviorSanitizer (TRAINSIM_SANITIZE) and
# libFuzzer's instrumentation (TRAINSIM_FUZZ), -O1 with line tables for the reports. Without
# MPI (OpenMPI's own allocations would read as leaks) and without the Python module.
# Installs the dependencies first (clang among them). docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --tests
cmake -S . -B build-sanitize -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DTRAINSIM_SANITIZE=ON -DTRAINSIM_FUZZ=ON \
  -DTRAINSIM_BUILD_BENCH=OFF -DTRAINSIM_PYTHON=OFF -DTRAINSIM_WITH_MPI=OFF -DTRAINSIM_WITH_CUDA=OFF "$@" >/dev/null
