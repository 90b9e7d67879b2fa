#include "cli/topology_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "base/expected.h"
#include "cli/input_file.h"
#include "cli/json_text.h"
#include "cli/output_file.h"
#include "topology/cluster.h"
#include "topology/cluster_loader.h"
#include "topology/cluster_metrics.h"
#include "topology/router.h"

namespace trainsim::cli {
namespace {

using topology::Cluster;
using topology::DeviceId;

// An endpoint given on the command line: a rank ("9") or a device name ("n1/gpu1").
DeviceId resolveEndpoint(const Cluster& cluster, const std::string& text) {
  int64_t rank = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rank);
  if (error == std::errc() && end == text.data() + text.size()) {
    if (rank < 0 || rank >= cluster.acceleratorCount()) {
      throwInputError("--path", "",
                      "GPU rank " + text + " is out of range; the cluster has ranks 0.." +
                          std::to_string(cluster.acceleratorCount() - 1));
    }
    return cluster.accelerator(rank);
  }
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    if (cluster.device(id).name == text) return id;
  }
  throwInputError("--path", "", "no device named \"" + text + "\"; give a GPU rank or a name such as n0/gpu0");
}

std::string gigabytes(double bytes_per_s) { return fmt::format("{:.1f} GB/s", bytes_per_s / 1e9); }
std::string microseconds(int64_t ps) { return fmt::format("{:.2f} us", static_cast<double>(ps) / 1e6); }

nlohmann::ordered_json pathJson(const Cluster& cluster, DeviceId from, const topology::Route& route) {
  nlohmann::ordered_json hops = nlohmann::ordered_json::array();
  for (topology::LinkId id : route.links) {
    const auto& link = cluster.link(id);
    hops.push_back({{"from", cluster.device(link.from).name},
                    {"to", cluster.device(link.to).name},
                    {"type", topology::linkTypeName(link.type)},
                    {"bandwidth_GBps", link.bandwidth_Bps / 1e9},
                    {"latency_us", static_cast<double>(link.latency_ps) / 1e6}});
  }
  return {{"from", cluster.device(from).name},
          {"to",
           route.links.empty() ? cluster.device(from).name : cluster.device(cluster.link(route.links.back()).to).name},
          {"hops", route.links.size()},
          {"bottleneck_GBps", route.links.empty() ? 0.0 : route.bottleneck_Bps / 1e9},
          {"latency_us", static_cast<double>(route.latency_ps) / 1e6},
          {"links", hops}};
}

void writeDot(std::ostream& out, const Cluster& cluster) {
  out << "graph \"" << cluster.spec().name << "\" {\n  overlap=false;\n";
  for (const auto& device : cluster.devices()) {
    const char* shape = topology::isAccelerator(device.kind) ? "box" : "ellipse";
    out << "  \"" << device.name << "\" [shape=" << shape << ", label=\"" << device.name << "\"];\n";
  }
  for (std::size_t id = 0; id < cluster.links().size(); id += 2) {
    const auto& link = cluster.links()[id];
    if (link.trunk) continue;
    out << "  \"" << cluster.device(link.from).name << "\" -- \"" << cluster.device(link.to).name << "\" [label=\""
        << topology::linkTypeName(link.type) << " " << fmt::format("{:g}", link.bandwidth_Bps / 1e9) << " GB/s\"];\n";
  }
  out << "}\n";
}

