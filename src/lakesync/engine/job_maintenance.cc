#include "lakesync/engine/job_maintenance.h"

#include <fmt/format.h>

#include <cstdlib>

#include "lakesync/common/config_keys.h"
#include "lakesync/common/logging.h"
#include "lakesync/engine/job_config.h"
#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/maintenance/compact.h"
#include "lakesync/maintenance/expire_snapshots.h"
#include "lakesync/maintenance/remove_orphans.h"
#include "lakesync/maintenance/rewrite_manifests.h"
#include "lakesync/sink/progress.h"
#include "lakesync/table/snapshot_update.h"

namespace lakesync::engine {
namespace {

using Json = nlohmann::json;

Result<double> Ratio(const Json& block, const char* key, const std::string& where) {
  const Json& v = block.at(key);
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1) {
    return InvalidArgument("{}.{} must be a number from 0 to 1, not {}", where, key, v.dump());
  }
  return v.get<double>();
}

Result<int64_t> Count(const Json& block, const char* key, const std::string& where, int64_t min = 1) {
  const Json& v = block.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < min) {
    return InvalidArgument("{}.{} must be a whole number of at least {}, not {}", where, key, min, v.dump());
  }
  return v.get<int64_t>();
}

Result<std::chrono::seconds> Duration(const Json& block, const char* key, const std::string& where) {
  return ParseDuration(block.at(key), fmt::format("{}.{}", where, key));
}

// A step's `max_duration` (its time budget; 0 allowed: one unit of work).
Result<std::chrono::seconds> Budget(const Json& block, const std::string& where) {
  return ParseDuration(block.at("max_duration"), fmt::format("{}.max_duration", where), /*allow_zero=*/true);
}

Status CheckBlock(const Json& block, const std::vector<std::string>& keys, const std::string& where) {
  if (block.is_null()) return Status::OK();  // `compact:` with no keys takes the defaults
  return CheckKnownKeys(block, keys, where);
}

// Records that a scheduled step ran, in a commit of its own (steps that commit nothing else).
Status RecordLastRun(table::Table& t, std::string_view step, int64_t now_ms) {
  std::vector<iceberg::TableRequirement> requirements = {iceberg::AssertTableUuid{t.metadata()->table_uuid}};
  std::vector<iceberg::TableUpdate> updates = {
      iceberg::SetProperties{{{MaintenanceLastRunProperty(step), std::to_string(now_ms)}}}};
  ARROW_ASSIGN_OR_RAISE(auto committed, t.catalog()->CommitTable(t.identifier(), requirements, updates));
  t.Update(std::move(committed));
  return Status::OK();
}

// Whether `every` has passed since the step last ran (by the table property); the JSON says why not.
bool Due(const table::Table& t, std::string_view step, std::chrono::seconds every, int64_t now_ms, Json& report) {
  const auto& props = t.metadata()->properties;
  auto it = props.find(MaintenanceLastRunProperty(step));
  if (it == props.end()) return true;
  int64_t last = 0;
  try {
    last = std::stoll(it->second);
  } catch (...) {
    return true;  // unreadable: run, and the step writes a good value
  }
  const int64_t next = last + std::chrono::duration_cast<std::chrono::milliseconds>(every).count();
  if (now_ms >= next) return true;
  report = {{"status", "not-due"}, {"last_run_ms", last}, {"next_run_ms", next}};
  return false;
}

