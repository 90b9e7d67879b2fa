#!/usr/bin/env bash
# Installs the Debian packages trainsim builds with (clang and its sanitizer and libFuzzer
# runtimes for scripts/sanitize.sh and scripts/fuzz.sh). Idempotent: installs only what is
# missing and stays quiet when everything is there. Runs apt-get through sudo when not root.
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config
  libyaml-cpp-dev libboost-graph-dev libeigen3-dev
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
  clang libclang-rt-14-dev
)

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
