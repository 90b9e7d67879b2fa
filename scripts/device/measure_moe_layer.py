#!/usr/bin/env python3
"""Measures what a dropless mixture-of-experts layer costs the host in eager PyTorch, on one GPU.

A stack of transformer layers whose MLP is one expert-parallel rank's share of a fine-grained
MoE layer (Qwen3-30B-A3B at ep 8: router over 128 experts, top 8, this rank's 16 experts),
run forward and backward with the op sequence of Megatron-Core's all-to-all token
dispatcher at ep 1 (megatron/core/transformer/moe/token_dispatcher.py, moe_utils.py permute /
unpermute, router.py TopKRouter with the aux loss; NVIDIA/Megatron-LM d98e8a64dd): the
router, the per-expert token counts, the permutation, the experts (one GEMM per expert as
Transformer Engine's GroupedLinear issues them, or torch's grouped GEMM), the unpermutation.

Each case runs twice, the same kernels both times: once reading the per-expert counts on the
host (`.tolist()`, the device-to-host sync the dropless dispatcher makes once per layer
forward) and once with the counts already on the host (a sync-free dispatcher). Per case:
wall time per step, the GPU's kernel time and kernel count (torch.profiler), and the same
step on 16 tokens (all host). The difference between the sync and sync-free wall times is
the time the sync exposes.

Writes one JSON file (argument 1, default moe_layer.json), rewritten after each case.
Runs on a CPU too (small shapes, for checking the script): MOE_SMOKE=1.
"""
import json
import os
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "moe_layer.json"
SMOKE = os.environ.get("MOE_SMOKE") == "1"
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
DEADLINE = time.time() + float(os.environ.get("MEASURE_BUDGET_S", "420"))
results = {"started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cases": []}
HAVE_GROUPED_MM = hasattr(torch, "_grouped_mm") and DEVICE == "cuda"


def save():
    with open(OUT + ".tmp", "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    os.replace(OUT + ".tmp", OUT)


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def rms_norm(x, weight):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), weight, 1e-6)
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * weight