Result<Json> RunCompact(const MaintenanceConfig::Compact& c, const std::shared_ptr<table::Table>& t) {
  auto snapshot = t->metadata()->CurrentSnapshot();
  if (!snapshot) return Json{{"status", "not-due"}, {"reason", "the table has no snapshot"}};
  ARROW_ASSIGN_OR_RAISE(auto totals, sink::CountSnapshotTotals(*t->io(), *t->metadata(), *snapshot));
  const int64_t records = totals.records;
  const int64_t deleted = totals.deleted_positions + totals.equality_deletes;
  const int64_t files = totals.data_files;
  const double ratio = records > 0 ? static_cast<double>(deleted) / static_cast<double>(records) : 0.0;
  // Extra read work against the compacted table (MaintenanceConfig::kFileReadCostRows says how it is
  // counted): small tables feel each extra file more than big ones, so one threshold suits both.
  const int64_t live = std::max<int64_t>(1, records - deleted);
  const int64_t extra_files = std::max<int64_t>(0, files - 1) + totals.delete_files;
  const double overhead =
      static_cast<double>(deleted + MaintenanceConfig::kFileReadCostRows * extra_files) / static_cast<double>(live);
  Json report = {{"deleted_ratio", ratio}, {"data_files", files}, {"read_overhead", overhead}};
  const bool by_overhead = c.when_read_overhead && extra_files > 0 && overhead >= *c.when_read_overhead;
  const bool by_ratio = c.when_deleted_ratio && deleted > 0 && ratio >= *c.when_deleted_ratio;
  const bool by_count = c.when_file_count && files >= *c.when_file_count;
  if (!by_overhead && !by_ratio && !by_count) {
    report["status"] = "not-due";
    return report;
  }
  maintenance::CompactOptions options;
  options.target_file_size = c.target_file_size;
  options.min_deleted_ratio = c.min_deleted_ratio;
  options.max_files = c.max_files;
  options.max_duration = c.max_duration;
  ARROW_ASSIGN_OR_RAISE(auto r, maintenance::Compact(t, options));
  report["status"] = r.snapshot_id ? "done" : "nothing-to-do";
  report["rewritten_data_files"] = r.rewritten_data_files;
  report["added_data_files"] = r.added_data_files;
  report["removed_delete_files"] = r.removed_delete_files;
  report["bins"] = r.bins;
  report["bins_left"] = r.bins_left;
  report["files_left"] = r.files_left;
  if (r.snapshot_id) report["snapshot_id"] = *r.snapshot_id;
  return report;
}

Result<Json> RunRewriteManifests(const MaintenanceConfig::RewriteManifests& c, const std::shared_ptr<table::Table>& t) {
  auto snapshot = t->metadata()->CurrentSnapshot();
  if (!snapshot) return Json{{"status", "not-due"}, {"reason", "the table has no snapshot"}};
  maintenance::RewriteManifestsOptions dry;
  dry.dry_run = true;
  ARROW_ASSIGN_OR_RAISE(auto plan, maintenance::RewriteManifests(t, dry));
  Json report = {{"manifests", plan.manifests_before}};
  if (plan.manifests_before < c.when_manifest_count) {
    report["status"] = "not-due";
    return report;
  }
  ARROW_ASSIGN_OR_RAISE(auto r, maintenance::RewriteManifests(t, {}));
  report["status"] = r.snapshot_id ? "done" : "nothing-to-do";
  report["manifests_rewritten"] = r.manifests_rewritten;
  report["manifests_created"] = r.manifests_created;
  if (r.snapshot_id) report["snapshot_id"] = *r.snapshot_id;
  return report;
}

Result<Json> RunExpire(const MaintenanceConfig::ExpireSnapshots& c, const std::shared_ptr<table::Table>& t,
                       int64_t now_ms) {
  Json report;
  if (!Due(*t, "expire-snapshots", c.every, now_ms, report)) return report;
  maintenance::ExpireSnapshotsOptions options;
  const auto age = c.older_than ? std::chrono::duration_cast<std::chrono::milliseconds>(*c.older_than).count()
                                : t->metadata()->PropertyAsInt("history.expire.max-snapshot-age-ms",
                                                               5LL * 24 * 3600 * 1000);
  options.older_than_ms = now_ms - age;
  options.retain_last = c.retain_last;
  options.max_duration = c.max_duration;
  options.set_properties[MaintenanceLastRunProperty("expire-snapshots")] = std::to_string(now_ms);
  ARROW_ASSIGN_OR_RAISE(auto r, maintenance::ExpireSnapshots(*t, options));
  // Nothing expired means no commit: record the run by itself.
  if (r.expired_snapshot_ids.empty()) ARROW_RETURN_NOT_OK(RecordLastRun(*t, "expire-snapshots", now_ms));
  report = {{"status", "done"},
            {"expired_snapshots", r.expired_snapshot_ids.size()},
            {"deleted_files", r.deleted_files.size()},
            {"undeleted_files", r.undeleted_files.size()},
            {"left_files", r.left_files.size()},
            {"files_unknown", r.files_unknown}};
  return report;
}

