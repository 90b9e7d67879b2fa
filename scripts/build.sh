#!/usr/bin/env bash
# Installs what building needs, configures ./build and builds the trainsim binary only (what
# the main job needs; scripts/test.sh builds the rest). 2 parallel jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j2 --target trainsim
