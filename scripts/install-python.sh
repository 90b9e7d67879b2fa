#!/usr/bin/env bash
# Builds trainsim's Python module for the python3 in PATH (or $PYTHON) into ./build-python and
# makes `import trainsim` work for that interpreter, without network: a trainsim.pth file in
# its site-packages (the active virtual environment's, else the user's) points at the build.
# Run it again after pulling changes. docs/python.md.
set -euo pipefail
cd "$(dirname "$0")/.."
# The packages first: a fresh Debian machine has no python3 until python3-dev brings it.
bash scripts/install-deps.sh --python
python="${PYTHON:-python3}"
interpreter="$("$python" -c 'import sys; print(sys.executable)')"
cmake -S . -B build-python -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINSIM_PYTHON=ON \
  -DPython_EXECUTABLE="$interpreter" -DTRAINSIM_BUILD_TESTS=OFF -DTRAINSIM_BUILD_BENCH=OFF >/dev/null
cmake --build build-python -j2 --target trainsim_python
site_packages="$("$interpreter" - <<'PYTHON'
import site, sys, sysconfig
in_virtual_environment = sys.prefix != sys.base_prefix
if in_virtual_environment or not site.ENABLE_USER_SITE:
    print(sysconfig.get_paths()["purelib"])
else:
    print(site.getusersitepackages())
PYTHON
)"
mkdir -p "$site_packages"
echo "$(pwd)/build-python/python" > "$site_packages/trainsim.pth"
"$interpreter" -c 'import sys, trainsim; print("import trainsim:", trainsim.__file__, "for", sys.executable)'
