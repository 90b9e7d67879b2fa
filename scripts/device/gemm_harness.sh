#!/usr/bin/env bash
# Runs trainsim-calib-gemm on a lent GPU machine over the GEMM shapes of every training-suite
# row of one GPU type, at the rows' own precisions (bf16 and fp8 in two results files).
#
#   scripts/device/gemm_harness.sh prepare h100   # here: bundle the harness, its libraries
#                                                 #   and the rows' experiments into .devbundle/
#   scripts/device/gemm_harness.sh run            # there, from the repository root, with
#                                                 #   .devbundle carried; writes into $OUT
#
# The harness is built here (docs/harness.md) against CUDA 13; the machine there has the
# CUDA 13 runtime and cuBLASLt but not Debian's yaml-cpp, spdlog and fmt, which travel.
set -euo pipefail
cd "$(dirname "$0")/../.."
bundle=.devbundle

prepare() {
  local gpu=$1
  [[ -x build/trainsim-calib-gemm ]] || { echo "build/trainsim-calib-gemm not built (docs/harness.md)" >&2; exit 1; }
  rm -rf "$bundle" && mkdir -p "$bundle/lib" "$bundle/exps"
  grep -qx "/$bundle/" .git/info/exclude 2>/dev/null || echo "/$bundle/" >>.git/info/exclude
  strip -o "$bundle/trainsim-calib-gemm" build/trainsim-calib-gemm
  for lib in yaml-cpp spdlog fmt; do
    cp -L "$(ldd build/trainsim-calib-gemm | awk -v l="lib$lib.so" 'index($1, l) == 1 {print $3}')" "$bundle/lib/"
  done
  : >"$bundle/bf16.args"
  : >"$bundle/fp8.args"
  local ids id precision
  ids=$(grep -h '^  - id:' configs/validation/training/*.yaml | awk '{print $3}')
  for id in $ids; do
    # The first line is a comment naming the row's --set (only cluster.nodes): the GEMM
    # shapes do not depend on it, so one large cluster.nodes serves every row.
    build/trainsim validate training --print-experiment --row "$id" | sed 1d >"$bundle/exps/$id.yaml"
    if grep -q "^cluster: .*$gpu" "$bundle/exps/$id.yaml"; then
      precision=$(awk '$1 == "precision:" {print $2; exit}' "$bundle/exps/$id.yaml")
      echo -n " --experiment exps/$id.yaml" >>"$bundle/$precision.args"
    else
      rm "$bundle/exps/$id.yaml"
    fi
  done
  echo "$bundle: $(ls "$bundle/exps" | wc -l) experiments, $(du -sh "$bundle" | cut -f1)"
}

run() {
  local here=$PWD
  { date -u; nvidia-smi; nvidia-smi -q -d POWER,CLOCK,PERFORMANCE; } >"$OUT/env.txt" 2>&1
  local cublas
  cublas=$(find /usr/local/cuda* /usr/lib /opt -name 'libcublasLt.so.13*' 2>/dev/null | head -1)
  export LD_LIBRARY_PATH=$here/$bundle/lib:$(dirname "$cublas"):/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  export TRAINSIM_CONFIG_DIR=$here/configs
  nvidia-smi dmon -s pc -d 1 >"$OUT/dmon.txt" 2>&1 &
  local dmon=$!
  cd "$bundle"
  for precision in bf16 fp8; do
    [[ -s $precision.args ]] || continue
    # shellcheck disable=SC2046
    timeout 300 ./trainsim-calib-gemm $(cat "$precision.args") --set cluster.nodes=2048 \
      -o "$OUT/gemm-$precision.yaml" >>"$OUT/harness.log" 2>&1 || echo "$precision: exit $?" >>"$OUT/harness.log"
  done
  kill "$dmon"
}

case ${1:-} in
  prepare) prepare "${2:?GPU name as in the cluster presets, e.g. h100}" ;;
  run) run ;;
  *) echo "usage: $0 prepare GPU | run" >&2; exit 2 ;;
esac
