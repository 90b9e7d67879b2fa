#!/usr/bin/env python3
"""Predicts the eager steps that scripts/device/measure_moe_layer.py measured on two H100
machines (docs/sources/measured/README.md, "The host inside eager MoE steps") and prints the
error of each: the probe experiments of docs/sources/measured/h100-experiments/ under the
megatron-core stack, with each machine's host cost per bare op as dispatch_eager_us.

usage: host_probe_comparison.py [TRAINSIM] [--set KEY=VALUE ...]   (default ./build/trainsim)
"""
import json
import subprocess
import sys

EXPERIMENTS = "docs/sources/measured/h100-experiments/h100-moe-probe-"
# Measured step (forward + backward) in ms, the grouped-GEMM MoE cases with the host reading
# the counts (as Megatron-Core does) and the dense-MLP case: the first machine
# (h100-moe-layer-host-2026-11-27.json, medians of 10 steps) and the second
# (h100-moe-layer-host-2026-11-27-b.json, medians of 30); the third, measured after the
# parameters were fitted on the first two (h100-moe-layer-host-2026-11-27-c.json, medians of 20).
MEASURED = {
    ("qwen3-30b-a3b-ep8-rank", 16): (23.47, 15.67, 17.42),
    ("qwen3-30b-a3b-ep8-rank", 4096): (26.67, 25.37, 26.05),
    ("qwen3-dense-mlp", 16): (7.18, 6.49, 6.54),
    ("qwen3-dense-mlp", 4096): (29.66, 29.70, 29.33),
    ("deepseek-v3-ep8-rank", 16): (10.28, 9.66, 9.78),
    ("deepseek-v3-ep8-rank", 4096): (32.45, 32.82, 32.77),
}
# Each machine's bare eager op, µs: the first machine's kind measured 11.8 (h100-host-dispatch-
# 2026-11-26.json; that machine itself was not measured), the second 10.65 and 7.83 around its
# MoE runs (h100-dispatch-2026-11-27-b.json): their mean, 9.2; the third 8.71 and 7.70
# (h100-dispatch-2026-11-27-c.json): 8.2.
HOST_US = (11.8, 9.2, 8.2)
STEPS = 32  # micro-batches per predicted iteration: the optimizer step falls to 1/32


def predicted_ms(trainsim, case, seq, host_us, extra):
    micro_batch = 1 if case.startswith("deepseek") else 2
    args = [trainsim, "simulate", EXPERIMENTS + case + ".yaml", "--set", f"training.seq_len={seq}",
            "--set", f"training.global_batch_size={STEPS * micro_batch}", "--set", "training.stack=megatron-core",
            "--set", f"training.stack_overrides.compute.dispatch_eager_us={host_us}", *extra, "--json", "-"]
    result = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    return result["iteration_time_s"] / STEPS * 1e3


def main():
    trainsim = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "./build/trainsim"
    extra = [a for a in sys.argv[1:] if a != trainsim]
    print("case                       seq | measured (ms) predicted   error")
    # The dense in-step factor's other two steps: Llama-style models on 16 tokens, forward +
    # backward of h100-host-dispatch-2026-11-26.json (another H100 machine, bare op 11.8 µs).
    for name, ms in (("l8-h1024-b1-eager", 7.687 + 9.782), ("l16-h2048-b4-eager", 15.424 + 24.337)):
        args = [trainsim, "simulate", f"docs/sources/measured/h100-experiments/h100-{name}.yaml", "--set",
                "training.seq_len=16", "--set", "training.micro_batch_size=1", "--set",
                f"training.global_batch_size={STEPS}", "--set", "training.stack=megatron-core", "--set",
                "training.stack_overrides.compute.dispatch_eager_us=11.8", *extra, "--json", "-"]
        result = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        p = result["iteration_time_s"] / STEPS * 1e3
        print(f"{name:24} {16:5} | {ms:13.2f} {p:9.2f} {(p / ms - 1) * 100:+6.1f}%  (2026-11-26)")
    print(f"{'case':24} {'seq':>5} | " + " | ".join(
        f"{'machine %d: measured' % (i + 1):>19} {'predicted':>9} {'error':>7}" for i in range(len(HOST_US))))
    for (case, seq), measured in MEASURED.items():
        cells = []
        for host_us, ms in zip(HOST_US, measured):
            p = predicted_ms(trainsim, case, seq, host_us, extra)
            cells.append(f"{ms:19.2f} {p:9.2f} {(p / ms - 1) * 100:+6.1f}%")
        print(f"{case:24} {seq:5} | " + " | ".join(cells))


main()
