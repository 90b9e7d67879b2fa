#!/usr/bin/env python3
"""Writes Qi et al.'s published 1F1B, ZB-1p and ZB-V runs (Tables 4, 6 and 7) (docs/sources/zero-bubble-qi2024.yaml)
as the training suite's source configs/validation/training/zero-bubble-qi2024.yaml.

Each run is the experiment scripts/validation/zero_bubble_paper.py simulates (the same
assumptions), its published samples per GPU per second as tokens per second per GPU (x 1,024,
the sequence length), and its published memory. ZB-1p is run as `zero_bubble` (torch's fixed
ZB1P order, not the paper's searched schedule), ZB-V as `zbv`. Left out: ZB-2p (a schedule
searched under twice 1F1B's memory, not modelled) and 1F1B-I (one layer per chunk over stages of
uneven layer counts, which Megatron-LM's interleaving does not take).

usage: zero_bubble_suite_rows.py > configs/validation/training/zero-bubble-qi2024.yaml
"""
import os
import sys

import yaml

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zero_bubble_paper import SOURCE, experiment  # noqa: E402

HEADER = """\
# Qi et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024, arXiv:2401.10241): their 1F1B, ZB-1p
# and ZB-V runs on Megatron-LM
# Rows of the training validation suite (`trainsim validate training`); ../README.md describes the schema.
# Written by scripts/validation/zero_bubble_suite_rows.py from docs/sources/zero-bubble-qi2024.yaml
# (the authors' PDF, sail-sg/zero-bubble-pipeline-parallelism paper.pdf @ 3a91d0c8, Tables 3, 4
# and 6, transcribed digit for digit); edit that file and rerun the script.
#
# GPT-3-like models (Table 3: 1.5B to 28.3B, sequence 1,024) with pure pipeline parallelism
# (GPUs = stages: an inference, the paper does not say so in words) on 8 to 32 A100 SXM 80GB in
# 4 nodes on RoCE (DGX A100 nodes here), one layer fewer on the pipeline's ends than in the
# middle (as the paper places them; ZB-V's ends, two chunks per GPU in a V, then hold none).
# Table 4: 1F1B and ZB-1p (the schedule the authors' search finds under 1F1B's activation
# memory) at the micro-batch sizes of Table 3; Table 6: 1F1B, ZB-1p and ZB-V on 16, 24 and 32
# GPUs with micro-batch 6, 2, 2 (layers and sequence length not restated there: Table 3's);
# Table 7: the three at half Table 6's micro-batch (3, 1, 1; no memory published).
# ZB-1p runs as `zero_bubble` (torch.distributed.pipelining's fixed ZB1P order: the split of the
# backward, not the paper's searched order), ZB-V as `zbv` (torch's ScheduleZBVZeroBubble, the
# paper's ZB-V order). The published samples per GPU per second are compared as tokens (x 1,024).
# Not published, assumed: vocabulary 51,200, fp16, unfused attention (the paper's Table 1 counts
# the attention scores' 5 a s^2 b bytes; with fused attention the memory comes out 27% low),
# no recomputation. docs/pipeline-schedules.md, "Against Qi et al.'s measurements", has the
# predictions made before this source joined the suite.
# Validation only (README: rate_fit): predicted at the kernel-rate fractions the dense sources
# give, so that a pipeline-schedule source does not move the A100's fraction.
"""

SCHEDULES = {"1f1b": "1F1B", "zero_bubble": "ZB-1p", "zbv": "ZB-V"}


