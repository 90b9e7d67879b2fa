#!/usr/bin/env python3
"""Measures one GPU for trainsim's model parameters with PyTorch: GEMM rates (bf16, fp8),
HBM copy bandwidth, fused attention rates (flash and cuDNN backends, forward and backward,
causal), the host's per-op dispatch cost (eager vs CUDA graph replay), and whole training
steps of small Llama-style models (eager and torch.compile) with their kernel counts, GPU
busy time and peak memory.

Writes one JSON file (argument 1, default results.json), rewritten after every section so
that a run cut short still returns what it measured. Needs only PyTorch on a CUDA GPU.
"""
import json
import math
import os
import platform
import sys
import time
import traceback

import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "results.json"
DEADLINE = time.time() + float(os.environ.get("MEASURE_BUDGET_S", "480"))
results = {"started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def save():
    with open(OUT + ".tmp", "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    os.replace(OUT + ".tmp", OUT)


def time_left():
    return DEADLINE - time.time()


def cuda_time_s(fn, warmup=5, iters=20):
    """Mean seconds per call of fn, timed with CUDA events after warm-up."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


# MEASURE_SECTIONS=a,b runs only those sections (all when unset).
SECTIONS = set(filter(None, os.environ.get("MEASURE_SECTIONS", "").split(",")))


def section(name):
    def wrap(body):
        if SECTIONS and name not in SECTIONS:
            return
        if time_left() < 20:
            results[name] = {"skipped": "time budget"}
            save()
            return
        t0 = time.time()
        try:
            results[name] = body()
        except Exception:  # a section that fails must not lose the others
            results[name] = {"error": traceback.format_exc()[-2000:]}
        if isinstance(results[name], dict):
            results[name]["wall_s"] = round(time.time() - t0, 2)
        save()
        print(f"[{name}] {time.time() - t0:.1f} s", flush=True)
        torch.cuda.empty_cache()
    return wrap


def environment():
    p = torch.cuda.get_device_properties(0)
    return {
        "device": torch.cuda.get_device_name(0),
        "sms": p.multi_processor_count,
        "memory_bytes": p.total_memory,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
    }


results["environment"] = environment()
save()


@section("gemm")
def gemm():
    rows = []
    shapes = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
              (16384, 16384, 16384), (8192, 8192, 1024), (8192, 1024, 8192), (16384, 4096, 4096),
              (4096, 14336, 4096), (4096, 4096, 14336), (8192, 28672, 8192), (802816, 192, 768)]
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        iters = max(5, min(200, int(2e13 / (2 * m * n * k))))
        t = cuda_time_s(lambda: a @ b, warmup=10, iters=iters)
        rows.append({"m": m, "n": n, "k": k, "dtype": "bf16", "time_us": t * 1e6,
                     "tflops": 2 * m * n * k / t / 1e12})
        try:  # fp8 e4m3 with per-tensor scales, as torchao's tensorwise float8 runs it
            a8 = a.to(torch.float8_e4m3fn)
            b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()
            one = torch.tensor(1.0, device="cuda")
            f = lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            t8 = cuda_time_s(f, warmup=10, iters=iters)
            rows.append({"m": m, "n": n, "k": k, "dtype": "fp8_e4m3", "time_us": t8 * 1e6,
                         "tflops": 2 * m * n * k / t8 / 1e12})
        except Exception as e:
            rows.append({"m": m, "n": n, "k": k, "dtype": "fp8_e4m3", "error": str(e)[:300]})
        del a, b
    # Steady state: the best square shape run for ~20 s, as clocks settle under power draw.
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t_end = time.time() + 20
    samples = []
    while time.time() < t_end:
        t = cuda_time_s(lambda: a @ b, warmup=0, iters=200)
        samples.append(2 * 8192**3 / t / 1e12)
    return {"rows": rows, "steady_8192_bf16_tflops": samples}


@section("memory_bandwidth")
def memory_bandwidth():
    out = []
    for gib in (0.25, 1, 4):
        n = int(gib * 2**30 / 2)
        x = torch.empty(n, device="cuda", dtype=torch.bfloat16)
        y = torch.empty_like(x)
        t = cuda_time_s(lambda: y.copy_(x), warmup=5, iters=20)
        out.append({"bytes_each_way": n * 2, "time_us": t * 1e6, "read_plus_write_TBps": 2 * n * 2 / t / 1e12})
        # Element-wise kernel reading two, writing one (as a residual add).
        z = torch.empty_like(x)
        t2 = cuda_time_s(lambda: torch.add(x, y, out=z), warmup=5, iters=20)
        out.append({"op": "add", "bytes_moved": 3 * n * 2, "time_us": t2 * 1e6, "TBps": 3 * n * 2 / t2 / 1e12})
        del x, y, z
    return {"rows": out}


@section("attention")
def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    rows = []
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    for backend_name, backend in backends.items():
        for heads, kv_heads, head_dim, batch in ((32, 8, 128, 1), (16, 16, 128, 2), (128, 8, 128, 1)):
            for seq in (1024, 2048, 4096, 8192, 16384):
                if time_left() < 120:
                    break
                if batch * heads * seq > 128 * 16384:
                    continue
                q = torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                k = torch.randn(batch, kv_heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                v = torch.randn(batch, kv_heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                # Executed FLOPs of causal attention: half of 4 b h s^2 d forward; backward 2.5x.
                fwd_flops = 4 * batch * heads * seq * seq * head_dim / 2
                row = {"backend": backend_name, "batch": batch, "heads": heads, "kv_heads": kv_heads,
                       "head_dim": head_dim, "seq": seq, "causal": True}
                try:
                    with sdpa_kernel(backend):
                        gqa = kv_heads != heads

                        def fwd():
                            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)

                        tf = cuda_time_s(fwd, warmup=3, iters=10)
                        o = fwd()
                        g = torch.randn_like(o)

                        def fwd_bwd():
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
                            out.backward(g)

                        tfb = cuda_time_s(fwd_bwd, warmup=3, iters=10)
                    tb = tfb - tf
                    row.update({"forward_us": tf * 1e6, "backward_us": tb * 1e6,
                                "forward_tflops": fwd_flops / tf / 1e12,
                                "backward_tflops": 2.5 * fwd_flops / tb / 1e12})
                except Exception as e:
                    row["error"] = str(e)[:300]
                rows.append(row)
                del q, k, v
    return {"rows": rows}


@section("dispatch")
def dispatch():
    """Host cost per op: tiny ops (GPU work ~1-2 us) issued eagerly from Python, where the
    host's dispatch and launch bind; the same ops replayed from a CUDA graph; and an
    nn.Linear forward+backward of a small layer."""
    out = {}
    x = torch.randn(1024, device="cuda")
    n = 2000

    def many_adds():
        y = x
        for _ in range(n):
            y = y + 1.0
        return y

    many_adds()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        many_adds()
    torch.cuda.synchronize()
    out["eager_add_us_per_op"] = (time.perf_counter() - t0) / (5 * n) * 1e6
    # Host side alone: time to issue without waiting for the GPU.
    t0 = time.perf_counter()
    many_adds()
    out["eager_add_issue_us_per_op"] = (time.perf_counter() - t0) / n * 1e6
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        many_adds()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        many_adds()
    g.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        g.replay()
    torch.cuda.synchronize()
    out["graph_add_us_per_op"] = (time.perf_counter() - t0) / (5 * n) * 1e6
    # Small linear layers, forward + backward, eager: ops per call from the profiler below.
    for hidden in (256, 1024, 2048):
        lin = torch.nn.Linear(hidden, hidden, device="cuda", dtype=torch.bfloat16)
        inp = torch.randn(8, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)

        def step():
            lin(inp).sum().backward()

        for _ in range(20):
            step()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(200):
            step()
        torch.cuda.synchronize()
        out[f"linear{hidden}_fwd_bwd_us"] = (time.perf_counter() - t0) / 200 * 1e6
    return out


class Block(torch.nn.Module):
    """A Llama decoder layer: RMSNorm, GQA attention with RoPE-free SDPA (RoPE's element-wise
    cost aside), RMSNorm, SwiGLU MLP. Written plainly as a user's PyTorch model would be."""

    def __init__(self, hidden, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.norm1 = torch.nn.RMSNorm(hidden)
        self.norm2 = torch.nn.RMSNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, (heads + 2 * kv_heads) * self.head_dim, bias=False)
        self.proj = torch.nn.Linear(hidden, hidden, bias=False)
        self.gate_up = torch.nn.Linear(hidden, 2 * ffn, bias=False)
        self.down = torch.nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        b, s, h = x.shape
        qkv = self.qkv(self.norm1(x))
        q, k, v = qkv.split([self.heads * self.head_dim, self.kv_heads * self.head_dim,
                             self.kv_heads * self.head_dim], dim=-1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv_heads != self.heads)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        gate, up = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class Llama(torch.nn.Module):
    def __init__(self, layers, hidden, heads, kv_heads, ffn, vocab):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.blocks = torch.nn.ModuleList(Block(hidden, heads, kv_heads, ffn) for _ in range(layers))
        self.norm = torch.nn.RMSNorm(hidden)
        self.head = torch.nn.Linear(hidden, vocab, bias=False)

    def forward(self, tokens, labels):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), labels.view(-1))


