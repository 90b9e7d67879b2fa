#!/usr/bin/env python3
"""Writes configs/validation/expected_error.yaml from the JSON of
`trainsim validate training --fit-rate-fraction --json FILE`: per software stack and GPU type,
the rows' mean absolute and mean signed error with each source held out (what `simulate` and
`sweep` print as the expected error), as errors of the predicted iteration time whatever each
source publishes (positive: predicted slower than it ran). A source with no held-out fraction
(the only source of a GPU type without a stack) counts at its in-sample error, as the fit's
overall figure does.

With a second file, the JSON of `trainsim validate training --json MOE.json` run on the
mixture-of-experts sources (validation only: never fitted, so every row is out of sample), it
adds one group per GPU type of those rows (`moe: true`), which `simulate` states for MoE models.

usage: expected_error_from_fit.py FIT.json [MOE.json] > configs/validation/expected_error.yaml
"""
import json
import sys

DEFAULT_STACKS = ["megatron-core", "nemo", "mlperf-nvidia"]


def main():
    fit = json.load(open(sys.argv[1]))
    print("# How far to trust a prediction, per software stack and GPU type: the training suite's rows")
    print("# predicted with each source held out (configs/validation/README.md, \"expected_error.yaml\").")
    print("# Written by scripts/validation/expected_error_from_fit.py from the command below; do not edit")
    print("# by hand. Fractions: 0.058 = 5.8%.")
    moe_command = ""
    if len(sys.argv) > 2:
        moe_command = ("; MoE groups: trainsim validate training --json MOE.json with a --row for every row of "
                       "configs/validation/training/*-moe*.yaml")
    print('command: "trainsim validate training --fit-rate-fraction --json FIT.json' + moe_command + '"')
    print("default_stacks: [" + ", ".join(DEFAULT_STACKS) + "]")
    print("groups:")
    for group in fit["gpus"]:
        rows = sum(source["rows"] for source in group["sources"])
        mape = sum(source["rows"] * source["time_mape_held_out"] for source in group["sources"])
        bias = sum(source["rows"] * source["time_bias_held_out"] for source in group["sources"])
        stack = group["stack"]
        print("  - {" + (f"stack: {stack}, " if stack else "") + f"gpu: {group['gpu']}, sources: {len(group['sources'])}, "
              f"rows: {rows}, held_out_mape: {mape / rows:.4f}, held_out_bias: {bias / rows:.4f}" + "}")
    if len(sys.argv) > 2:
        print_moe_groups(json.load(open(sys.argv[2])))


def print_moe_groups(suite):
    """One group per GPU type of the compared mixture-of-experts rows: mean |error| and mean
    signed error of the predicted step time, each row weighing the same."""
    by_gpu = {}
    for row in suite["rows"]:
        if row.get("status") == "compared" and row.get("moe"):
            by_gpu.setdefault(row["gpu"], []).append(row)
    for gpu in sorted(by_gpu):
        rows = by_gpu[gpu]
        errors = [row["step_time_error"] for row in rows]
        sources = len({row["source"] for row in rows})
        mape = sum(abs(e) for e in errors) / len(errors)
        bias = sum(errors) / len(errors)
        print("  - {" + f"moe: true, gpu: {gpu}, sources: {sources}, rows: {len(rows)}, "
              f"held_out_mape: {mape:.4f}, held_out_bias: {bias:.4f}" + "}")


if __name__ == "__main__":
    main()