def rows_of(data):
    """(model, gpus, micro-batch size, micro-batches, schedule, samples/GPU/s, memory GB, table)."""
    models = {model["name"]: model for model in data["models"]}
    for row in data["results"]:  # [ZB-2p, ZB-1p, 1F1B, 1F1B-I]
        model = models[row["model"]]
        for schedule, position in (("1f1b", 2), ("zero_bubble", 1)):
            yield (model, model["gpus"], model["micro_batch_size"], row["microbatches"], schedule,
                   row["samples_per_gpu_s"][position], row["memory_GB"][position], "Table 4")
    settings = {setting["model"]: setting for setting in data["zbv_settings"]}
    for row in data["zbv_results"]:  # [ZB-V, ZB-2p*, ZB-1p, 1F1B]
        model, setting = models[row["model"]], settings[row["model"]]
        for schedule, position in (("1f1b", 3), ("zero_bubble", 2), ("zbv", 0)):
            yield (model, setting["gpus"], setting["micro_batch_size"], row["microbatches"], schedule,
                   row["samples_per_gpu_s"][position], row["memory_GB"][position], "Table 6")
    for row in data["zbv_half_microbatch"]:  # [ZB-V, ZB-1p, 1F1B], no memory published
        model = models[row["model"]]
        for schedule, position in (("1f1b", 2), ("zero_bubble", 1), ("zbv", 0)):
            yield (model, row["gpus"], row["micro_batch_size"], row["microbatches"], schedule,
                   row["samples_per_gpu_s"][position], None, "Table 7")


def main():
    with open(SOURCE) as source:
        data = yaml.safe_load(source)
    seq_len = data["seq_len"]
    rows = []
    for number, (model, gpus, b, m, schedule, samples, memory_gb, table) in enumerate(rows_of(data), start=1):
        row_id = f"zero-bubble-qi2024-{number:03d}"
        spec = experiment(model, gpus, b, seq_len, m, schedule, flash=False)
        spec["name"] = row_id
        spec["model"]["name"] = f"{model['name']} {SCHEDULES[schedule]}"  # the suite's rows by their schedule
        spec["description"] = f"{model['name']} {SCHEDULES[schedule]}, {gpus} A100, {m} micro-batches of {b} ({table})"
        chunks = 2 * gpus if schedule == "zbv" else gpus
        ends = spec["parallelism"]["first_stage_layers"]
        split = ("V: " if schedule == "zbv" else "") + f"{ends} + {chunks - 2} x {ends + 1} + {ends}"
        rows.append({
            "id": row_id,
            "model": f"{model['name']} {SCHEDULES[schedule]}",
            "published": {"tokens_per_s_per_gpu": round(samples * seq_len, 6)},
            "slow": False,
            "assumptions": (f"{SCHEDULES[schedule]} as {schedule}; split {split} layers; pure pipeline "
                            f"parallelism; vocabulary 51,200, fp16, unfused attention (not published); "
                            f"{samples} samples/GPU/s x 1,024 tokens"
                            + (f"; memory {memory_gb} GB read as 10^9 bytes" if memory_gb is not None else "")),
            "experiment": spec,
        })
        if memory_gb is not None:
            rows[-1]["published"]["peak_memory_GiB"] = round(memory_gb * 1e9 / 2**30, 3)
    source = {
        "id": "zero-bubble-qi2024",
        "title": "Qi et al. 2024, zero-bubble pipelines (A100)",
        "citation": ("Qi, Wan, Huang, Lin, \"Zero Bubble Pipeline Parallelism\", ICLR 2024, arXiv:2401.10241, "
                     "Tables 3, 4, 6 and 7 (the authors' PDF, sail-sg/zero-bubble-pipeline-parallelism paper.pdf @ "
                     "3a91d0c8; transcribed in docs/sources/zero-bubble-qi2024.yaml)"),
        "metric": "tokens_per_s_per_gpu",
        "metric_definition": "samples per GPU per second (x 1,024 tokens), after several warm-up iterations",
        "memory_definition": "Memory (GB), not defined further in the paper; read as 10^9 bytes",
        "rate_fit": False,
        "rows": rows,
    }
    sys.stdout.write(HEADER + "\n")
    yaml.safe_dump(source, sys.stdout, sort_keys=False, width=110, allow_unicode=True)


if __name__ == "__main__":
    main()
