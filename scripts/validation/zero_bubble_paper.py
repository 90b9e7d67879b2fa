#!/usr/bin/env python3
"""Predicts Qi et al.'s published 1F1B and zero-bubble runs (docs/sources/zero-bubble-qi2024.yaml)
with `trainsim simulate` and prints the comparison table of docs/pipeline-schedules.md.

Each run is written as an experiment: the paper's GPT-like model (ffn 4 h, vocabulary 51,200:
not published), sequence 1024, pure pipeline parallelism with one layer fewer on the first and
last stages, fp16, unfused attention (its Table 1 counts the 5 a s^2 b bytes of the attention
scores; `--flash` runs fused attention instead), on DGX A100 nodes. The paper's ZB-1p (its
searched schedule under 1F1B's memory) is compared with trainsim's `zero_bubble` (torch's fixed
ZB1P order): a like-for-like comparison of what splitting the backward buys, not of the order.

usage: zero_bubble_paper.py TRAINSIM [--flash]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "docs", "sources", "zero-bubble-qi2024.yaml")
ZB_1P, ONE_F_ONE_B = 1, 2  # positions in the source's lists


def experiment(model, seq_len, microbatches, schedule, flash):
    per_stage = (model["layers"] + 2) // model["gpus"]
    return {
        "name": f"qi2024-{model['name']}-{microbatches}-{schedule}",
        "model": {"name": f"gpt-{model['name']}", "architecture": "gpt", "layers": model["layers"],
                  "hidden_size": model["hidden_size"], "attention_heads": model["attention_heads"],
                  "vocab_size": 51200},
        "cluster": "dgx-a100",
        "training": {"seq_len": seq_len, "global_batch_size": model["micro_batch_size"] * microbatches,
                     "micro_batch_size": model["micro_batch_size"], "precision": "fp16",
                     "flash_attention": flash},
        "parallelism": {"gpus": model["gpus"], "tp": 1, "pp": model["gpus"], "dp": 1, "schedule": schedule,
                        "recompute": "none", "first_stage_layers": per_stage - 1,
                        "last_stage_layers": per_stage - 1},
    }


def simulate(trainsim, spec, nodes, directory):
    path = os.path.join(directory, spec["name"] + ".yaml")
    with open(path, "w") as out:
        yaml.safe_dump(spec, out, sort_keys=False)
    run = subprocess.run([trainsim, "simulate", path, "--set", f"cluster.nodes={nodes}", "--json", "-"],
                         capture_output=True, text=True, check=False)
    if run.returncode not in (0, 3):  # 3: does not fit, still simulated
        sys.exit(run.stderr)
    result = json.loads(run.stdout)
    samples = spec["training"]["global_batch_size"] / (result["iteration_time_s"] * spec["parallelism"]["gpus"])
    return samples, result["memory"]["peak_bytes_per_gpu"] / 1e9


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    trainsim, flash = sys.argv[1], "--flash" in sys.argv[2:]
    with open(SOURCE) as source:
        data = yaml.safe_load(source)
    models = {model["name"]: model for model in data["models"]}
    print("| model | m | 1F1B published | predicted | error | ZB-1p published | zero_bubble predicted "
          "| speedup published | predicted | memory GB 1F1B / ZB-1p published | predicted 1f1b / zero_bubble |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    throughput_errors, speedup_errors, memory_errors = [], [], []
    with tempfile.TemporaryDirectory() as directory:
        for row in data["results"]:
            model = models[row["model"]]
            nodes = max(1, model["gpus"] // 8)
            m = row["microbatches"]
            base, base_memory = simulate(trainsim, experiment(model, data["seq_len"], m, "1f1b", flash), nodes, directory)
            split, split_memory = simulate(trainsim, experiment(model, data["seq_len"], m, "zero_bubble", flash), nodes,
                                           directory)
            published, published_zb = row["samples_per_gpu_s"][ONE_F_ONE_B], row["samples_per_gpu_s"][ZB_1P]
            memory = row["memory_GB"]
            throughput_errors.append(base / published - 1.0)
            speedup_errors.append((split / base) / (published_zb / published) - 1.0)
            memory_errors += [base_memory / memory[ONE_F_ONE_B] - 1.0, split_memory / memory[ZB_1P] - 1.0]
            print(f"| {model['name']} | {m} | {published} | {base:.3g} | {100 * throughput_errors[-1]:+.1f}% "
                  f"| {published_zb} | {split:.3g} | {published_zb / published:.3f} | {split / base:.3f} "
                  f"| {memory[ONE_F_ONE_B]} / {memory[ZB_1P]} | {base_memory:.1f} / {split_memory:.1f} |")

    def summary(errors):
        return f"{100 * statistics.mean(abs(e) for e in errors):.1f}% (bias {100 * statistics.mean(errors):+.1f}%)"

    print(f"\n1F1B samples/GPU/s: {summary(throughput_errors)}; speedup of splitting the backward: "
          f"{summary(speedup_errors)}; peak memory: {summary(memory_errors)} over {len(data['results'])} runs")


if __name__ == "__main__":
    main()