int run(const TopologyOptions& options, const CommandContext& context) {
  requireOneStdoutOutput({{"--json", &options.json_file}, {"--dot", &options.dot_file}});
  requireWritableOutputs({&options.json_file, &options.dot_file});
  requireNotDirectory(options.cluster, "a cluster YAML file");
  std::vector<Override> overrides;
  for (const auto& text : options.overrides) overrides.push_back(parseOverride(text));
  const topology::ClusterSpec spec = valueOrThrow(topology::loadClusterFile(options.cluster, context.paths, overrides));
  const Cluster cluster = valueOrThrow(Cluster::build(spec));
  const topology::ClusterMetrics metrics = topology::measureCluster(cluster);
  const bool want_bisection = !options.no_bisection;
  const double bisection = want_bisection ? topology::bisectionBandwidth(cluster) : 0.0;

  std::optional<nlohmann::ordered_json> path_json;
  std::string path_text;
  if (!options.path.empty()) {
    const DeviceId from = resolveEndpoint(cluster, options.path[0]);
    const DeviceId to = resolveEndpoint(cluster, options.path[1]);
    topology::Router router(cluster);
    const topology::Route& route = router.route(from, to);
    path_json = pathJson(cluster, from, route);
    path_text = fmt::format("path {} -> {}: {} hops, bottleneck {}, latency {}\n", cluster.device(from).name,
                            cluster.device(to).name, route.links.size(),
                            route.links.empty() ? std::string("-") : gigabytes(route.bottleneck_Bps),
                            microseconds(route.latency_ps));
    path_text += "  " + cluster.device(from).name;
    for (topology::LinkId id : route.links) {
      const auto& link = cluster.link(id);
      path_text += fmt::format(" -[{} {}]-> {}", topology::linkTypeName(link.type), gigabytes(link.bandwidth_Bps),
                               cluster.device(link.to).name);
    }
    path_text += "\n";
  }

  if (!options.dot_file.empty()) writeOutput(options.dot_file, [&](std::ostream& out) { writeDot(out, cluster); });

  if (!options.json_file.empty()) {
    nlohmann::ordered_json json = {
        {"cluster", spec.name},
        {"gpu", spec.gpu.key},
        {"nodes", spec.nodes},
        {"gpus_per_node", spec.gpus_per_node},
        {"gpus", cluster.acceleratorCount()},
        {"devices", metrics.devices_by_kind},
        {"links", metrics.links_by_type},
        {"scale_up_bandwidth_per_gpu_GBps", metrics.scale_up_bandwidth_per_gpu_Bps / 1e9},
        {"network_injection_per_gpu_GBps", metrics.network_injection_per_gpu_Bps / 1e9},
    };
    json["bisection_bandwidth_GBps"] = want_bisection ? nlohmann::ordered_json(bisection / 1e9) : nullptr;
    if (path_json) json["path"] = *path_json;
    writeOutput(options.json_file, [&](std::ostream& out) { out << jsonText(json, 2) << "\n"; });
  }
  if (anyOnStdout({&options.json_file, &options.dot_file})) return 0;

  std::string text = fmt::format("cluster {}: {} nodes x {} {} = {} GPUs\n", spec.name, spec.nodes, spec.gpus_per_node,
                                 spec.gpu.key, cluster.acceleratorCount());
  if (spec.inter_node) {
    const auto& net = *spec.inter_node;
    if (net.topology == topology::NetworkTopology::kTorus) {
      std::string dims;
      for (int d : net.torus_dims) dims += (dims.empty() ? "" : "x") + std::to_string(d);
      text += fmt::format("network: {} torus, {} per link\n", dims, gigabytes(net.link_bandwidth_GBps * 1e9));
    } else {
      text += fmt::format("network: {} {}, {} NICs/node x {:g} Gb/s, radix {}\n",
                          topology::networkTopologyName(net.topology), topology::networkProtocolName(net.protocol),
                          net.nics_per_node, net.nic_bandwidth_Gbps, net.switch_radix);
    }
  }
  text += "devices:\n";
  for (const auto& [kind, count] : metrics.devices_by_kind) text += fmt::format("  {:<14}{:>10}\n", kind, count);
  text += "links (each a pair of directed links):\n";
  for (const auto& [type, count] : metrics.links_by_type) text += fmt::format("  {:<20}{:>10}\n", type, count);
  text += "per-GPU bandwidth, per direction:\n";
  text += fmt::format("  scale-up (NVLink/ICI)  {}\n", gigabytes(metrics.scale_up_bandwidth_per_gpu_Bps));
  text += fmt::format("  network injection      {}\n", gigabytes(metrics.network_injection_per_gpu_Bps));
  if (want_bisection) text += fmt::format("bisection bandwidth (rank halves, max-flow): {}\n", gigabytes(bisection));
  text += path_text;
  std::cout << text;
  return 0;
}

}  // namespace

void addTopologyCommand(CLI::App& app, TopologyOptions& options) {
  CLI::App* command = app.add_subcommand("topology", "Describe the cluster graph: devices, links, bandwidths, paths");
  command->add_option("cluster", options.cluster, "Cluster preset name or YAML file")->required();
  command->add_option("--set", options.overrides, "Override a cluster key: KEY=VALUE (repeatable)");
  command->add_option("--path", options.path, "Show the route between two GPUs (ranks or device names)")->expected(2);
  command->add_option("--json", options.json_file, "Write the description as JSON (- = stdout)");
  command->add_option("--dot", options.dot_file, "Write a Graphviz picture of the graph (- = stdout)");
  command->add_flag("--no-bisection", options.no_bisection, "Skip the max-flow bisection computation");
}

int runTopology(const TopologyOptions& options, const CommandContext& context) {
  try {
    return run(options, context);
  } catch (const InputError& error) {
    return reportError(error.error(), context);
  }
}

}  // namespace trainsim::cli