Result<Json> RunRemoveOrphans(const MaintenanceConfig::RemoveOrphans& c, const std::shared_ptr<table::Table>& t,
                              int64_t now_ms) {
  Json report;
  if (!Due(*t, "remove-orphans", c.every, now_ms, report)) return report;
  maintenance::RemoveOrphansOptions options;
  options.older_than_ms = now_ms - std::chrono::duration_cast<std::chrono::milliseconds>(c.older_than).count();
  options.apply = true;
  options.max_duration = c.max_duration;
  ARROW_ASSIGN_OR_RAISE(auto r, maintenance::RemoveOrphans(*t, options));
  ARROW_RETURN_NOT_OK(RecordLastRun(*t, "remove-orphans", now_ms));
  report = {{"status", "done"},
            {"deleted_files", r.orphans.size()},
            {"undeleted_files", r.undeleted.size()},
            {"left_files", r.left.size()},
            {"unlisted_directories", r.unlisted_directories.size()}};
  return report;
}

}  // namespace

std::string MaintenanceLastRunProperty(std::string_view step) {
  return fmt::format("lakesync.maintenance.{}.last-run-ms", step);
}

Result<MaintenanceConfig> ParseMaintenanceConfig(const Json& block, const std::string& where) {
  const std::string at = where + ": maintenance";
  if (!block.is_object()) return InvalidArgument("{} must be a map of steps (compact, rewrite_manifests, "
                                                 "expire_snapshots, remove_orphans)", at);
  ARROW_RETURN_NOT_OK(CheckKnownKeys(block, {"compact", "rewrite_manifests", "expire_snapshots", "remove_orphans"}, at));
  if (block.empty()) return InvalidArgument("{} names no step (compact, rewrite_manifests, expire_snapshots, "
                                            "remove_orphans)", at);
  MaintenanceConfig config;
  if (block.contains("compact")) {
    const Json& b = block.at("compact");
    const std::string w = at + ".compact";
    ARROW_RETURN_NOT_OK(CheckBlock(b, {"when_read_overhead", "when_deleted_ratio", "when_file_count", "target_file_size",
                                       "min_deleted_ratio", "max_files", "max_duration"}, w));
    MaintenanceConfig::Compact c;
    if (b.is_object()) {
      if (b.contains("when_read_overhead")) {
        const Json& v = b.at("when_read_overhead");
        if (!v.is_number() || !(v.get<double>() > 0)) {
          return InvalidArgument("{}.when_read_overhead must be a positive number (0.1: 10% more read work than the "
                                 "compacted table), not {}", w, v.dump());
        }
        c.when_read_overhead = v.get<double>();
      }
      if (b.contains("when_deleted_ratio")) {
        ARROW_ASSIGN_OR_RAISE(c.when_deleted_ratio, Ratio(b, "when_deleted_ratio", w));
      }
      if (b.contains("when_file_count")) {
        ARROW_ASSIGN_OR_RAISE(c.when_file_count, Count(b, "when_file_count", w));
      }
      if (b.contains("target_file_size")) {
        ARROW_ASSIGN_OR_RAISE(c.target_file_size, Count(b, "target_file_size", w));
      }
      if (b.contains("min_deleted_ratio")) {
        ARROW_ASSIGN_OR_RAISE(c.min_deleted_ratio, Ratio(b, "min_deleted_ratio", w));
      }
      if (b.contains("max_files")) {
        ARROW_ASSIGN_OR_RAISE(c.max_files, Count(b, "max_files", w));
      }
      if (b.contains("max_duration")) {
        ARROW_ASSIGN_OR_RAISE(c.max_duration, Budget(b, w));
      }
    }
    // No trigger given: compact when reading costs 10% more than the compacted table would.
    if (!c.when_read_overhead && !c.when_deleted_ratio && !c.when_file_count) {
      c.when_read_overhead = MaintenanceConfig::kDefaultReadOverhead;
    }
    config.compact = c;
  }
  if (block.contains("rewrite_manifests")) {
    const Json& b = block.at("rewrite_manifests");
    const std::string w = at + ".rewrite_manifests";
    ARROW_RETURN_NOT_OK(CheckBlock(b, {"when_manifest_count"}, w));
    MaintenanceConfig::RewriteManifests r;
    if (b.is_object() && b.contains("when_manifest_count")) {
      ARROW_ASSIGN_OR_RAISE(r.when_manifest_count, Count(b, "when_manifest_count", w, 2));
    }
    config.rewrite_manifests = r;
  }
  if (block.contains("expire_snapshots")) {
    const Json& b = block.at("expire_snapshots");
    const std::string w = at + ".expire_snapshots";
    ARROW_RETURN_NOT_OK(CheckBlock(b, {"older_than", "retain_last", "every", "max_duration"}, w));
    MaintenanceConfig::ExpireSnapshots e;
    if (b.is_object()) {
      if (b.contains("older_than")) {
        ARROW_ASSIGN_OR_RAISE(e.older_than, Duration(b, "older_than", w));
      }
      if (b.contains("retain_last")) {
        ARROW_ASSIGN_OR_RAISE(auto n, Count(b, "retain_last", w));
        e.retain_last = static_cast<int32_t>(n);
      }
      if (b.contains("every")) {
        ARROW_ASSIGN_OR_RAISE(e.every, Duration(b, "every", w));
      }
      if (b.contains("max_duration")) {
        ARROW_ASSIGN_OR_RAISE(e.max_duration, Budget(b, w));
      }
    }
    config.expire_snapshots = e;
  }
  if (block.contains("remove_orphans")) {
    const Json& b = block.at("remove_orphans");
    const std::string w = at + ".remove_orphans";
    ARROW_RETURN_NOT_OK(CheckBlock(b, {"older_than", "every", "max_duration"}, w));
    MaintenanceConfig::RemoveOrphans r;
    if (b.is_object()) {
      if (b.contains("older_than")) {
        ARROW_ASSIGN_OR_RAISE(r.older_than, Duration(b, "older_than", w));
      }
      if (b.contains("every")) {
        ARROW_ASSIGN_OR_RAISE(r.every, Duration(b, "every", w));
      }
      if (b.contains("max_duration")) {
        ARROW_ASSIGN_OR_RAISE(r.max_duration, Budget(b, w));
      }
    }
    config.remove_orphans = r;
  }
  return config;
}

