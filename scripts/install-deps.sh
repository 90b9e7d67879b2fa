#!/usr/bin/env bash
# Installs the Debian packages trainsim needs. Idempotent: installs only what is missing and
# stays quiet when everything is there. Runs apt-get through sudo when not root.
#   install-deps.sh           what building the simulator needs (scripts/build.sh)
#   install-deps.sh --python  and the Python module's (pybind11, Python's headers)
#   install-deps.sh --tests   and what the tests need: the Python module's, pytest, Pillow and
#                             chromium for the HTML report's browser test, clang with its
#                             sanitizer and libFuzzer runtimes (scripts/sanitize.sh, fuzz.sh)
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config
  libyaml-cpp-dev libboost-graph-dev libeigen3-dev
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
)
python_packages=(python3-dev pybind11-dev)
test_packages=(python3-pytest python3-pil chromium clang libclang-rt-14-dev)

for option in "$@"; do
  case "$option" in
    --python) packages+=("${python_packages[@]}") ;;
    --tests) packages+=("${python_packages[@]}" "${test_packages[@]}") ;;
    *) echo "install-deps: unknown option $option (--python, --tests)" >&2; exit 2 ;;
  esac
done

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
