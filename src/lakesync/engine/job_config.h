// A sync job: one YAML (or JSON) file naming a source and a sink with the keys users know from
// Apache Beam's Managed I/O (shared/specs/beam-compat.md), plus how often to run.
//
//   name: orders-sync                 # optional; names the job in logs and summaries
//   source:
//     type: delta_lake_cdc            # delta_lake_cdc | iceberg_cdc | delta_sharing_cdc | delta_lake | iceberg | delta_sharing
//     table: s3://lake/orders         # the source's own keys: see docs/jobs.md
//     start_version: 3
//     initial_snapshot: true          # CDC sources: import the table at the start bound first, or
//                                     # {if_target_not_empty: fail | skip | overwrite}
//   sink:
//     type: iceberg                   # optional; the only sink type
//     table: db.orders                # every key of the Iceberg sink (sink/sink_config.h)
//     mode: merge-on-read
//     equality_columns: [id]
//   schedule: {every: 15m}            # optional; without it (and without streaming) one run
//   retry: {max_attempts: 5, initial_backoff_seconds: 1}   # transient failures, per run
//   maintenance: {compact: {when_deleted_ratio: 0.2}}       # after each run: engine/job_maintenance.h
//
// Relative paths (a Delta source's table, catalog warehouses and SQLite uris, the dead-letter file)
// are made absolute against the job file's folder when the job is parsed, so a job means the same
// wherever it is run from.
//
// The source block is kept as parsed JSON: each source type validates its own keys when it is
// opened (engine/source_factory.h), so the messages name the key and the source type.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"
#include "lakesync/sink/schema_evolution.h"
#include "lakesync/engine/job_maintenance.h"
#include "lakesync/sink/sink_config.h"

namespace lakesync::engine {

enum class SourceType { kDeltaLakeCdc, kIcebergCdc, kDeltaLake, kIceberg, kDeltaSharingCdc, kDeltaSharing };
std::string_view SourceTypeName(SourceType type);
inline bool IsCdcSource(SourceType type) {
  return type == SourceType::kDeltaLakeCdc || type == SourceType::kIcebergCdc || type == SourceType::kDeltaSharingCdc;
}

// What an initial import does when the target already holds rows or another sink's progress
// (`initial_snapshot: {if_target_not_empty: ...}`).
enum class IfTargetNotEmpty {
  kFail,       // refuse, saying what the target holds (the default)
  kSkip,       // take the target as holding the source as of the start; apply only the changes after it
  kOverwrite,  // remove the target's rows, then import
};
std::string_view IfTargetNotEmptyName(IfTargetNotEmpty policy);

struct RetryPolicy {
  int max_attempts = 5;                // attempts per run for transient failures, >= 1
  double initial_backoff_seconds = 1;  // doubled after each failed attempt, capped at 60 s
};

struct JobConfig {
  std::string name;         // `name`, or the job file's stem; names the job in logs, never its progress
  std::string location;     // the job file, for messages
  std::string directory;    // the job file's folder, absolute: relative paths in the job resolve here
  SourceType source_type = SourceType::kDeltaLakeCdc;
  nlohmann::json source;    // the source block without `type`
  bool streaming = false;   // source.streaming: keep running, polling for new commits
  bool initial_snapshot = false;  // source.initial_snapshot (CDC sources)
  IfTargetNotEmpty if_target_not_empty = IfTargetNotEmpty::kFail;
  bool if_target_not_empty_given = false;
  // mode, sequence and change-type columns already defaulted. sink_id only when the job sets it: the
  // runner derives the default from the source's identity and the target (JobRunner::Make).
  sink::SinkConfig sink;
  bool sink_id_given = false;
  std::optional<std::chrono::seconds> every;  // schedule.every
  RetryPolicy retry;
  // `threads`: the size of the engine's executor for this job (common/executor.h); the CLI's
  // --threads and LAKESYNC_THREADS take precedence. Unset: the machine's cores.
  std::optional<int> threads;
  // `schema_evolution`: additive (default) changes the target's schema with the data when the
  // source's changes (new columns, widened types, renames); none leaves it as it is
  // (sink/schema_evolution.h, docs/jobs.md "Schema changes").
  sink::SchemaEvolution schema_evolution = sink::SchemaEvolution::kAdditive;
  // `maintenance`: table maintenance after each run's commit (engine/job_maintenance.h).
  std::optional<MaintenanceConfig> maintenance;
};

// "15m", "30s", "1h", "1h30m", "90" (seconds), or a YAML number of seconds; > 0 (>= 0 with
// allow_zero: a maintenance time budget of 0 means "one unit of work", maintenance/budget.h).
// Errors: InvalidArgument naming `key` and the value.
Result<std::chrono::seconds> ParseDuration(const nlohmann::json& value, std::string_view key, bool allow_zero = false);

// Parses a job document. `location` names the file in every message; its folder is the base of
// relative paths. Defaults filled in here: mode (merge-on-read for CDC sources and for imports with
// equality_columns, else append),
// and the sink's change-type and sequence columns (the source's own, unless given).
// Errors: InvalidArgument naming the key for unknown keys, wrong types and contradictions; as
// ParseSinkConfig for the sink block.
Result<JobConfig> ParseJobConfig(const nlohmann::json& document, std::string location);
Result<JobConfig> LoadJobConfigFile(const std::string& path);

// Control columns each source type emits (the sink's defaults).
std::string DefaultChangeTypeColumn(SourceType type);  // "_change_type"
std::string DefaultSequenceColumn(SourceType type);    // "_commit_version" / "_commit_snapshot_sequence_number"

}  // namespace lakesync::engine
