#include "sim/trace_recorder.h"

#include <algorithm>
#include <map>

namespace trainsim::sim {

TraceRecorder::TraceRecorder(std::function<std::string(uint32_t)> tag_name) : tag_name_(std::move(tag_name)) {}

void TraceRecorder::beginRun(const TaskGraph& graph) {
  streams_.clear();
  for (StreamId stream = 0; stream < graph.streamCount(); ++stream) streams_.push_back(graph.streamInfo(stream));
  in_group_.assign(graph.taskCount(), false);
  for (TaskId task = 0; task < graph.taskCount(); ++task) in_group_[task] = graph.parent(task) != kNoTask;
}

void TraceRecorder::onTaskFinished(const TaskSpan& span) {
  // The flows inside collectives would drown the trace: keep the collectives (groups),
  // stream tasks and stand-alone flows (pipeline sends).
  if (span.task < in_group_.size() && in_group_[span.task]) return;
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
    } else {
      events.push_back(
          {kNetworkProcess, tag, span.start, span.finish, span.kind == TaskKind::kFlow ? tag + " transfer" : tag});
    }
  }
  std::sort(events.begin(), events.end(), [](const TraceEvent& a, const TraceEvent& b) {
    return std::tie(a.process, a.track, a.start, a.finish, a.name) <
           std::tie(b.process, b.track, b.start, b.finish, b.name);
  });
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
