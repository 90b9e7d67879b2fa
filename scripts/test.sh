#!/usr/bin/env bash
# Installs what the tests need, builds everything into ./build (the binary, the Python
# module, tests and benchmarks) and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --tests
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINSIM_PYTHON=ON "$@" >/dev/null
cmake --build build -j2
ctest --test-dir build -j2 --output-on-failure
