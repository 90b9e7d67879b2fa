#include <string>

#include "topology/builders.h"
#include "topology/link_defaults.h"

namespace trainsim::topology::detail {

int64_t picosecondsFromMicroseconds(double us) { return defaults::picoseconds(us); }

namespace {

std::string nodeDeviceName(int node, const char* kind, int index) {
  return "n" + std::to_string(node) + "/" + kind + std::to_string(index);
}

}  // namespace

std::vector<DeviceId> buildNode(Cluster& cluster, int node) {
  const ClusterSpec& spec = cluster.spec();
  const int gpus = spec.gpus_per_node;
  std::vector<DeviceId> gpu_ids;
  gpu_ids.reserve(static_cast<std::size_t>(gpus));
  for (int i = 0; i < gpus; ++i) {
    gpu_ids.push_back(cluster.addDevice(Device{DeviceKind::kGpu, node, i, -1, nodeDeviceName(node, "gpu", i)}));
  }

  // Scale-up fabric. The NVSwitch chips of a node (4 in DGX H100, 6 in DGX A100) are one
  // logical switch: every GPU's NVLinks are spread evenly over them, so per-GPU bandwidth
  // is what limits traffic, not a particular chip.
  const double scale_up_Bps = spec.intra_node.bandwidth_GBps * 1e9;
  const int64_t scale_up_latency = picosecondsFromMicroseconds(spec.intra_node.latency_us);
  if (gpus > 1 && spec.intra_node.fabric == IntraNodeFabric::kNvSwitch) {
    const DeviceId nvswitch =
        cluster.addDevice(Device{DeviceKind::kNvSwitch, node, 0, -1, "n" + std::to_string(node) + "/nvswitch"});
    for (DeviceId gpu : gpu_ids) {
      cluster.addLinkPair(gpu, nvswitch, LinkType::kNvLink, scale_up_Bps, scale_up_latency / 2);
    }
  } else if (gpus > 1 && spec.intra_node.fabric == IntraNodeFabric::kNvLinkMesh) {
    // Full mesh (MI300X xGMI, 4-GPU NVLink boards): each pair gets an equal share.
    const double pair_Bps = scale_up_Bps / (gpus - 1);
    for (int a = 0; a < gpus; ++a) {
      for (int b = a + 1; b < gpus; ++b) {
        cluster.addLinkPair(gpu_ids[a], gpu_ids[b], LinkType::kNvLink, pair_Bps, scale_up_latency);
      }
    }
  }

  // PCIe tree: switches of gpus_per_switch GPUs (and their NICs) under CPU sockets.
  const double pcie_Bps = spec.pcie.bandwidth_GBps * 1e9;
  const int64_t pcie_hop_latency = picosecondsFromMicroseconds(spec.pcie.latency_us) / 2;
  const int switches = gpus / spec.pcie.gpus_per_switch;
  const int sockets = spec.pcie.sockets;
  std::vector<DeviceId> cpu_ids;
  for (int c = 0; c < sockets; ++c) {
    cpu_ids.push_back(cluster.addDevice(Device{DeviceKind::kCpu, node, c, -1, nodeDeviceName(node, "cpu", c)}));
  }
  for (int c = 1; c < sockets; ++c) {
    cluster.addLinkPair(cpu_ids[c - 1], cpu_ids[c], LinkType::kSocketInterconnect,
                        spec.pcie.socket_interconnect_GBps * 1e9,
                        picosecondsFromMicroseconds(defaults::kSocketInterconnectLatencyUs));
  }
  std::vector<DeviceId> switch_ids;
  for (int s = 0; s < switches; ++s) {
    const DeviceId pcie_switch =
        cluster.addDevice(Device{DeviceKind::kPcieSwitch, node, s, -1, nodeDeviceName(node, "pcie", s)});
    switch_ids.push_back(pcie_switch);
    cluster.addLinkPair(pcie_switch, cpu_ids[static_cast<std::size_t>(s * sockets / switches)], LinkType::kPcie,
                        pcie_Bps, pcie_hop_latency);
  }
  for (int i = 0; i < gpus; ++i) {
    cluster.addLinkPair(gpu_ids[i], switch_ids[static_cast<std::size_t>(i / spec.pcie.gpus_per_switch)],
                        LinkType::kPcie, pcie_Bps, pcie_hop_latency);
  }

  std::vector<DeviceId> nic_ids;
  if (!spec.inter_node) return nic_ids;
  const InterNodeSpec& net = *spec.inter_node;
  // More NICs than GPUs (AWS p5: 32 x 100 Gb/s EFA for 8 GPUs): the NICs of one GPU are
  // folded into one logical NIC of their summed rate, as NCCL stripes a GPU's traffic over them.
  const int fold = net.nics_per_node > gpus ? net.nics_per_node / gpus : 1;
  const int nics = net.nics_per_node / fold;
  for (int n = 0; n < nics; ++n) {
    const DeviceId nic = cluster.addDevice(Device{DeviceKind::kNic, node, n, -1, nodeDeviceName(node, "nic", n)});
    nic_ids.push_back(nic);
    // NIC n sits under the PCIe switch of the GPUs it serves (GPUDirect RDMA path).
    cluster.addLinkPair(nic, switch_ids[static_cast<std::size_t>(n * switches / nics)], LinkType::kPcie, pcie_Bps,
                        pcie_hop_latency);
  }
  return nic_ids;
}

}  // namespace trainsim::topology::detail