Result<int64_t> MaintenanceNowMs() {
  if (const char* v = std::getenv("LAKESYNC_MAINTENANCE_NOW"); v != nullptr && *v != '\0') {
    try {
      size_t used = 0;
      const int64_t ms = std::stoll(v, &used);
      if (used == std::string_view(v).size()) return ms;
    } catch (...) {
    }
    return InvalidArgument("LAKESYNC_MAINTENANCE_NOW must be epoch milliseconds, not '{}'", v);
  }
  return iceberg::NowMs();
}

Json RunMaintenance(const MaintenanceConfig& config, const std::shared_ptr<catalog::Catalog>& catalog,
                    const catalog::TableIdentifier& id, int64_t now_ms) {
  Json out = Json::object();
  auto loaded = table::Table::Load(catalog, id);
  if (!loaded.ok()) {
    out["error"] = loaded.status().message();
    return out;
  }
  const auto& t = *loaded;
  auto step = [&](const char* name, const std::function<Result<Json>()>& run) {
    auto r = run();
    if (r.ok()) {
      out[name] = std::move(*r);
      return;
    }
    LS_LOG_WARN("maintenance of {}: {} failed (the run's commit stands): {}", t->name(), name, r.status().message());
    out[name] = {{"status", "failed"}, {"error", r.status().message()}};
    (void)t->Refresh();  // the next step starts from the table as it is
  };
  if (config.compact) step("compact", [&] { return RunCompact(*config.compact, t); });
  if (config.rewrite_manifests) step("rewrite_manifests", [&] { return RunRewriteManifests(*config.rewrite_manifests, t); });
  if (config.expire_snapshots) step("expire_snapshots", [&] { return RunExpire(*config.expire_snapshots, t, now_ms); });
  if (config.remove_orphans) step("remove_orphans", [&] { return RunRemoveOrphans(*config.remove_orphans, t, now_ms); });
  return out;
}

}  // namespace lakesync::engine
