#!/usr/bin/env python3
"""Writes the attention rows of a measure_gpu.py results file (argument 1) as a CSV in the
layout of cudnn-frontend's sdpa_benchmark_training artifacts (argument 2), which
`trainsim calibrate --attention` reads: PyTorch's flash backend as pyt_flash_attention, its
cuDNN backend as pyt_cudnn; times in ms, rates as measure_gpu.py counts them (causal half,
backward 2.5x the forward's FLOPs), the convention of calibrate/attention_benchmark_csv.h."""
import json
import sys

BACKENDS = {"flash": "pyt_flash_attention", "cudnn": "pyt_cudnn"}

rows = json.load(open(sys.argv[1]))["attention"]["rows"]
with open(sys.argv[2], "w") as out:
    out.write("batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,"
              "forward_time,backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec\n")
    for r in rows:
        if "error" in r:
            continue
        out.write(f"{r['batch']},{r['seq']},{r['seq']},{r['heads']},{r['kv_heads']},{r['head_dim']},"
                  f"{r['causal']},{BACKENDS[r['backend']]},{r['forward_us'] / 1e3:.4f},"
                  f"{r['backward_us'] / 1e3:.4f},{r['forward_tflops']:.2f},{r['backward_tflops']:.2f}\n")
