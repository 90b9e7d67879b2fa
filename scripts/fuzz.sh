#!/usr/bin/env bash
# Runs each libFuzzer target of fuzz/ for a bounded time from its corpus in fuzz/corpus/,
# in ./build-sanitize (scripts/configure-sanitize.sh: ASan + UBSan), the targets side by
# side. Any crash, sanitizer report, leak, escaping exception, hang (-timeout) or memory
# blow-up (-rss_limit_mb) fails the run and leaves the input that causes it under
# build-sanitize/fuzz/findings/. docs/testing.md.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]   (default: 60 s, every target)
# New inputs the fuzzer finds stay under build-sanitize/fuzz/corpus/, not in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(experiment hf_config nccl_tests_log)
jobs=${TRAINSIM_JOBS:-2}

bash scripts/configure-sanitize.sh
cmake --build build-sanitize -j"$jobs" --target "${targets[@]/#/fuzz_}"

work=build-sanitize/fuzz
mkdir -p "$work/findings"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
pids=()
for target in "${targets[@]}"; do
  mkdir -p "$work/corpus/$target"
  # -timeout: one input over 10 s is a hang; -rss_limit_mb: over 2 GiB is a blow-up.
  "build-sanitize/fuzz_$target" "$work/corpus/$target" "fuzz/corpus/$target" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/findings/$target-" \
    >"$work/$target.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
  target=${targets[$i]}
  log="$work/$target.log"
  if wait "${pids[$i]}"; then
    echo "fuzz: $target: $(grep -m1 -o 'Done [0-9]* runs in [0-9]* second(s)' "$log"), no finding"
  else
    echo "fuzz: $target: FINDING (log: $log)" >&2
    grep -E 'ERROR|SUMMARY|Test unit written|runtime error' "$log" | head -20 >&2 || true
    failed=$((failed + 1))
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: findings in $failed of ${#targets[@]} targets; reproduce with build-sanitize/fuzz_TARGET FILE" >&2
  exit 1
fi
echo "fuzz: no finding in ${#targets[@]} targets, ${seconds} s each"