class Attention(torch.nn.Module):
    def __init__(self, hidden, heads, kv_heads, head_dim):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.norm = torch.nn.Parameter(torch.ones(hidden))
        self.qkv = torch.nn.Linear(hidden, (heads + 2 * kv_heads) * head_dim, bias=False)
        self.proj = torch.nn.Linear(heads * head_dim, hidden, bias=False)

    def forward(self, x):  # x: [batch, seq, hidden]
        b, s, _ = x.shape
        q, k, v = self.qkv(rms_norm(x, self.norm)).split(
            [self.heads * self.head_dim, self.kv_heads * self.head_dim, self.kv_heads * self.head_dim], -1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if hasattr(F, "scaled_dot_product_attention"):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:  # the CPU smoke run's old torch: plain causal attention
            rep = self.heads // self.kv_heads
            k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
            w = (q @ k.transpose(-1, -2)) * self.head_dim ** -0.5
            w = w.masked_fill(torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
            o = torch.softmax(w, -1) @ v
        return x + self.proj(o.transpose(1, 2).reshape(b, s, -1))


class ExpertRankMoE(torch.nn.Module):
    """One ep rank's share of a dropless top-k MoE layer: routes over all experts, computes
    the copies routed to its own local experts (experts 0 .. local-1), as the rank does after
    the dispatch all-to-all."""

    def __init__(self, hidden, ffn, experts, local_experts, top_k):
        super().__init__()
        self.experts, self.local, self.top_k, self.ffn = experts, local_experts, top_k, ffn
        self.norm = torch.nn.Parameter(torch.ones(hidden))
        self.router = torch.nn.Parameter(torch.randn(experts, hidden) * hidden ** -0.5)
        # Both layouts of the experts' weights: one tensor for the grouped GEMM, and one per
        # expert as Transformer Engine's GroupedLinear holds them (weight0 .. weightN-1).
        self.fc1 = torch.nn.Parameter(torch.randn(local_experts, hidden, 2 * ffn) * hidden ** -0.5)
        self.fc2 = torch.nn.Parameter(torch.randn(local_experts, ffn, hidden) * ffn ** -0.5)
        self.fc1_each = torch.nn.ParameterList(torch.nn.Parameter(w.clone()) for w in self.fc1.data)
        self.fc2_each = torch.nn.ParameterList(torch.nn.Parameter(w.clone()) for w in self.fc2.data)
        self.host_counts = None  # the sync-free case's per-expert counts, known on the host
        self.read_counts = True
        self.grouped = False

    def route(self, x):  # Megatron TopKRouter: fp32 logits, softmax, top-k, aux loss
        logits = F.linear(x.float(), self.router.float())
        scores = torch.softmax(logits, -1)
        probs, ids = torch.topk(scores, self.top_k, -1)
        probs = probs / probs.sum(-1, keepdim=True)
        # Balanced routing whatever the scores, as Megatron-Core's moe_perf tests run
        # (moe_router_force_load_balancing): token t's j-th copy goes to expert (t k + j) mod E.
        # The same counts every step, so the sync-free case's host-known counts stay true.
        t = torch.arange(x.shape[0], device=x.device)[:, None]
        ids = (t * self.top_k + torch.arange(self.top_k, device=x.device)) % self.experts
        routing_map = torch.zeros_like(logits, dtype=torch.bool).scatter(1, ids, True)
        tokens_per_expert = routing_map.sum(0)
        aux = (tokens_per_expert.float() * scores.mean(0)).sum() * self.experts / (x.shape[0] * self.top_k)
        return torch.zeros_like(logits).scatter(1, ids, probs), routing_map, tokens_per_expert, aux

    def forward(self, x):  # x: [batch, seq, hidden]
        shape = x.shape
        h = rms_norm(x, self.norm).reshape(-1, shape[-1])
        tokens = h.shape[0]
        prob_map, routing_map, tokens_per_expert, aux = self.route(h)
        local_map = routing_map[:, : self.local]
        if self.read_counts or self.host_counts is None:
            counts = tokens_per_expert[: self.local].tolist()  # the dispatcher's device-to-host sync
            self.host_counts = counts
        else:
            counts = self.host_counts
        rows = sum(counts)
        # moe_utils.permute without fusion: expert-major token indices of the routed copies;
        # a stable sort on the local expert id (others last) keeps the count host-known.
        key = torch.where(local_map.T, torch.arange(self.local, device=x.device)[:, None], self.local)
        order = torch.argsort(key.reshape(-1), stable=True)[:rows]
        token_index = order % tokens
        expert_index = order // tokens
        permuted = h.index_select(0, token_index)
        probs = prob_map[:, : self.local].T.reshape(-1).index_select(0, order)
        if self.grouped:  # the offsets from the device's counts: no host-to-device copy
            offs = tokens_per_expert[: self.local].cumsum(0).to(torch.int32)
            a = torch._grouped_mm(permuted, self.fc1, offs=offs)
            g, u = a.chunk(2, -1)
            out = torch._grouped_mm(F.silu(g) * u, self.fc2, offs=offs)
        else:  # Transformer Engine GroupedLinear: one GEMM per local expert on the split input
            outs = []
            for e, chunk in enumerate(permuted.split(counts)):
                g, u = (chunk @ self.fc1_each[e]).chunk(2, -1)
                outs.append((F.silu(g) * u) @ self.fc2_each[e])
            out = torch.cat(outs)
        del expert_index
        out = out * probs.to(out.dtype)[:, None]
        y = torch.zeros_like(h).index_add(0, token_index, out)  # unpermute
        return x + y.view(shape), aux


class DenseMLP(torch.nn.Module):
    """The dense SwiGLU MLP of the same layer, for the host cost of a dense layer beside it."""

    def __init__(self, hidden, ffn):
        super().__init__()
        self.norm = torch.nn.Parameter(torch.ones(hidden))
        self.fc1 = torch.nn.Linear(hidden, 2 * ffn, bias=False)
        self.fc2 = torch.nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        g, u = self.fc1(rms_norm(x, self.norm)).chunk(2, -1)
        return x + self.fc2(F.silu(g) * u), 0.0


class Model(torch.nn.Module):
    def __init__(self, layers, hidden, heads, kv_heads, head_dim, ffn, experts, local, top_k, dense_ffn=0):
        super().__init__()
        self.attn = torch.nn.ModuleList(Attention(hidden, heads, kv_heads, head_dim) for _ in range(layers))
        if dense_ffn:
            self.moe = torch.nn.ModuleList(DenseMLP(hidden, dense_ffn) for _ in range(layers))
        else:
            self.moe = torch.nn.ModuleList(ExpertRankMoE(hidden, ffn, experts, local, top_k) for _ in range(layers))

    def set(self, read_counts, grouped):
        for m in self.moe:
            m.read_counts, m.grouped = read_counts, grouped

    def forward(self, x):
        aux = 0.0
        for a, m in zip(self.attn, self.moe):
            x, l = m(a(x))
            aux = aux + l
        return x.float().pow(2).mean() + 1e-2 * aux


def step_times(model, x, iters, warmup=3):
    """Wall time per forward+backward (the GPU drained after each step), and the forward's."""
    walls, fwds = [], []
    for i in range(warmup + iters):
        x.grad = None
        model.zero_grad(set_to_none=True)
        sync()
        t0 = time.perf_counter()
        loss = model(x)
        t1 = time.perf_counter()
        loss.backward()
        sync()
        t2 = time.perf_counter()
        if i >= warmup:
            walls.append(t2 - t0)
            fwds.append(t1 - t0)
    return statistics.median(walls), statistics.median(fwds)


def profile_step(model, x):
    """Kernel count, summed kernel time and host syncs of one forward+backward."""
    if DEVICE != "cuda":
        return {}
    from torch.profiler import ProfilerActivity, profile
    model.zero_grad(set_to_none=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        loss = model(x)
        sync()
    forward = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
               and "Memcpy" not in e.name and "Memset" not in e.name]
    loss.backward()
    model.zero_grad(set_to_none=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        model(x).backward()
        sync()
    kernels, kernel_us, syncs, d2h = 0, 0.0, 0, 0
    for ev in prof.events():
        name = ev.name
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            if "Memcpy" in name or "Memset" in name:
                continue
            kernels += 1
            kernel_us += ev.device_time if hasattr(ev, "device_time") else ev.cuda_time
        elif name in ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize"):
            syncs += 1
        elif name.startswith("cudaMemcpy") and "Async" in name:
            d2h += 1
    return {"kernels": kernels, "kernel_time_s": kernel_us / 1e6, "host_syncs": syncs, "memcpy_calls": d2h,
            "kernels_forward": len(forward), "kernel_time_forward_s": sum(e.device_time for e in forward) / 1e6}


def run_case(name, cfg, seqs):
    torch.manual_seed(0)
    model = Model(cfg["layers"], cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"], cfg["ffn"],
                  cfg["experts"], cfg["local"], cfg["top_k"], cfg.get("dense_ffn", 0)).to(DEVICE, DTYPE)
    dense = bool(cfg.get("dense_ffn"))
    case = dict(cfg, name=name, runs=[])
    if HAVE_GROUPED_MM and not dense:  # both expert paths compute the same layer
        x = torch.randn(1, 256, cfg["hidden"], device=DEVICE, dtype=DTYPE)
        with torch.no_grad():
            model.set(True, False)
            loop = model.moe[0](x)[0]
            model.set(True, True)
            grouped = model.moe[0](x)[0]
        case["grouped_vs_loop_max_abs_diff"] = (loop - grouped).abs().max().item()
    for seq in seqs:
        x = torch.randn(cfg["batch"], seq, cfg["hidden"], device=DEVICE, dtype=DTYPE, requires_grad=True)
        for grouped in ([False, True] if HAVE_GROUPED_MM and not dense else [False]):
            for read_counts in ((True,) if dense else (True, False)):
                if time.time() > DEADLINE:
                    case["cut_short"] = True
                    return case
                row = {"seq": seq, "tokens": seq * cfg["batch"], "grouped_gemm": grouped,
                       "host_reads_counts": read_counts}
                try:
                    model.set(True, grouped)
                    model(x)  # the counts of this input, for the sync-free run
                    model.set(read_counts, grouped)
                    row["step_s"], row["forward_host_s"] = step_times(model, x, cfg["iters"])
                    row.update(profile_step(model, x))
                except Exception:
                    row["error"] = traceback.format_exc()[-1500:]
                case["runs"].append(row)
                print(name, row, flush=True)
        results["partial"] = case
        save()
    return case


def main():
    if DEVICE == "cuda":
        p = torch.cuda.get_device_properties(0)
        results["environment"] = {"device": torch.cuda.get_device_name(0), "sms": p.multi_processor_count,
                                  "torch": torch.__version__, "cuda": torch.version.cuda,
                                  "grouped_mm": HAVE_GROUPED_MM}
    # Qwen3-30B-A3B (config.json): hidden 2048, 32 heads of 128 over 4 kv heads, 128 experts of
    # 768, top 8; one ep-8 rank holds 16 of them. The Bridge H100 rows run micro-batch 2 at
    # sequence 4,096.
    qwen3 = dict(layers=4, hidden=2048, heads=32, kv_heads=4, head_dim=128, ffn=768, experts=128, local=16,
                 top_k=8, batch=2, iters=10)
    # DeepSeek-V3's routed experts (hidden 7168, 256 experts of 2048, top 8) at ep 8: 32 local;
    # its attention stands in as 128 heads of 128 without latent projections.
    dsv3 = dict(layers=2, hidden=7168, heads=56, kv_heads=56, head_dim=128, ffn=2048, experts=256, local=32,
                top_k=8, batch=1, iters=10)
    # GPT-OSS 120B (config.json): hidden 2880, 64 heads of 64 over 8 kv heads, 128 experts of
    # 2880, top 4; 16 local at ep 8 (its sliding-window and sink attention not modelled here).
    gptoss = dict(layers=4, hidden=2880, heads=64, kv_heads=8, head_dim=64, ffn=2880, experts=128, local=16,
                  top_k=4, batch=1, iters=10)
    iters = int(os.environ.get("MOE_ITERS", "10"))
    for cfg in (qwen3, dsv3, gptoss):
        cfg["iters"] = iters
    if SMOKE:
        qwen3.update(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, ffn=32, experts=16, local=4, iters=2)
        cases = [("qwen3-30b-a3b-ep8-rank", qwen3, [16, 128]), ("dense", dict(qwen3, dense_ffn=48), [16])]
    else:
        # The same attention with Qwen3's dense-equivalent MLP (6,144), for a dense layer's host cost.
        cases = [("qwen3-30b-a3b-ep8-rank", qwen3, [16, 4096]), ("qwen3-dense-mlp", dict(qwen3, dense_ffn=6144), [16, 4096]), ("deepseek-v3-ep8-rank", dsv3, [16, 4096]),
                 ("gpt-oss-120b-ep8-rank", gptoss, [16, 4096])]
    for name, cfg, seqs in cases:
        try:
            results["cases"].append(run_case(name, cfg, seqs))
        except Exception:
            results["cases"].append({"name": name, "error": traceback.format_exc()[-3000:]})
            print(results["cases"][-1]["error"], flush=True)
        results.pop("partial", None)
        save()
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    results["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    save()
    print("done", flush=True)


main()
