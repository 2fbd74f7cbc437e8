// The data of the dashboard's job pages: a sink's runs as its commits record them in the target's
// snapshot summaries (`lakesync.sink-id`, `lakesync.source-position.<sink_id>`, the counts, and the
// run's start time, `lakesync.run-start-ms`), and, when the job's source can be asked, its lag over
// time against that source (engine/lag.h, the definition `lakesync status` uses too).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/engine/change_source.h"
#include "lakesync/engine/lag.h"
#include "lakesync/table/table.h"

namespace lakesync::ui {

// One commit of a sink: one run's snapshot in one target table.
struct SinkRun {
  std::string table;
  int64_t snapshot_id = 0;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;  // when the commit was made
  std::string operation;
  std::string position;  // as recorded ("12", or "7:5623…" for an Iceberg source)
  int64_t ordinal = 0;   // its integer part
  std::optional<int64_t> added_records, removed_records, live_records;
  std::optional<int64_t> run_start_ms;  // lakesync.run-start-ms, absent in commits of other writers
  nlohmann::json ToJson() const;
};

// Every sink id with commits on the tables' main lineages, and its runs oldest first (by commit time,
// then table). Sinks whose commits were all expired still show through the table properties' copy of
// their position (`positions`).
struct SinkHistory {
  std::vector<SinkRun> runs;
  std::map<std::string, std::string> positions;  // table → newest position recorded there
};
std::map<std::string, SinkHistory> CollectSinkHistories(const std::vector<std::shared_ptr<table::Table>>& tables);

// The lag around each run of a sink, against its source's commits: just before the run's commit (with
// the previous run's position) and just after it, and now. Each point is {timestamp_ms, point:
// "before"|"after"|"now", position, commits, seconds}. `commits`: the source's commits after the
// oldest position shown (engine::ListSourceCommits).
nlohmann::json LagHistory(const std::vector<SinkRun>& runs, const std::vector<engine::SourceCommit>& commits,
                          int64_t now_ms);

}  // namespace lakesync::ui
