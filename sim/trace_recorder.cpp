#include "sim/trace_recorder.h"

#include <algorithm>
#include <map>

namespace trainsim::sim {

TraceRecorder::TraceRecorder(std::function<std::string(uint32_t)> tag_name) : tag_name_(std::move(tag_name)) {}

void TraceRecorder::beginRun(const TaskGraph& graph, const topology::Cluster* cluster) {
  const std::size_t tasks = graph.taskCount();
  streams_.clear();
  for (StreamId stream = 0; stream < graph.streamCount(); ++stream) streams_.push_back(graph.streamInfo(stream));
  in_group_.assign(tasks, false);
  for (TaskId task = 0; task < tasks; ++task) in_group_[task] = graph.parent(task) != kNoTask;
  device_offset_.assign(tasks + 1, 0);
  devices_.clear();
  if (cluster == nullptr) return;

  // The GPU (rank) a link leaves from or arrives at; -1 for switches, NICs, ...
  auto rankAt = [&](topology::DeviceId device) { return cluster->device(device).rank; };
  // Per top-level task off the streams: the ranks that send or receive its flows.
  std::vector<std::vector<int32_t>> ranks(tasks);
  for (TaskId task = 0; task < tasks; ++task) {
    if (graph.kind(task) != TaskKind::kFlow) continue;
    const auto links = graph.routeLinks(graph.route(task));
    if (links.empty()) continue;
    TaskId top = task;
    while (graph.parent(top) != kNoTask) top = graph.parent(top);
    if (graph.stream(top) != kNoStream) continue;
    auto& into = ranks[top];
    if (!graph.routeMultiplicity(graph.route(task)).empty()) {
      // A bundle (FlowNetwork, "Bundles"): its links are its members' paths, not one path;
      // every GPU they leave from or arrive at takes part (on a chip-level torus that
      // includes the chips that relay them).
      for (const LinkId link : links) {
        if (const int32_t from = rankAt(cluster->link(link).from); from >= 0) into.push_back(from);
        if (const int32_t to = rankAt(cluster->link(link).to); to >= 0 && top != task) into.push_back(to);
      }
      continue;
    }
    if (const int32_t from = rankAt(cluster->link(links.front()).from); from >= 0) into.push_back(from);
    // A stand-alone transfer (a pipeline send) is shown on its sender only.
    if (top == task) continue;
    if (const int32_t to = rankAt(cluster->link(links.back()).to); to >= 0) into.push_back(to);
  }
  // A stand-alone delay that follows a collective (the fixed cost of further calls of the
  // same collective, say) belongs to that collective's GPUs.
  std::vector<Dependency> delays;
  for (const Dependency& d : graph.dependencies()) {
    if (graph.kind(d.after) == TaskKind::kCompute && graph.stream(d.after) == kNoStream && !in_group_[d.after]) {
      delays.push_back(d);
    }
  }
  std::sort(delays.begin(), delays.end(), [](const Dependency& a, const Dependency& b) {
    return std::tie(a.after, a.before) < std::tie(b.after, b.before);
  });
  for (const Dependency& d : delays) {
    if (d.before < d.after) ranks[d.after].insert(ranks[d.after].end(), ranks[d.before].begin(), ranks[d.before].end());
    // ... and one that follows a stream's task (what an overlapped collective leaves exposed
    // after a pass's compute) to that stream's GPU.
    const StreamId stream = graph.stream(d.before);
    if (stream != kNoStream && stream < streams_.size() && streams_[stream].device >= 0 &&
        graph.duration(d.after) > 0) {
      ranks[d.after].push_back(streams_[stream].device);
    }
  }
  for (std::size_t t = 0; t < tasks; ++t) {
    auto& found = ranks[t];
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    devices_.insert(devices_.end(), found.begin(), found.end());
    device_offset_[t + 1] = static_cast<uint32_t>(devices_.size());
  }
}

void TraceRecorder::onTaskFinished(const TaskSpan& span) {
  // The flows inside collectives would drown the trace: keep the collectives (groups),
  // stream tasks and stand-alone flows (pipeline sends). Zero-length compute tasks are the
  // builders' markers (a pass's start, the join of a pass and its overlapped collectives).
  if (span.task < in_group_.size() && in_group_[span.task]) return;
  if (span.kind == TaskKind::kCompute && span.finish == span.start) return;
  spans_.push_back(span);
}

namespace {

// JSON string escaping for names we build ourselves (no control characters).
std::string quoted(const std::string& text) {
  std::string result = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') result += '\\';
    result += c;
  }
  return result + "\"";
}

std::string microseconds(SimTime t) {
  // Picoseconds to microseconds with 6 decimals, exact in integer arithmetic.
  const SimTime whole = t / kMicrosecond;
  const SimTime fraction = t % kMicrosecond;
  std::string digits = std::to_string(fraction);
  return std::to_string(whole) + "." + std::string(6 - digits.size(), '0') + digits;
}

}  // namespace

