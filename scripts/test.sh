#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
ctest --test-dir build -j2 --output-on-failure
