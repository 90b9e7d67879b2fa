#!/usr/bin/env python3
"""Times, on one GPU, the pieces of the suite's MoE rows that trainsim prices from byte and
kernel counts without a measurement: Megatron-Core's unfused RoPE (the path YaRN's mscale
and MLA's interleaving take), GPT-OSS's clamped GEGLU and its per-expert bias loop, the
expert GEMMs as one grouped GEMM and as one GEMM per expert, and fused attention at the MoE
models' head shapes (FlashAttention-2 and cuDNN through PyTorch's SDPA).

The code paths are Megatron-LM's at the commit the Bridge rows ran (megatron/core/models/
common/embeddings/rope_utils.py `_apply_rotary_pos_emb_bshd` and `_rotate_half`;
megatron/core/fusions/fused_bias_geglu.py `weighted_bias_quick_geglu_impl` with its clamp;
megatron/core/transformer/moe/experts.py `TEGroupedMLP._apply_bias`), rewritten here in
plain PyTorch with the same op sequence. Shapes are one rank's of the rows named in each
case (tp, ep, micro-batch 1, seq 4,096, balanced routing).

Per case: GPU time per call (CUDA events over back-to-back calls), kernels per call
(torch.profiler), and host time per call on a tiny problem (16 tokens: the host binds).
Writes one JSON file (argument 1), rewritten after each section.
"""
import json
import math
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "moe_pieces.json"
DEADLINE = time.time() + float(os.environ.get("MEASURE_BUDGET_S", "300"))
results = {"started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
BF16 = torch.bfloat16


def save():
    with open(OUT + ".tmp", "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    os.replace(OUT + ".tmp", OUT)


def time_left():
    return DEADLINE - time.time()


def cuda_time_s(fn, warmup=3, iters=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def host_time_s(fn, iters=200):
    """Wall seconds per call of fn on a problem small enough that the host binds."""
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters


def kernels_per_call(fn, listing=None):
    """Kernels one call launches and their summed GPU seconds; with `listing` (a list), each
    kernel's name and microseconds appended to it in launch order."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if listing is not None:
        for e in sorted(events, key=lambda e: e.time_range.start):
            listing.append([e.name[:90], round(e.device_time, 2)])
    return len(events), sum(e.device_time for e in events) / 1e6


# MEASURE_SECTIONS=a,b runs only those sections (all when unset).
SECTIONS = set(filter(None, os.environ.get("MEASURE_SECTIONS", "").split(",")))


def section(name):
    def wrap(body):
        if SECTIONS and name not in SECTIONS:
            return
        if time_left() < 15:
            results[name] = {"skipped": "time budget"}
            save()
            return
        t0 = time.time()
        try:
            results[name] = body()
        except Exception:
            results[name] = {"error": traceback.format_exc()[-2000:]}
        if isinstance(results[name], dict):
            results[name]["wall_s"] = round(time.time() - t0, 2)
        save()
        print(f"[{name}] {time.time() - t0:.1f} s", flush=True)
        torch.cuda.empty_cache()
    return wrap


def measure(make, label):
    """make(tokens) -> (forward, forward_and_backward) closures; times both at the row's
    size and on 16 tokens (host)."""
    row = {"case": label}
    fwd, fwd_bwd, tokens, bytes_fwd = make(None)
    row["tokens"] = tokens
    row["forward_bytes_min"] = bytes_fwd
    row["forward_gpu_us"] = cuda_time_s(fwd) * 1e6
    row["step_gpu_us"] = cuda_time_s(fwd_bwd) * 1e6
    row["forward_kernels"], row["forward_kernel_s"] = kernels_per_call(fwd)
    row["step_kernel_list"] = []
    row["step_kernels"], row["step_kernel_s"] = kernels_per_call(fwd_bwd, row["step_kernel_list"])
    small_fwd, small_step, _, _ = make(16)
    row["forward_host_us_16_tokens"] = host_time_s(small_fwd) * 1e6
    row["step_host_us_16_tokens"] = host_time_s(small_step, iters=100) * 1e6
    return row


@section("environment")
def environment():
    p = torch.cuda.get_device_properties(0)
    out = {"device": torch.cuda.get_device_name(0), "sms": p.multi_processor_count,
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version()}
    y = torch.zeros(1024, device="cuda")

    def adds():
        for _ in range(100):
            y.add_(1)
    out["bare_op_us"] = host_time_s(adds, iters=50) / 100 * 1e6
    return out


# ---- Megatron-Core's unfused RoPE ----------------------------------------------------------

def rotate_half(x, interleaved):
    if not interleaved:
        x1, x2 = torch.chunk(x, 2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)
    x1, x2 = x[..., ::2], x[..., 1::2]
    x_new = torch.stack((-x2, x1), dim=-1)
    return x_new.view(*x_new.shape[:-2], -1)


def rope_unfused(t, freqs, mscale, mla_interleaved):
    rot_dim = freqs.shape[-1]
    t, t_pass = t[..., :rot_dim], t[..., rot_dim:]
    if mla_interleaved:
        t = torch.cat((t[..., 0::2], t[..., 1::2]), dim=-1)
    cos_ = (torch.cos(freqs) * mscale).to(t.dtype)
    sin_ = (torch.sin(freqs) * mscale).to(t.dtype)
    t = (t * cos_) + (rotate_half(t, False) * sin_)
    return torch.cat((t, t_pass), dim=-1)


def rope_case(heads, kv_heads, head_dim, rot_dim, mscale, mla):
    """q [s, 1, heads, head_dim] and k [s, 1, kv_heads, head_dim], freqs [s, 1, 1, rot_dim]
    in fp32 as Megatron-Core's RotaryEmbedding returns them."""
    def make(tokens):
        s = tokens or 4096
        q = torch.randn(s, 1, heads, head_dim, device="cuda", dtype=BF16, requires_grad=True)
        k = torch.randn(s, 1, kv_heads, head_dim, device="cuda", dtype=BF16, requires_grad=True)
        freqs = torch.randn(s, 1, 1, rot_dim, device="cuda", dtype=torch.float32)

        def fwd():
            return rope_unfused(q, freqs, mscale, mla), rope_unfused(k, freqs, mscale, mla)

        gq = torch.randn(s, 1, heads, head_dim, device="cuda", dtype=BF16)
        gk = torch.randn(s, 1, kv_heads, head_dim, device="cuda", dtype=BF16)

        def step():
            a, b = fwd()
            torch.autograd.backward([a, b], [gq, gk])
        return fwd, step, s, 2 * 2 * s * (heads + kv_heads) * head_dim
    return make


@section("rope_unfused")
def rope_unfused_section():
    rows = []
    # GPT-OSS 120B (bridge-moe-015..019, tp 1): 64 q / 8 kv heads of 64, YaRN mscale != 1.
    rows.append(measure(rope_case(64, 8, 64, 64, 1.0 + 0.1 * math.log(32.0), False),
                        "gpt-oss-120b tp1: yarn rope, 64 q / 8 kv x 64"))
    # DeepSeek-V3 at tp 2 (bridge-moe-001): the rope part of 64 query heads' 192 (the last
    # 64) and the shared k_pe head, interleaved as MLA applies it.
    rows.append(measure(rope_case(64, 1, 64, 64, 1.0, True),
                        "deepseek-v3 tp2: mla rope, 64 q heads + 1 k_pe head x 64"))
    return {"rows": rows}


# ---- GPT-OSS's clamped GEGLU and the per-expert bias loop ---------------------------------

def clamped_quick_geglu(y, probs, bias, clamp_value=7.0, alpha=1.702, linear_offset=1.0):
    """weighted_bias_quick_geglu with clamp (Megatron-Core fused_bias_geglu.py) as eager ops:
    the clamp outside the fused function (chunk, two clamps, cat), then the GEGLU."""
    y = y + bias
    x_glu, x_linear = torch.chunk(y, 2, -1)
    y = torch.cat((x_glu.clamp(min=None, max=clamp_value),
                   x_linear.clamp(min=-clamp_value, max=clamp_value)), -1)
    y_1, y_2 = torch.chunk(y, 2, -1)
    return (y_1 * torch.sigmoid(alpha * y_1) * (y_2 + linear_offset)) * probs


@section("gpt_oss_expert_epilogues")
def gpt_oss_epilogues():
    rows = []
    local_experts = 16   # 128 experts over ep 8

    def make_geglu(tokens):
        m = (tokens or 4096) * 4  # routed copies on the rank: seq x top 4
        y = torch.randn(m, 2 * 2880, device="cuda", dtype=BF16, requires_grad=True)
        bias = torch.randn(2 * 2880, device="cuda", dtype=BF16, requires_grad=True)
        probs = torch.rand(m, 1, device="cuda", dtype=BF16)
        g = torch.randn(m, 2880, device="cuda", dtype=BF16)

        def fwd():
            return clamped_quick_geglu(y, probs, bias)

        def step():
            fwd().backward(g)
        return fwd, step, m, m * 2 * 2880 * 2 + m * 2880 * 2
    rows.append(measure(make_geglu, "gpt-oss-120b ep8: clamped quick-geglu on fc1 output"))

    def make_bias(tokens):
        m = (tokens or 4096) * 4
        counts = [m // local_experts] * local_experts
        out = torch.randn(m, 2880, device="cuda", dtype=BF16, requires_grad=True)
        biases = [torch.randn(2880, device="cuda", dtype=BF16, requires_grad=True) for _ in counts]
        probs = torch.rand(m, device="cuda", dtype=BF16)
        g = torch.randn(m, 2880, device="cuda", dtype=BF16)

        def fwd():
            return torch.cat([t + b * p for t, b, p in zip(
                torch.split(out, counts), biases, torch.split(probs.unsqueeze(-1), counts))])

        def step():
            fwd().backward(g)
        return fwd, step, m, 2 * m * 2880 * 2
    rows.append(measure(make_bias, "gpt-oss-120b ep8: fc2 bias loop over 16 local experts"))
    return {"rows": rows}


@section("gpt_oss_geglu_megatron")
def gpt_oss_geglu_megatron():
    """The clamped GEGLU as Megatron-Core runs it: the clamp in eager ops (chunk, two clamps,
    cat), then WeightedBiasQuickGeGLUFunction, whose forward and backward are torch.compile'd
    (megatron/core/jit.py: jit_fuser = torch.compile from torch 2.2)."""
    alpha = 1.702

    @torch.compile
    def geglu_fwd(y, weights, linear_offset):
        y_1, y_2 = torch.chunk(y, 2, -1)
        return ((y_1 * torch.sigmoid(alpha * y_1)) * (y_2 + linear_offset) * weights).to(y.dtype)

    @torch.compile
    def geglu_bwd(g, y, weights, linear_offset):
        y_1, y_2 = torch.chunk(y, 2, -1)
        gw = g * weights
        s = torch.sigmoid(alpha * y_1)
        dy_1 = gw * s * (1 + alpha * y_1 * (1 - s)) * (y_2 + linear_offset)
        dy_2 = gw * y_1 * s
        input_grad = torch.cat((dy_1, dy_2), -1)
        weights_grad = torch.sum((y_1 * s) * (y_2 + linear_offset) * g.to(weights.dtype), dim=-1, keepdim=True)
        return input_grad.to(y.dtype), weights_grad.to(weights.dtype)

    class Geglu(torch.autograd.Function):  # WeightedQuickGeGLUFunction (the fc1 bias in the GEMM)
        @staticmethod
        def forward(ctx, y, weights, linear_offset):
            ctx.save_for_backward(y, weights, linear_offset)
            return geglu_fwd(y, weights, linear_offset)

        @staticmethod
        def backward(ctx, g):
            y, weights, linear_offset = ctx.saved_tensors
            dy, dw = geglu_bwd(g, y, weights, linear_offset)
            return dy, dw, None

    rows = []
    for clamp in (True, False):
        def make(tokens, clamp=clamp):
            m = (tokens or 4096) * 4
            y = torch.randn(m, 2 * 2880, device="cuda", dtype=BF16, requires_grad=True)
            probs = torch.rand(m, 1, device="cuda", dtype=BF16, requires_grad=True)
            offset = torch.tensor(1.0, dtype=BF16, device="cuda")
            g = torch.randn(m, 2880, device="cuda", dtype=BF16)

            def fwd():
                x = y
                if clamp:
                    x_glu, x_linear = x.chunk(2, -1)
                    x = torch.cat((x_glu.clamp(min=None, max=7.0), x_linear.clamp(min=-7.0, max=7.0)), -1)
                return Geglu.apply(x, probs, offset)

            def step():
                fwd().backward(g)
            return fwd, step, m, m * 2 * 2880 * 2 + m * 2880 * 2
        rows.append(measure(make, "gpt-oss-120b ep8: quick-geglu as Megatron-Core" + (" with the clamp" if clamp else ", no clamp")))
    return {"rows": rows}


# ---- Expert GEMMs: grouped vs per expert -----------------------------------------------------

EXPERT_CASES = [
    # (label, local experts, tokens per expert, hidden, expert ffn, gated)
    ("qwen3-30b ep16 (bridge-moe-006)", 8, 4096, 2048, 768, True),
    ("qwen3-30b ep8 (automodel-moe-004)", 16, 2048, 2048, 768, True),
    ("gpt-oss-120b ep8 (bridge-moe-016)", 16, 1024, 2880, 2880, True),
    ("qwen3-235b ep32 (bridge-moe-010)", 4, 4096, 4096, 1536, True),
    ("deepseek-v3 ep64 (bridge-moe-001)", 4, 4096, 7168, 2048, True),
]


@section("expert_gemms")
def expert_gemms():
    rows = []
    have_grouped = hasattr(torch, "_grouped_mm")
    for label, experts, m, hidden, ffn, gated in EXPERT_CASES:
        if time_left() < 40:
            break
        n1 = 2 * ffn if gated else ffn
        x = torch.randn(experts * m, hidden, device="cuda", dtype=BF16)
        w1 = torch.randn(experts, hidden, n1, device="cuda", dtype=BF16) * 0.02
        w2 = torch.randn(experts, ffn, hidden, device="cuda", dtype=BF16) * 0.02
        h = torch.randn(experts * m, ffn, device="cuda", dtype=BF16)
        gy = torch.randn(experts * m, hidden, device="cuda", dtype=BF16)
        offs = torch.arange(m, experts * m + 1, m, device="cuda", dtype=torch.int32)
        flops = {"fc1": 2.0 * experts * m * hidden * n1, "fc2": 2.0 * experts * m * ffn * hidden}
        row = {"case": label, "local_experts": experts, "tokens_per_expert": m, "hidden": hidden,
               "ffn": ffn, "fc1_n": n1, "flops": flops}
        xs, hs, gys = x.split(m), h.split(m), gy.split(m)

        def loop_fc1():
            return [xs[e] @ w1[e] for e in range(experts)]

        def loop_fc2():
            return [hs[e] @ w2[e] for e in range(experts)]

        def loop_fc2_dgrad():  # dX of fc2 = dY W2^T
            return [gys[e] @ w2[e].t() for e in range(experts)]

        def loop_fc2_wgrad():  # dW2 = H^T dY
            return [hs[e].t() @ gys[e] for e in range(experts)]
        timings = {"loop_fc1": loop_fc1, "loop_fc2": loop_fc2,
                   "loop_fc2_dgrad": loop_fc2_dgrad, "loop_fc2_wgrad": loop_fc2_wgrad}
        if have_grouped:
            timings["grouped_fc1"] = lambda: torch._grouped_mm(x, w1, offs=offs)
            timings["grouped_fc2"] = lambda: torch._grouped_mm(h, w2, offs=offs)
            timings["grouped_fc2_dgrad"] = lambda: torch._grouped_mm(gy, w2.transpose(-2, -1), offs=offs)
            ht = h.t().contiguous()
            timings["grouped_fc2_wgrad"] = lambda: torch._grouped_mm(ht, gy, offs=offs)
        for name, fn in timings.items():
            try:
                t = cuda_time_s(fn, warmup=3, iters=20)
                f = flops["fc1"] if "fc1" in name else flops["fc2"]
                row[name + "_us"] = t * 1e6
                row[name + "_tflops"] = f / t / 1e12
            except Exception as e:
                row[name + "_error"] = str(e)[:300]
        rows.append(row)
        del x, w1, w2, h, gy
        torch.cuda.empty_cache()
    return {"rows": rows}


# ---- Fused attention at the MoE models' head shapes -------------------------------------

ATTENTION_CASES = [
    # (label, heads, kv heads, qk head dim, v head dim, seq)
    ("qwen3-30b tp1", 32, 4, 128, 128, 4096),
    ("qwen3-235b tp2", 32, 2, 128, 128, 4096),
    ("gpt-oss-120b tp1 (full causal)", 64, 8, 64, 64, 4096),
    ("deepseek-v3 mla tp2", 64, 64, 192, 128, 4096),
    ("llama hd128 reference", 32, 8, 128, 128, 8192),
]


@section("attention")
def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    rows = []
    for backend_name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                                  ("flash", SDPBackend.FLASH_ATTENTION)):
        for label, heads, kv, dqk, dv, seq in ATTENTION_CASES:
            if time_left() < 20:
                break
            row = {"backend": backend_name, "case": label, "heads": heads, "kv_heads": kv,
                   "qk_head_dim": dqk, "v_head_dim": dv, "seq": seq, "batch": 1}
            q = torch.randn(1, heads, seq, dqk, device="cuda", dtype=BF16, requires_grad=True)
            k = torch.randn(1, kv, seq, dqk, device="cuda", dtype=BF16, requires_grad=True)
            v = torch.randn(1, kv, seq, dv, device="cuda", dtype=BF16, requires_grad=True)
            # Executed FLOPs as trainsim counts them: causal half of 2 b h s^2 (dqk + dv).
            fwd_flops = 2 * heads * seq * seq * (dqk + dv) / 2
            try:
                with sdpa_kernel(backend):
                    gqa = kv != heads

                    def fwd():
                        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
                    tf = cuda_time_s(fwd, warmup=3, iters=10)
                    g = torch.randn_like(fwd())

                    def fwd_bwd():
                        F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa).backward(g)
                    tfb = cuda_time_s(fwd_bwd, warmup=3, iters=10)
                row.update({"forward_us": tf * 1e6, "backward_us": (tfb - tf) * 1e6,
                            "forward_tflops": fwd_flops / tf / 1e12,
                            "backward_tflops": 2.5 * fwd_flops / (tfb - tf) / 1e12})
            except Exception as e:
                row["error"] = str(e)[:300]
            rows.append(row)
            del q, k, v
    return {"rows": rows}


if __name__ == "__main__":
    print(json.dumps({k: v for k, v in results.items()}), flush=True)