void TraceRecorder::write(std::ostream& out) const {
  constexpr int64_t kNetworkProcess = -1;
  struct TraceEvent {
    int64_t process;
    std::string track;
    SimTime start;
    SimTime finish;
    std::string name;
  };
  std::vector<TraceEvent> events;
  events.reserve(spans_.size());
  for (const TaskSpan& span : spans_) {
    const std::string tag = tag_name_ ? tag_name_(span.tag) : std::to_string(span.tag);
    if (span.stream != kNoStream && span.stream < streams_.size()) {
      const StreamInfo& stream = streams_[span.stream];
      events.push_back({stream.device, stream.name, span.start, span.finish, tag});
      continue;
    }
    const std::string name = span.kind == TaskKind::kFlow ? tag + " transfer" : tag;
    const bool known = span.task + 1 < device_offset_.size();
    const uint32_t first = known ? device_offset_[span.task] : 0;
    const uint32_t last = known ? device_offset_[span.task + 1] : 0;
    if (first == last) events.push_back({kNetworkProcess, tag, span.start, span.finish, name});
    for (uint32_t i = first; i < last; ++i) events.push_back({devices_[i], tag, span.start, span.finish, name});
  }
  std::sort(events.begin(), events.end(), [](const TraceEvent& a, const TraceEvent& b) {
    return std::tie(a.process, a.track, a.start, a.finish, a.name) <
           std::tie(b.process, b.track, b.start, b.finish, b.name);
  });
  // Slices on one track must nest: events that overlap an earlier one on their track
  // (concurrent collectives of one kind, say) move to a second lane "dp_comm 2", and so on.
  std::vector<int> lane(events.size(), 0);
  for (std::size_t begin = 0; begin < events.size();) {
    std::size_t end = begin;
    while (end < events.size() && events[end].process == events[begin].process &&
           events[end].track == events[begin].track) {
      ++end;
    }
    std::vector<SimTime> lane_free;  // when each lane's last slice ends
    for (std::size_t e = begin; e < end; ++e) {
      std::size_t l = 0;
      while (l < lane_free.size() && lane_free[l] > events[e].start) ++l;
      if (l == lane_free.size()) lane_free.push_back(0);
      lane_free[l] = events[e].finish;
      lane[e] = static_cast<int>(l);
    }
    begin = end;
  }
  for (std::size_t e = 0; e < events.size(); ++e) {
    if (lane[e] > 0) events[e].track += " " + std::to_string(lane[e] + 1);
  }
  std::map<std::pair<int64_t, std::string>, int> track_ids;
  for (const TraceEvent& event : events) track_ids.emplace(std::make_pair(event.process, event.track), 0);
  int next = 0;
  for (auto& [key, id] : track_ids) id = next++;

  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto separator = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  std::map<int64_t, bool> named_processes;
  for (const auto& [key, id] : track_ids) {
    const auto& [process, track] = key;
    if (!named_processes[process]) {
      named_processes[process] = true;
      separator();
      out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << process << ",\"args\":{\"name\":"
          << quoted(process == kNetworkProcess ? std::string("network") : "GPU " + std::to_string(process)) << "}}";
    }
    separator();
    out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << process << ",\"tid\":" << id
        << ",\"args\":{\"name\":" << quoted(track) << "}}";
  }
  for (const TraceEvent& event : events) {
    separator();
    out << "{\"ph\":\"X\",\"name\":" << quoted(event.name) << ",\"pid\":" << event.process
        << ",\"tid\":" << track_ids.at({event.process, event.track}) << ",\"ts\":" << microseconds(event.start)
        << ",\"dur\":" << microseconds(event.finish - event.start) << "}";
  }
  out << "\n]}\n";
}

}  // namespace trainsim::sim
