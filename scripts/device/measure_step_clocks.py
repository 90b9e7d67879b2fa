#!/usr/bin/env python3
"""Records the GPU's SM clock and board power (nvidia-smi dmon, one sample a second) while it
runs, one after the other with idle gaps: a back-to-back bf16 GEMM loop, eager training steps
of a Llama-style model (measure_gpu.py's, 12 x 4,096, seq 4,096), and a memory-bound copy
loop. It shows what clock each kind of load holds under the board's power limit: the GEMM
loop's against a whole training step's, which mixes GEMMs with attention, element-wise
kernels and the optimizer.

Writes the phases (UTC start and end, work done) to a JSON file (argument 1) and the dmon
samples beside it (same name, .dmon.txt).
"""
import json
import os
import subprocess
import sys
import time

os.environ["MEASURE_SECTIONS"] = "none"  # import measure_gpu's model without running its sections
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_gpu  # noqa: E402

import torch  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "step_clocks.json"
results = {"device": torch.cuda.get_device_name(0), "phases": []}


def utc():
    return time.strftime("%H:%M:%S", time.gmtime())


def run_phase(name, body, seconds, work_per_call=None):
    time.sleep(3.0)  # idle: the clock recovers between loads
    torch.cuda.synchronize()
    start, t0, calls = utc(), time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        body()
        calls += 1
        if calls % 5 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    phase = {"name": name, "start_utc": start, "end_utc": utc(), "calls": calls, "seconds": elapsed,
             "seconds_per_call": elapsed / calls}
    if work_per_call:
        phase["tflops"] = work_per_call * calls / elapsed / 1e12
    results["phases"].append(phase)
    with open(OUT, "w") as f:
        json.dump(results, f, indent=1)
    print(phase, flush=True)


dmon = subprocess.Popen(["nvidia-smi", "dmon", "-s", "pc", "-d", "1", "-o", "T"],
                        stdout=open(OUT.replace(".json", "") + ".dmon.txt", "w"), stderr=subprocess.STDOUT)
try:
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)

    def gemms():
        for _ in range(10):
            torch.mm(a, b)
    run_phase("gemm_8192_bf16", gemms, 20.0, work_per_call=10 * 2.0 * n ** 3)
    del a, b

    cfg = {"layers": 12, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "vocab": 128256,
           "batch": 1, "seq": 4096}
    torch.manual_seed(0)
    model = measure_gpu.Llama(cfg["layers"], cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["ffn"],
                              cfg["vocab"]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    tokens = torch.randint(0, cfg["vocab"], (1, cfg["seq"]), device="cuda")
    labels = torch.randint(0, cfg["vocab"], (1, cfg["seq"]), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(tokens, labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    for _ in range(3):
        step()
    run_phase("train_step_llama_12x4096_seq4096_eager", step, 30.0)
    results["train_step_config"] = cfg
    del model, opt
    torch.cuda.empty_cache()

    x = torch.empty(1 << 30, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)

    def copies():
        for _ in range(10):
            y.copy_(x)
    run_phase("copy_2GiB", copies, 10.0)
    time.sleep(3.0)
finally:
    dmon.terminate()
    dmon.wait()
with open(OUT, "w") as f:
    json.dump(results, f, indent=1)