def train_step_run(cfg, compiled):
    torch.manual_seed(0)
    model = Llama(cfg["layers"], cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["ffn"], cfg["vocab"]).cuda()
    params = sum(p.numel() for p in model.parameters())
    # Mixed precision as the PyTorch-native stacks run it on one GPU: fp32 weights and
    # AdamW states, bf16 autocast, fused AdamW.
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    fwd = torch.compile(model) if compiled else model
    tokens = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), device="cuda")
    labels = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(tokens, labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    t0 = time.time()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    warm_s = time.time() - t0
    torch.cuda.reset_peak_memory_stats()
    iters = 10
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    torch.cuda.synchronize()
    step_s = (time.perf_counter() - t0) / iters
    row = dict(cfg)
    row.update({"compiled": compiled, "params": params, "step_s": step_s, "warmup_s": warm_s,
                "tokens_per_s": cfg["batch"] * cfg["seq"] / step_s,
                "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
                "peak_reserved_bytes": torch.cuda.max_memory_reserved()})
    # One profiled step: kernels launched and the GPU's busy time against the wall.
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    row["kernels_per_step"] = len(kernels)
    row["gpu_kernel_time_s"] = sum(e.device_time for e in kernels) / 1e6
    del model, opt, fwd
    torch.cuda.empty_cache()
    return row


@section("train_steps")
def train_steps():
    rows = []
    configs = [
        {"layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 8, "ffn": 2816, "vocab": 32000, "seq": 2048, "batch": 1},
        {"layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 8, "ffn": 2816, "vocab": 32000, "seq": 2048, "batch": 8},
        {"layers": 16, "hidden": 2048, "heads": 16, "kv_heads": 8, "ffn": 5632, "vocab": 32000, "seq": 2048, "batch": 4},
        {"layers": 16, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "vocab": 128256, "seq": 4096, "batch": 1},
    ]
    # The 16-layer 4.5B model peaks at 81 GB: on an 80 GB card run 12 layers instead.
    if torch.cuda.get_device_properties(0).total_memory < 100e9:
        configs[3]["layers"] = 12
    for cfg in configs:
        if time_left() < 60:
            break
        try:
            rows.append(train_step_run(cfg, compiled=False))
        except Exception as e:
            rows.append({**cfg, "compiled": False, "error": str(e)[:500]})
        results["train_steps_partial"] = rows
        save()
    for cfg in configs[:3]:
        if time_left() < 150:
            break
        try:
            rows.append(train_step_run(cfg, compiled=True))
        except Exception as e:
            rows.append({**cfg, "compiled": True, "error": str(e)[:500]})
        results["train_steps_partial"] = rows
        save()
    results.pop("train_steps_partial", None)
    return {"rows": rows}


def phase_times(model, opt, tokens, labels, fwd, steps=20):
    """Mean seconds of the forward, backward and optimizer phases of a step, each waited
    for on the GPU, and of whole steps issued back to back."""
    def forward():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return fwd(tokens, labels)

    def optimizer():
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(5):
        forward().backward()
        optimizer()
    torch.cuda.synchronize()
    sums = {"forward_s": 0.0, "backward_s": 0.0, "optimizer_s": 0.0}
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = forward()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        loss.backward()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        optimizer()
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        sums["forward_s"] += t1 - t0
        sums["backward_s"] += t2 - t1
        sums["optimizer_s"] += t3 - t2
    row = {k: v / steps for k, v in sums.items()}
    t0 = time.perf_counter()
    for _ in range(steps):
        forward().backward()
        optimizer()
    torch.cuda.synchronize()
    row["step_s"] = (time.perf_counter() - t0) / steps
    from torch.profiler import ProfilerActivity, profile
    counts = {}
    for phase, body in (("forward", forward), ("step", lambda: (forward().backward(), optimizer()))):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            body()
            torch.cuda.synchronize()
        counts[phase] = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    row["kernels_forward"] = counts["forward"]
    row["kernels_per_step"] = counts["step"]
    return row


@section("host_bound_steps")
def host_bound_steps():
    """The small Llama-style models' steps on 16 tokens: the same kernels as at 2,048, each
    of next to no GPU work, so that a phase's time is the host's: its cost per kernel inside
    a training step (Python modules, autograd, the optimizer), beside the bare op's."""
    rows = []
    configs = [
        {"layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 8, "ffn": 2816, "vocab": 32000, "seq": 16, "batch": 1},
        {"layers": 16, "hidden": 2048, "heads": 16, "kv_heads": 8, "ffn": 5632, "vocab": 32000, "seq": 16, "batch": 1},
    ]
    for cfg, compiled in ((configs[0], False), (configs[1], False), (configs[0], True)):
        if time_left() < 60:
            break
        torch.manual_seed(0)
        model = Llama(cfg["layers"], cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["ffn"], cfg["vocab"]).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        fwd = torch.compile(model) if compiled else model
        tokens = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), device="cuda")
        labels = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), device="cuda")
        try:
            row = dict(cfg, compiled=compiled, params=sum(p.numel() for p in model.parameters()))
            row.update(phase_times(model, opt, tokens, labels, fwd))
        except Exception as e:
            row = dict(cfg, compiled=compiled, error=str(e)[:500])
        rows.append(row)
        results["host_bound_steps_partial"] = rows
        save()
        del model, opt, fwd
        torch.cuda.empty_cache()
    results.pop("host_bound_steps_partial", None)
    return {"rows": rows}


results["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
save()
print("done", flush=True)
