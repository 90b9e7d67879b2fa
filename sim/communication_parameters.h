// Named parameters of the NCCL-like communication model, with their sources. Every value
// here is a default that calibration (`trainsim calibrate`) may replace.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "topology/link.h"

namespace trainsim::sim {

// NCCL's protocols: LL (8-byte lines, 4 bytes data + 4 flag), LL128 (128-byte lines, 120
// bytes data), Simple (bulk copies with fences: best bandwidth, highest latency).
enum class Protocol : uint8_t { kLL, kLL128, kSimple };
inline constexpr std::array<Protocol, 3> kAllProtocols = {Protocol::kLL, Protocol::kLL128, Protocol::kSimple};
[[nodiscard]] std::string_view protocolName(Protocol protocol);

enum class CollectiveAlgorithm : uint8_t {
  kRing,    // NCCL ring (all-reduce = reduce-scatter + all-gather)
  kTree,    // NCCL double binary tree across nodes, chain inside a node
  kNvls,    // NVLink SHARP: reductions in the NVSwitch (single node)
  kDirect,  // point-to-point between every pair (all-to-all) or the given pairs (send/recv)
};
[[nodiscard]] std::string_view algorithmName(CollectiveAlgorithm algorithm);

// NCCL groups per-step latencies by the kind of hop.
enum class HopClass : uint8_t { kNvLink, kPcie, kNetwork };

struct CommunicationParameters {
  // Achievable fraction of a link's raw bandwidth for collective payload (packet headers,
  // flow control, copy-engine limits). The flow network runs links at raw x efficiency.
  // NVLink: NCCL's own model caps A100 (sm80) bus bandwidth at 235 GB/s of 300 (0.78,
  // NVIDIA/nccl src/graph/tuning.cc, "compCap80 ... 235"); NCCL maintainers state ~20%
  // protocol overhead on H100 NVLink4, ~370 of 450 GB/s (nccl-tests#212): 0.82; B200
  // NVLink5 ring measured 682 of 900 GB/s (ml-engineering NVLS table): 0.76 (B200, and GB200:
  // the same NVLink 5 ports).
  double nvlink_efficiency_default = 0.82;
  double nvlink_efficiency_a100 = 0.78;
  double nvlink_efficiency_b200 = 0.76;
  // InfiniBand: "expect 46-48 GB/s per NIC" for NDR 400 Gb/s (nccl-tests#290), and 2x DGX
  // A100 reach 188.5 GB/s bus bandwidth over 8 x 25 GB/s HDR (NVIDIA deepops): 0.94.
  double infiniband_efficiency = 0.94;
  // RoCE / Ethernet: congestion control and larger headers; 0.90 (RoCEv2 header 58+ bytes
  // per 4 KB MTU is ~1.5%, the rest is DCQCN head-room as reported by operators).
  double ethernet_efficiency = 0.90;
  // PCIe: TLP headers (~24 B per 256 B payload) and flow-control DLLPs: ~0.85 of raw.
  double pcie_efficiency = 0.85;
  // TPU ICI and CPU socket links: no published NCCL-like figure; 0.85 like PCIe.
  double other_efficiency = 0.85;
  // NVLS all-reduce algorithm bandwidth as a fraction of the NVLink bandwidth: H100 reaches
  // ~480 GB/s bus = ~275 GB/s algorithm bandwidth on 450 GB/s links (nccl-tests#212),
  // H200 270 GB/s at 8 GPUs (ml-engineering): 0.6.
  double nvls_efficiency = 0.60;

