#!/usr/bin/env bash
# Runs the test suite once more under AddressSanitizer and UndefinedBehaviorSanitizer, in
# ./build-sanitize (scripts/configure-sanitize.sh): any memory error, leak or undefined
# behaviour a test reaches fails that test. docs/testing.md.
#   bash scripts/sanitize.sh [MODULE...|all]
# By default (CI) the tests of the libraries (base topology sim perf parallelism goodput
# calibrate validation), where every reader and model is. `all` adds cli and sweep, whose end-to-end tests run the
# `trainsim` executable (4 more minutes of build on two cores). The tests that take over 5 s
# under the sanitizers (the validation suites' simulations of every published row,
# exhaustive sweeps; each still runs in the ordinary pass of scripts/test.sh) are left out.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TRAINSIM_JOBS:-2}
modules=("$@")
[ ${#modules[@]} -eq 0 ] && modules=(base topology sim perf parallelism goodput calibrate validation)
[ "${modules[*]}" = all ] && modules=(base topology sim perf parallelism goodput calibrate validation cli sweep)

bash scripts/configure-sanitize.sh
cmake --build build-sanitize -j"$jobs" --target "${modules[@]/%/_tests}"

slow='^(TrainingSuiteTest\.|UnpublishedPlanChoiceTest\.)'
slow+='|^SweepTest\.(BestPlanIsTheOptimumOverEverySimulatedPlan|ParetoFrontHoldsExactlyTheUndominatedPlans'
slow+='|DeadlineDropsSlowPlansWithAReason)$'
slow+='|^SweepCommandTest\.(OutputDoesNotDependOnTheThreadCount|ComparesClustersAndGpuCountsByCost)$'
slow+='|^CliTest\.(ValidatePrintExperimentGivesTheYamlTheRowSimulates|ValidateFitRateFractionFitsEachGpuTypeToItsRows)$'
slow+='|^MicrobatchExtrapolationTest\.(ABentStartIsDetectedAndSkipped|ThreadsDoNotChangeABentStart)$'
slow+='|^CommunicationFitTest\.RecoversKnownParametersFromLogsAndPredictsAnUnmeasuredGroup$'
slow+='|^CollectiveTransferTest\.FitsTheSmallRunsOfEverySystemAndPredictsItsLargeOnes$'
slow+='|^CalibrateCommand\.OtherCommandsSayTheCalibrationIsInForce$'
slow+='|^PlanEnumeratorTest\.EnumeratesExactlyTheValidPlansOfABruteForceFilter$'
slow+='|^MoeTrainingSuiteTest\.DeepSeekV3OnItsOwnH800ClusterStaysNearItsDocumentedError$'
slow+='|gpt3-175b-selene"$'
labels=$(IFS='|'; echo "^(${modules[*]})\$")

# A sanitizer report exits 86, so that a test expecting exit 1 (an internal error) cannot
# take one for its own failure.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:exitcode=86}
ctest --test-dir build-sanitize -j"$jobs" --output-on-failure -L "$labels" -E "$slow"
