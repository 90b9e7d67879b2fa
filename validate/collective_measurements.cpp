#include "validate/collective_measurements.h"

namespace trainsim::validate {
namespace {

// Columns: message size (B), out-of-place time (us), out-of-place bus bandwidth (GB/s).

// NVIDIA/deepops docs/k8s-cluster/nvidia-network-operator.md, "NCCL AllReduce Test
// Result": 2x DGX A100 (16 GPUs) on Kubernetes with SR-IOV, 8x 200 Gb/s ConnectX-6 HDR
// per node. The page states 38-41 us for 8 B-512 B messages.
const MeasuredPoint kDeepops2NodeA100[] = {
    {1048576, 120.1, 16.37},     {2097152, 137.2, 28.67},     {4194304, 165.8, 47.43},     {8388608, 209.2, 75.17},
    {16777216, 301.9, 104.19},   {33554432, 536, 117.38},     {67108864, 918, 137.08},     {134217728, 1603.7, 156.92},
    {268435456, 2924.5, 172.1},  {536870912, 5601.4, 179.71}, {1073741824, 11085, 181.62}, {2147483648, 21551, 186.83},
    {4294967296, 42715, 188.53},
};

// Azure/AI-benchmarking-guide, Azure_Results/ND_A100_v4_results.md, ND_H100_v5_results.md,
// ND_H200_v5_results.md, "NCCL Bandwidth" (Sep 2024; NCCL 2.18.5 / 2.18.5 / 2.20.5):
// single-node 8-GPU in-place all_reduce bus bandwidth, sizes 1 KiB x 2^i.
const MeasuredPoint kAzureA100[] = {
    {1024, kNotPublished, 0.04},         {2048, kNotPublished, 0.08},         {4096, kNotPublished, 0.17},
    {8192, kNotPublished, 0.33},         {16384, kNotPublished, 0.67},        {32768, kNotPublished, 1.37},
    {65536, kNotPublished, 2.7},         {131072, kNotPublished, 5.15},       {262144, kNotPublished, 10.11},
    {524288, kNotPublished, 19.24},      {1048576, kNotPublished, 36.22},     {2097152, kNotPublished, 53.54},
    {4194304, kNotPublished, 71.43},     {8388608, kNotPublished, 89.99},     {16777216, kNotPublished, 109.22},
    {33554432, kNotPublished, 132.77},   {67108864, kNotPublished, 166.63},   {134217728, kNotPublished, 174.18},
    {268435456, kNotPublished, 213.87},  {536870912, kNotPublished, 221.58},  {1073741824, kNotPublished, 228.1},
    {2147483648, kNotPublished, 230.22}, {4294967296, kNotPublished, 230.48}, {8589934592, kNotPublished, 231.58},
};

const MeasuredPoint kAzureH100[] = {
    {1024, kNotPublished, 0.07},         {2048, kNotPublished, 0.14},         {4096, kNotPublished, 0.27},
    {8192, kNotPublished, 0.53},         {16384, kNotPublished, 0.95},        {32768, kNotPublished, 1.71},
    {65536, kNotPublished, 2.72},        {131072, kNotPublished, 5.4},        {262144, kNotPublished, 10.86},
    {524288, kNotPublished, 21.35},      {1048576, kNotPublished, 43.7},      {2097152, kNotPublished, 81.93},
    {4194304, kNotPublished, 128.73},    {8388608, kNotPublished, 172.13},    {16777216, kNotPublished, 234.45},
    {33554432, kNotPublished, 295.53},   {67108864, kNotPublished, 361.78},   {134217728, kNotPublished, 400.61},
    {268435456, kNotPublished, 423.38},  {536870912, kNotPublished, 438.46},  {1073741824, kNotPublished, 466.35},
    {2147483648, kNotPublished, 472.36}, {4294967296, kNotPublished, 475.54}, {8589934592, kNotPublished, 478.87},
};

const MeasuredPoint kAzureH200[] = {
    {1024, kNotPublished, 0.06},         {2048, kNotPublished, 0.12},         {4096, kNotPublished, 0.23},
    {8192, kNotPublished, 0.47},         {16384, kNotPublished, 0.93},        {32768, kNotPublished, 1.84},
    {65536, kNotPublished, 3.72},        {131072, kNotPublished, 7.39},       {262144, kNotPublished, 14.75},
    {524288, kNotPublished, 29.38},      {1048576, kNotPublished, 52.96},     {2097152, kNotPublished, 88.78},
    {4194304, kNotPublished, 138.44},    {8388608, kNotPublished, 181.94},    {16777216, kNotPublished, 240.41},
    {33554432, kNotPublished, 300.91},   {67108864, kNotPublished, 368.11},   {134217728, kNotPublished, 412.45},
    {268435456, kNotPublished, 432.24},  {536870912, kNotPublished, 442.72},  {1073741824, kNotPublished, 467.58},
    {2147483648, kNotPublished, 472.57}, {4294967296, kNotPublished, 477.41}, {8589934592, kNotPublished, 479.98},
};

// Echo project (arXiv 2412.12487), nccl-test-log/: all_reduce_perf on Azure ND A100 v4
// (8x A100-SXM4-40GB, NVSwitch, one 200 Gb/s HDR NIC per GPU), one node and two nodes.
const MeasuredPoint kEchoAzure8[] = {
    {8, 31.44, 0},
    {16, 31.02, 0},
    {32, 31.72, 0},
    {64, 30.49, 0},
    {128, 31.64, 0.01},
    {256, 30.97, 0.01},
    {512, 30.78, 0.03},
    {1024, 32.1, 0.06},
    {2048, 30.73, 0.12},
    {4096, 31.12, 0.23},
    {8192, 31.03, 0.46},
    {16384, 31.43, 0.91},
    {32768, 32.85, 1.75},
    {65536, 32.75, 3.5},
    {131072, 35.56, 6.45},
    {262144, 45.11, 10.17},
    {524288, 57.78, 15.88},
    {1048576, 72.53, 25.3},
    {2097152, 87.7, 41.85},
    {4194304, 105.7, 69.44},
    {8388608, 149.8, 98.03},
    {16777216, 235.6, 124.6},
    {33554432, 361, 162.67},
    {67108864, 566.1, 207.44},
    {134217728, 1119.4, 209.83},
    {268435456, 2096, 224.12},
    {536870912, 4144.1, 226.71},
    {1073741824, 8139.2, 230.86},
};

const MeasuredPoint kEchoAzure16[] = {
    {1024, 34.66, 0.06},           {2048, 36.05, 0.11},         {4096, 38.22, 0.2},
    {8192, 41.21, 0.37},           {16384, 50.34, 0.61},        {32768, 55.79, 1.1},
    {65536, 73.08, 1.68},          {131072, 74.33, 3.31},       {262144, 77.45, 6.35},
    {524288, 85.77, 11.46},        {1048576, 100.1, 19.64},     {2097152, 123.6, 31.82},
    {4194304, 147.2, 53.44},       {8388608, 201, 78.24},       {16777216, 367.2, 85.66},
    {33554432, 580.1, 108.46},     {67108864, 1124.3, 111.92},  {134217728, 2039.8, 123.37},
    {268435456, 4159.2, 121.01},   {536870912, 8060.3, 124.89}, {1073741824, 16170, 124.5},
    {2147483648, 31509, 127.79},   {4294967296, 63345, 127.13}, {8589934592, 126496, 127.33},
    {17179869184, 251757, 127.95},
};

}  // namespace

const std::vector<MeasuredCurve>& measuredAllReduceCurves() {
  static const std::vector<MeasuredCurve> curves = {
      {"deepops-2x-dgx-a100", "2x DGX A100, 16 GPUs, 8x HDR 200 Gb/s per node",
       "NVIDIA/deepops nvidia-network-operator.md", "dgx-a100", 16, true, kDeepops2NodeA100, 39.5, 8},
      {"azure-nd-a100-v4-8", "Azure ND A100 v4, 8 GPUs (NCCL 2.18.5)", "Azure/AI-benchmarking-guide ND_A100_v4",
       "azure-nd-a100-v4", 8, true, kAzureA100},
      {"azure-nd-h100-v5-8", "Azure ND H100 v5, 8 GPUs, NVLS (NCCL 2.18.5)", "Azure/AI-benchmarking-guide ND_H100_v5",
       "dgx-h100", 8, true, kAzureH100},
      {"azure-nd-h200-v5-8", "Azure ND H200 v5, 8 GPUs, NVLS (NCCL 2.20.5)", "Azure/AI-benchmarking-guide ND_H200_v5",
       "dgx-h200", 8, true, kAzureH200},
      {"echo-azure-a100-8", "Azure ND A100 v4 40GB, 8 GPUs (raw nccl-tests log)", "Echo arXiv 2412.12487",
       "azure-nd-a100-v4", 8, false, kEchoAzure8},
      {"echo-azure-a100-16", "Azure ND A100 v4 40GB, 16 GPUs over 2 nodes (raw nccl-tests log)",
       "Echo arXiv 2412.12487", "azure-nd-a100-v4", 16, false, kEchoAzure16},
  };
  return curves;
}

}  // namespace trainsim::validate
