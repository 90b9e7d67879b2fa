#!/usr/bin/env bash
# Time and peak resident memory of `simulate` and `collective` as the GPU count grows to the
# documented limit (2^20 GPUs), under a virtual-memory cap so that a run past the budget
# ends instead of taking the machine. Prints one line per run: what, GPUs, exit status,
# seconds, peak RSS in MB, and the first line of stderr. The per-item sizes of
# sim/memory_budget.h come from such runs: (RSS - RSS at 2 GPUs) / flows.
#
#   bench/scale_memory.sh [BUILD_DIR]    (default build/)
set -u
build=${1:-build}
trainsim="$build/trainsim"
cap_kb=${SCALE_MEMORY_CAP_KB:-12000000}
config="--config-dir $(dirname "$0")/../configs"

run() {
  local what=$1 gpus=$2
  shift 2
  local out
  out=$(mktemp)
  (ulimit -v "$cap_kb"; /usr/bin/time -f "%e %M" -o "$out.time" "$trainsim" $config "$@" >/dev/null 2>"$out")
  local status=$?
  read -r seconds rss_kb <"$out.time" 2>/dev/null || { seconds=?; rss_kb=0; }
  printf '%-28s %8s  exit %d  %7ss  %7d MB  %s\n' "$what" "$gpus" "$status" "$seconds" $((rss_kb / 1024)) \
    "$(grep -v '^Command' "$out" | head -c 160 | head -1)"
  rm -f "$out" "$out.time"
}

for gpus in 8192 32768 1048576; do
  nodes=$((gpus / 8))
  cluster="--set nodes=$nodes --set inter_node.switch_radix=256"
  run "collective cluster only" "$gpus" collective --cluster dgx-h100 $cluster --op all_reduce --gpus 2 -b 1M -e 1M
  run "collective all_reduce 1G" "$gpus" collective --cluster dgx-h100 $cluster --op all_reduce --gpus "$gpus" -b 1G -e 1G
  run "collective ring 1G" "$gpus" collective --cluster dgx-h100 $cluster --op all_reduce --gpus "$gpus" -b 1G -e 1G --algo ring
  plan="llama3-8b-dgx-h100 --set cluster.nodes=$nodes --set cluster.inter_node.switch_radix=256
        --set parallelism.gpus=$gpus --set parallelism.tp=1 --set parallelism.pp=1 --set parallelism.cp=1 --set parallelism.dp=auto
        --set training.global_batch_size=$gpus --set parallelism.ddp_bucket_size=40e6"
  run "simulate dp, 40M buckets" "$gpus" simulate $plan --symmetric
  run "simulate dp full" "$gpus" simulate $plan
done
