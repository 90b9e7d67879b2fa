#!/usr/bin/env python3
"""Writes configs/validation/expected_error.yaml from the JSON of
`trainsim validate training --fit-rate-fraction --json FILE`: per software stack and GPU type,
the rows' mean absolute and mean signed error with each source held out (what `simulate` and
`sweep` print as the expected error), as errors of the predicted iteration time whatever each
source publishes (positive: predicted slower than it ran). A source with no held-out fraction
(the only source of a GPU type without a stack) counts at its in-sample error, as the fit's
overall figure does.

usage: expected_error_from_fit.py FIT.json > configs/validation/expected_error.yaml
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
    print('command: "trainsim validate training --fit-rate-fraction --json FIT.json"')
    print("default_stacks: [" + ", ".join(DEFAULT_STACKS) + "]")
    print("groups:")
    for group in fit["gpus"]:
        rows = sum(source["rows"] for source in group["sources"])
        mape = sum(source["rows"] * source["time_mape_held_out"] for source in group["sources"])
        bias = sum(source["rows"] * source["time_bias_held_out"] for source in group["sources"])
        stack = group["stack"]
        print("  - {" + (f"stack: {stack}, " if stack else "") + f"gpu: {group['gpu']}, sources: {len(group['sources'])}, "
              f"rows: {rows}, held_out_mape: {mape / rows:.4f}, held_out_bias: {bias / rows:.4f}" + "}")


if __name__ == "__main__":
    main()
