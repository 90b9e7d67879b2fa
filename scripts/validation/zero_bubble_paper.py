#!/usr/bin/env python3
"""Predicts Qi et al.'s published 1F1B and zero-bubble runs (docs/sources/zero-bubble-qi2024.yaml)
with `trainsim simulate` and prints the comparison tables of docs/pipeline-schedules.md: Table 4's
1F1B and ZB-1p runs, Table 6's ZB-V runs beside 1F1B and ZB-1p at the same settings, and Table 7's
runs of the three at half Table 6's micro-batch.

Each run is written as an experiment: the paper's GPT-like model (ffn 4 h, vocabulary 51,200:
not published), sequence 1024, pure pipeline parallelism with one layer fewer on the first and
last stages, fp16, unfused attention (its Table 1 counts the 5 a s^2 b bytes of the attention
scores; `--flash` runs fused attention instead), on DGX A100 nodes. The paper's ZB-1p (its
searched schedule under 1F1B's memory) is compared with trainsim's `zero_bubble` (torch's fixed
ZB1P order): a like-for-like comparison of what splitting the backward buys, not of the order.
Their ZB-V is trainsim's `zbv` (torch's ScheduleZBVZeroBubble, the same V placement), its 2 x GPUs
model chunks holding one layer fewer at the ends, as Table 3's stages do: none on 30, 46 and 62
layers.

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


def experiment(model, gpus, micro_batch_size, seq_len, microbatches, schedule, flash):
    chunks = 2 * gpus if schedule == "zbv" else gpus  # zbv: two model chunks per GPU in a V
    ends = (model["layers"] + 2) // chunks - 1  # one layer fewer on the pipeline's ends
    return {
        "name": f"qi2024-{model['name']}-{gpus}-{microbatches}-{schedule}",
        "model": {"name": f"gpt-{model['name']}", "architecture": "gpt", "layers": model["layers"],
                  "hidden_size": model["hidden_size"], "attention_heads": model["attention_heads"],
                  "vocab_size": 51200},
        "cluster": "dgx-a100",
        "training": {"seq_len": seq_len, "global_batch_size": micro_batch_size * microbatches,
                     "micro_batch_size": micro_batch_size, "precision": "fp16",
                     "flash_attention": flash},
        "parallelism": {"gpus": gpus, "tp": 1, "pp": gpus, "dp": 1, "schedule": schedule,
                        "virtual_stages": 2 if schedule == "zbv" else 1,
                        "recompute": "none", "first_stage_layers": ends, "last_stage_layers": ends},
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


def summary(errors):
    return f"{100 * statistics.mean(abs(e) for e in errors):.1f}% (bias {100 * statistics.mean(errors):+.1f}%)"


def table4(trainsim, data, models, flash, directory):
    print("| model | m | 1F1B published | predicted | error | ZB-1p published | zero_bubble predicted "
          "| speedup published | predicted | memory GB 1F1B / ZB-1p published | predicted 1f1b / zero_bubble |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    throughput_errors, speedup_errors, memory_errors = [], [], []
    for row in data["results"]:
        model = models[row["model"]]
        gpus, b, m = model["gpus"], model["micro_batch_size"], row["microbatches"]
        nodes = max(1, gpus // 8)

        def run(schedule):
            return simulate(trainsim, experiment(model, gpus, b, data["seq_len"], m, schedule, flash), nodes, directory)

        (base, base_memory), (split, split_memory) = run("1f1b"), run("zero_bubble")
        published, published_zb = row["samples_per_gpu_s"][ONE_F_ONE_B], row["samples_per_gpu_s"][ZB_1P]
        memory = row["memory_GB"]
        throughput_errors.append(base / published - 1.0)
        speedup_errors.append((split / base) / (published_zb / published) - 1.0)
        memory_errors += [base_memory / memory[ONE_F_ONE_B] - 1.0, split_memory / memory[ZB_1P] - 1.0]
        print(f"| {model['name']} | {m} | {published} | {base:.3g} | {100 * throughput_errors[-1]:+.1f}% "
              f"| {published_zb} | {split:.3g} | {published_zb / published:.3f} | {split / base:.3f} "
              f"| {memory[ONE_F_ONE_B]} / {memory[ZB_1P]} | {base_memory:.1f} / {split_memory:.1f} |")
    print(f"\n1F1B samples/GPU/s: {summary(throughput_errors)}; speedup of splitting the backward: "
          f"{summary(speedup_errors)}; peak memory: {summary(memory_errors)} over {len(data['results'])} runs\n")


# Table 6's positions: [ZB-V, ZB-2p*, ZB-1p, 1F1B]
ZBV_ZBV, ZBV_ZB_1P, ZBV_1F1B = 0, 2, 3


def table6(trainsim, data, models, flash, directory):
    settings = {setting["model"]: setting for setting in data["zbv_settings"]}
    print("| model | GPUs | m | 1F1B published | predicted | error | ZB-V / 1F1B published | zbv / 1f1b predicted "
          "| ZB-1p / 1F1B published | zero_bubble / 1f1b predicted | memory GB 1F1B / ZB-1p / ZB-V published "
          "| predicted 1f1b / zero_bubble / zbv |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    throughput_errors, zbv_errors, zb_errors, memory_errors = [], [], [], []
    for row in data["zbv_results"]:
        model, setting = models[row["model"]], settings[row["model"]]
        gpus, b, m = setting["gpus"], setting["micro_batch_size"], row["microbatches"]

        def run(schedule):
            spec = experiment(model, gpus, b, data["seq_len"], m, schedule, flash)
            return simulate(trainsim, spec, max(1, gpus // 8), directory)

        (base, base_memory), (split, split_memory), (v, v_memory) = run("1f1b"), run("zero_bubble"), run("zbv")
        published = row["samples_per_gpu_s"]
        memory = row["memory_GB"]
        throughput_errors.append(base / published[ZBV_1F1B] - 1.0)
        zbv_errors.append((v / base) / (published[ZBV_ZBV] / published[ZBV_1F1B]) - 1.0)
        zb_errors.append((split / base) / (published[ZBV_ZB_1P] / published[ZBV_1F1B]) - 1.0)
        memory_errors += [base_memory / memory[ZBV_1F1B] - 1.0, split_memory / memory[ZBV_ZB_1P] - 1.0,
                          v_memory / memory[ZBV_ZBV] - 1.0]
        print(f"| {model['name']} | {gpus} | {m} | {published[ZBV_1F1B]} | {base:.3g} "
              f"| {100 * throughput_errors[-1]:+.1f}% | {published[ZBV_ZBV] / published[ZBV_1F1B]:.3f} "
              f"| {v / base:.3f} | {published[ZBV_ZB_1P] / published[ZBV_1F1B]:.3f} | {split / base:.3f} "
              f"| {memory[ZBV_1F1B]} / {memory[ZBV_ZB_1P]} / {memory[ZBV_ZBV]} "
              f"| {base_memory:.1f} / {split_memory:.1f} / {v_memory:.1f} |")
    print(f"\n1F1B samples/GPU/s: {summary(throughput_errors)}; speedup of ZB-V: {summary(zbv_errors)}; "
          f"of ZB-1p: {summary(zb_errors)}; peak memory: {summary(memory_errors)} over "
          f"{len(data['zbv_results'])} runs")


def table7(trainsim, data, models, flash, directory):
    print("\n| model | GPUs | b | m | 1F1B published | predicted | error | ZB-V published | zbv predicted | error "
          "| ZB-1p published | zero_bubble predicted | error |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    errors = {"1f1b": [], "zero_bubble": [], "zbv": []}
    for row in data["zbv_half_microbatch"]:  # [ZB-V, ZB-1p, 1F1B]
        model, gpus, b, m = models[row["model"]], row["gpus"], row["micro_batch_size"], row["microbatches"]
        cells = []
        for schedule, position in (("1f1b", 2), ("zbv", 0), ("zero_bubble", 1)):
            spec = experiment(model, gpus, b, data["seq_len"], m, schedule, flash)
            predicted, _ = simulate(trainsim, spec, max(1, gpus // 8), directory)
            published = row["samples_per_gpu_s"][position]
            errors[schedule].append(predicted / published - 1.0)
            cells.append(f"{published} | {predicted:.3g} | {100 * errors[schedule][-1]:+.1f}%")
        print(f"| {model['name']} | {gpus} | {b} | {m} | " + " | ".join(cells) + " |")
    print(f"\nsamples/GPU/s at half the micro-batch: 1F1B {summary(errors['1f1b'])}, ZB-V {summary(errors['zbv'])}, "
          f"ZB-1p {summary(errors['zero_bubble'])} over {len(data['zbv_half_microbatch'])} runs")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    trainsim, flash = sys.argv[1], "--flash" in sys.argv[2:]
    with open(SOURCE) as source:
        data = yaml.safe_load(source)
    models = {model["name"]: model for model in data["models"]}
    with tempfile.TemporaryDirectory() as directory:
        table4(trainsim, data, models, flash, directory)
        table6(trainsim, data, models, flash, directory)
        table7(trainsim, data, models, flash, directory)


if __name__ == "__main__":
    main()