  // Protocol bandwidth factors of NCCL's tuning model (tuning.cc): LL 1/4 of Simple for
  // all-reduce and multi-node, LL128 0.92 (120/128), Simple 1.
  std::array<double, 3> protocol_bandwidth_factor = {0.25, 0.92, 1.0};
  // Fixed latency of one collective call per algorithm and protocol, microseconds (NCCL
  // 2.19+ src/graph/tuning.cc baseLat: Tree {6.8, 14.0, 8.4}, Ring {6.6, 14.0, 8.4}, NVLS
  // {-, -, 23}); direct (send/recv based) uses the ring values.
  std::array<std::array<double, 3>, 4> base_latency_us = {{
      {6.6, 14.0, 8.4},  // ring
      {6.8, 14.0, 8.4},  // tree
      {0.0, 0.0, 23.0},  // nvls
      {6.6, 14.0, 8.4},  // direct
  }};
  // Latency of one pipeline step over one hop, microseconds, by hop class, for ring-like
  // algorithms and for trees (NCCL tuning.cc hwLat: NVLink ring {.6, 1.9, 3.4}, tree
  // {.6, 1.25, 4.0}, NVLS Simple 25; PCI ring {1.0, 2.5, 5.7}, tree {1.0, 1.9, 5.5}; NET
  // ring {2.7, 4.0, 9.6}, tree {5.0, 8.5, 14}). They include the wire latency of the hop
  // as measured, on links with the default latencies (topology/link_defaults.h): an
  // intra-node hop whose route is slower or faster than that costs the difference more or
  // less per step (intra_node.latency_us, pcie.latency_us, an explicit graph's links), and
  // at least nothing; see sim/collective_builder.h.
  std::array<std::array<double, 3>, 3> ring_step_latency_us = {{{0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 9.6}}};
  std::array<std::array<double, 3>, 3> tree_step_latency_us = {{{0.6, 1.25, 4.0}, {1.0, 1.9, 5.5}, {5.0, 8.5, 14.0}}};
  double nvls_step_latency_us = 25.0;

  // Pipeline fill. NCCL moves data in chunks of one buffer slot per step (NCCL_BUFFSIZE
  // 4 MiB / NCCL_STEPS 8 = 512 KiB for Simple; LL128: 120 x 640 threads x 8 B = 600 KiB of
  // which 120/128 data; LL: 8 lines x 512 threads x 16 B = 64 KiB of which half data),
  // smaller when the message is small (S / (n x channels) per step). Before the last
  // chunk leaves, every earlier step holds one chunk that crosses a hop at one channel's
  // copy rate, which adds (steps - 1) x chunk / channel rate. The channel count and rate
  // are fitted to the large-message intercepts of the published A100 curves (184 us on
  // 8x A100, 541 us on 2x DGX A100; configs/validation/collectives.yaml).
  std::array<double, 3> chunk_bytes = {32768.0, 576000.0, 524288.0};
  // The channel rate is one CTA's (one SM's) copy rate; it also bounds what Transformer
  // Engine's userbuffers kernels move on the num_sm SMs a recipe gives a pipelined or bulk
  // tensor-parallel overlap (parallelism/tp_overlap_exposure.h).
  double pipeline_channels = 16.0;
  double channel_bandwidth_GBps = 50.0;

  // NCCL's tree model (tuning.cc): tree bus bandwidth is 0.9 x the ring's, at most 110 GB/s
  // on up to 2 nodes and 80 GB/s beyond; algorithm bandwidth is half the tree bus bandwidth.
  double tree_bandwidth_factor = 0.9;
  double tree_max_bus_GBps_two_nodes = 110.0;
  double tree_max_bus_GBps_more_nodes = 80.0;

  // Host-side cost of launching a collective and waiting for it, as nccl-tests measures it
  // (CUDA kernel launch + stream synchronisation), microseconds. Fitted to the small-message
  // plateau of the published nccl-tests runs in configs/validation/collectives.yaml
  // (8 B all-reduce: 31 us on 8x A100, 38-41 us on 2x DGX A100, ~26 us on 8x H100).
  double launch_overhead_us = 12.0;

  [[nodiscard]] double linkEfficiency(topology::LinkType type, std::string_view gpu_key) const;
};

}  // namespace trainsim::sim
