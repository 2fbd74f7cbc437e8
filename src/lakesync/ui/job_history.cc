#include "lakesync/ui/job_history.h"

#include <algorithm>

#include "lakesync/engine/job_runner.h"
#include "lakesync/sink/cdc_writer.h"
#include "lakesync/sink/progress.h"
#include "lakesync/ui/table_health.h"

namespace lakesync::ui {
namespace {

using Json = nlohmann::json;

Json Optional(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); }

Json LagPoint(int64_t at_ms, const char* point, const SinkRun* position, const engine::Lag& lag) {
  return {{"timestamp_ms", at_ms},
          {"point", point},
          {"position", position ? Json(position->position) : Json(nullptr)},
          {"commits", Optional(lag.commits)},
          {"seconds", lag.seconds ? Json(*lag.seconds) : Json(nullptr)}};
}

}  // namespace

Json SinkRun::ToJson() const {
  Json j = {{"table", table},
            {"snapshot_id", SnapshotIdJson(snapshot_id)},
            {"sequence_number", sequence_number},
            {"timestamp_ms", timestamp_ms},
            {"operation", operation},
            {"position", position},
            {"ordinal", ordinal},
            {"added_records", Optional(added_records)},
            {"removed_records", Optional(removed_records)},
            {"live_records", Optional(live_records)},
            {"run_start_ms", Optional(run_start_ms)}};
  // How long the run took, from its start to its commit (only lakesync jobs record the start).
  j["duration_seconds"] =
      run_start_ms && *run_start_ms <= timestamp_ms ? Json(static_cast<double>(timestamp_ms - *run_start_ms) / 1000.0)
                                                     : Json(nullptr);
  return j;
}

std::map<std::string, SinkHistory> CollectSinkHistories(const std::vector<std::shared_ptr<table::Table>>& tables) {
  std::map<std::string, SinkHistory> out;
  for (const auto& t : tables) {
    const auto& m = *t->metadata();
    if (auto positions = sink::CommittedPositions(m); positions.ok()) {
      for (const auto& [id, position] : *positions) out[id].positions[t->name()] = position.text;
    }
    const auto current = m.CurrentSnapshot();
    if (!current) continue;
    for (const auto& s : m.Ancestors(current->snapshot_id)) {
      auto id = s->summary.find(sink::kSummarySinkId);
      if (id == s->summary.end()) continue;
      auto text = s->summary.find(sink::kSummarySourcePositionPrefix + id->second);
      if (text == s->summary.end()) continue;
      auto parsed = sink::ParseSourcePosition(text->second);
      if (!parsed.ok()) continue;  // not a position lakesync wrote: nothing to show for it
      SinkRun run;
      run.table = t->name();
      run.snapshot_id = s->snapshot_id;
      run.sequence_number = s->sequence_number;
      run.timestamp_ms = s->timestamp_ms;
      run.operation = s->operation();
      run.position = text->second;
      run.ordinal = parsed->ordinal;
      run.added_records = sink::SummaryNumber(*s, "added-records").value_or(0);
      run.removed_records = sink::RemovedRecords(*s);
      run.live_records = sink::LiveRecords(*s);
      run.run_start_ms = sink::SummaryNumber(*s, engine::kSummaryRunStartMs);
      out[id->second].runs.push_back(std::move(run));
    }
  }
  for (auto& [id, history] : out) {
    std::stable_sort(history.runs.begin(), history.runs.end(), [](const SinkRun& a, const SinkRun& b) {
      return std::tie(a.timestamp_ms, a.ordinal, a.table) < std::tie(b.timestamp_ms, b.ordinal, b.table);
    });
  }
  return out;
}

Json LagHistory(const std::vector<SinkRun>& runs, const std::vector<engine::SourceCommit>& commits, int64_t now_ms) {
  Json points = Json::array();
  const SinkRun* previous = nullptr;
  for (const auto& run : runs) {
    // A run that wrote several tables (a table template) is one point, not one per table.
    if (previous && previous->ordinal == run.ordinal && previous->timestamp_ms <= run.timestamp_ms &&
        previous->table != run.table) {
      continue;
    }
    if (previous) {
      points.push_back(LagPoint(run.timestamp_ms, "before", previous,
                                engine::LagAt(commits, previous->ordinal, run.timestamp_ms)));
    }
    points.push_back(LagPoint(run.timestamp_ms, "after", &run, engine::LagAt(commits, run.ordinal, run.timestamp_ms)));
    previous = &run;
  }
  if (previous) points.push_back(LagPoint(now_ms, "now", previous, engine::LagAt(commits, previous->ordinal, now_ms)));
  return points;
}

}  // namespace lakesync::ui
