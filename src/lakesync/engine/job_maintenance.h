// The job file's `maintenance:` block (docs/jobs.md, docs/maintenance.md): table maintenance run by
// `lakesync run` after each run's own commit, in the same process (never concurrent with it):
//
//   maintenance:
//     compact:                      # when the table's read overhead, deleted rows or file count pass a threshold
//       when_read_overhead: 0.1     #   estimated extra read work (default 0.1 when no when_* is given)
//       when_deleted_ratio: 0.2     #   (deleted rows) / (rows in data files), from the snapshot summary
//       when_file_count: 200        #   live data files
//       target_file_size: 134217728 #   as `table compact --target-file-size` (bytes)
//       min_deleted_ratio: 0.3      #   as `table compact --min-deleted-ratio`
//       max_files: 500              #   at most this many files rewritten per run
//       max_duration: 10m           #   time budget: bins finished by then are committed (>= 1 bin)
//     rewrite_manifests:
//       when_manifest_count: 50     # when the current snapshot lists this many manifests
//     expire_snapshots:             # as `table expire-snapshots`, at most once per `every`
//       older_than: 3d
//       retain_last: 10
//       every: 1h
//       max_duration: 10m           #   time budget for deleting the expired files (the rest: orphans)
//     remove_orphans:               # as `table remove-orphans --apply`, at most once per `every`
//       older_than: 3d
//       every: 1d
//       max_duration: 10m           #   time budget for deleting orphans (the rest: the next run's)
//
// Whether a step is due is decided from the table alone, never from timers in the process: the
// thresholds from the current snapshot's summary, the schedules from the table property
// `lakesync.maintenance.<step>.last-run-ms`, which the step's own commit (expiry) or a property
// commit right after it (orphan removal) writes. So a job run once an hour by cron, a schedule, or
// several processes in turn all maintain the table at the same pace. `now` is the wall clock, or
// LAKESYNC_MAINTENANCE_NOW (epoch milliseconds; for tests, which cannot wait days).
//
// A failed step is reported in the run's summary (`maintenance` member) and logged; it never fails
// or undoes the run's commit, and later steps still run.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/catalog.h"
#include "lakesync/common/status.h"

namespace lakesync::engine {

struct MaintenanceConfig {
  // Each step's time budget unless its `max_duration` says otherwise (maintenance/budget.h): the run
  // after which maintenance happens is delayed by at most about this much per step, plus one unit of
  // work (a bin, a file) that a budget never interrupts.
  static constexpr std::chrono::milliseconds kDefaultStepBudget{10 * 60 * 1000};
  // The read overhead estimate of when_read_overhead: what a full scan reads beyond the compacted
  // table, as a fraction of its live rows — the deleted rows (decoded, then dropped) plus a fixed cost
  // per data file beyond the first and per delete file (opening it, its footer, its manifest entries),
  // counted as this many rows. From docs/benchmarks.md, "A simulated day": a 200,000-row table read
  // in ~25 ms of CPU took ~15 ms more with nine extra data files and nine deletion vectors, ~0.8 ms or
  // ~6,000 rows each (the first extra file and vector cost more: ~1.2x after one sync).
  static constexpr int64_t kFileReadCostRows = 5000;
  static constexpr double kDefaultReadOverhead = 0.1;
  struct Compact {
    std::optional<double> when_read_overhead;
    std::optional<double> when_deleted_ratio;
    std::optional<int64_t> when_file_count;
    std::optional<int64_t> target_file_size;
    double min_deleted_ratio = 0.3;
    int64_t max_files = 500;
    std::chrono::milliseconds max_duration = kDefaultStepBudget;
  };
  struct RewriteManifests {
    int64_t when_manifest_count = 50;
  };
  struct ExpireSnapshots {
    std::optional<std::chrono::seconds> older_than;  // default: the table's history.expire.* or 5 days
    std::optional<int32_t> retain_last;
    std::chrono::seconds every{3600};
    std::chrono::milliseconds max_duration = kDefaultStepBudget;
  };
  struct RemoveOrphans {
    std::chrono::seconds older_than{3 * 24 * 3600};
    std::chrono::seconds every{24 * 3600};
    std::chrono::milliseconds max_duration = kDefaultStepBudget;
  };
  std::optional<Compact> compact;
  std::optional<RewriteManifests> rewrite_manifests;
  std::optional<ExpireSnapshots> expire_snapshots;
  std::optional<RemoveOrphans> remove_orphans;
};

// Parses the `maintenance` block. Errors: InvalidArgument naming the key ("<where>: maintenance.compact.
// when_deleted_ratio must be a number from 0 to 1") for unknown keys, wrong types and empty steps.
Result<MaintenanceConfig> ParseMaintenanceConfig(const nlohmann::json& block, const std::string& where);

// The table property holding when a scheduled step last ran (epoch ms).
std::string MaintenanceLastRunProperty(std::string_view step);

// Runs the steps that are due on one table, in the order compact, rewrite_manifests,
// expire_snapshots, remove_orphans. Returns what each did as JSON ({"compact": {...}, ...}; a step
// not due says so, a failed one carries "error"); never fails.
nlohmann::json RunMaintenance(const MaintenanceConfig& config, const std::shared_ptr<catalog::Catalog>& catalog,
                              const catalog::TableIdentifier& table, int64_t now_ms);

// Now for maintenance decisions: LAKESYNC_MAINTENANCE_NOW (epoch ms) when set, else the wall clock.
Result<int64_t> MaintenanceNowMs();

}  // namespace lakesync::engine
