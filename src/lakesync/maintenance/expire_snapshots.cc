#include "lakesync/maintenance/expire_snapshots.h"

#include <chrono>
#include <map>
#include <set>

#include "lakesync/common/failpoint.h"
#include "lakesync/common/logging.h"
#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/maintenance/budget.h"
#include "lakesync/maintenance/referenced_files.h"
#include "lakesync/sink/progress.h"

namespace lakesync::maintenance {
namespace {

constexpr int64_t kDefaultMaxAgeMs = 5LL * 24 * 3600 * 1000;  // Iceberg's history.expire.max-snapshot-age-ms
constexpr int32_t kDefaultMinToKeep = 1;                        // history.expire.min-snapshots-to-keep
constexpr std::string_view kPositionPrefix = sink::kSummarySourcePositionPrefix;

// Kill points for the crash tests (LAKESYNC_FAILPOINTS=NAME=kill): the plan made and the files to
// delete known, before the metadata commit; right after the commit, before any file is deleted; after
// each file deleted (`kill` fires at the first: killed with some files deleted and some not).
constexpr char kFailpointExpireBeforeCommit[] = "expire.before-commit";
constexpr char kFailpointExpireAfterCommit[] = "expire.after-commit";
constexpr char kFailpointExpireAfterDelete[] = "expire.after-delete";

Result<int64_t> IntProperty(const iceberg::TableMetadata& m, const std::string& key, int64_t fallback) {
  auto it = m.properties.find(key);
  if (it == m.properties.end()) return fallback;
  try {
    size_t used = 0;
    const int64_t v = std::stoll(it->second, &used);
    if (used == it->second.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  return InvalidArgument("table property {} must be a non-negative whole number, not '{}'", key, it->second);
}

// The snapshots that stay: refs' heads, the newest retain_last of each branch, and the young ones.
Result<std::set<int64_t>> Retained(const iceberg::TableMetadata& m, int64_t older_than_ms, int32_t retain_last) {
  std::set<int64_t> keep;
  for (const auto& s : m.snapshots) {
    if (s->timestamp_ms >= older_than_ms) keep.insert(s->snapshot_id);
  }
  for (const auto& [name, ref] : m.refs) {
    keep.insert(ref.snapshot_id);
    if (ref.type != iceberg::SnapshotRef::Type::kBranch) continue;
    const int32_t n = ref.min_snapshots_to_keep.value_or(retain_last);
    int32_t kept = 0;
    for (const auto& s : m.Ancestors(ref.snapshot_id)) {
      if (kept++ >= n) break;
      keep.insert(s->snapshot_id);
    }
  }
  if (auto current = m.CurrentSnapshot()) keep.insert(current->snapshot_id);
  return keep;
}

struct Plan {
  std::vector<int64_t> expire;
  std::vector<iceberg::SnapshotPtr> expired, kept;
  std::map<std::string, std::string> position_properties;
};

Result<Plan> MakePlan(const iceberg::TableMetadata& m, const ExpireSnapshotsOptions& options) {
  ARROW_ASSIGN_OR_RAISE(int64_t max_age, IntProperty(m, "history.expire.max-snapshot-age-ms", kDefaultMaxAgeMs));
  ARROW_ASSIGN_OR_RAISE(int64_t min_keep, IntProperty(m, "history.expire.min-snapshots-to-keep", kDefaultMinToKeep));
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  const int64_t older_than = options.older_than_ms.value_or(now_ms - max_age);
  const int32_t retain_last = options.retain_last.value_or(static_cast<int32_t>(min_keep));
  if (retain_last < 1) return InvalidArgument("--retain-last must be at least 1, not {}", retain_last);
  ARROW_ASSIGN_OR_RAISE(auto keep, Retained(m, older_than, retain_last));
  Plan plan;
  for (const auto& s : m.snapshots) {
    if (keep.count(s->snapshot_id)) {
      plan.kept.push_back(s);
    } else {
      plan.expired.push_back(s);
      plan.expire.push_back(s->snapshot_id);
    }
  }
  // Positions as the table holds them now; those a retained snapshot or the properties no longer
  // carry at the same ordinal after the expiry go into the properties.
  ARROW_ASSIGN_OR_RAISE(auto positions, sink::CommittedPositions(m));
  for (const auto& s : plan.expired) {
    for (const auto& [key, value] : s->summary) {
      if (key.rfind(kPositionPrefix, 0) != 0) continue;
      LS_ASSIGN_OR_RAISE_CTX(auto position, sink::ParseSourcePosition(value), "snapshot {}: summary {}", s->snapshot_id,
                             key);
      const std::string sink_id = key.substr(kPositionPrefix.size());
      auto newest = positions.find(sink_id);
      if (newest == positions.end() || newest->second.ordinal != position.ordinal) continue;
      auto prop = m.properties.find(key);
      if (prop != m.properties.end() && prop->second == value) continue;
      plan.position_properties[key] = value;
    }
  }
  return plan;
}

}  // namespace

Result<ExpireSnapshotsResult> ExpireSnapshots(table::Table& table, const ExpireSnapshotsOptions& options) {
  const TimeBudget budget(options.max_duration);
  ExpireSnapshotsResult result;
  for (int attempt = 1;; ++attempt) {
    const iceberg::TableMetadata& m = *table.metadata();
    ARROW_ASSIGN_OR_RAISE(auto plan, MakePlan(m, options));
    result = ExpireSnapshotsResult{};
    result.expired_snapshot_ids = plan.expire;
    result.retained_snapshots = static_cast<int64_t>(plan.kept.size());
    for (const auto& [key, value] : plan.position_properties) result.positions_kept.push_back(key.substr(kPositionPrefix.size()));
    if (plan.expire.empty()) return result;
    // The files to delete: referenced by an expired snapshot and by no retained one. Computed before
    // the commit (the manifests of expired snapshots are still readable then); deleted only after it.
    // Reading the manifests is planning within the time budget: the retained snapshots' first (no file
    // can go before all they reference is known), then the expired ones'. When the budget runs out
    // first, the commit still happens (the step's progress) and only the files known to be doomed go:
    // the expired snapshots' manifest lists, which no other snapshot shares and which need no reading,
    // and, once the retained side is complete, what the expired manifests read so far name. The rest
    // are orphans for remove-orphans, as files the budget leaves undeleted always are.
    std::set<std::string> expired_files, kept_files, seen_expired, seen_kept;
    ARROW_ASSIGN_OR_RAISE(const bool kept_complete,
                          CollectSnapshotFilesWithin(*table.io(), m, plan.kept, kept_files, seen_kept, budget));
    bool expired_complete = false;
    if (kept_complete) {
      ARROW_ASSIGN_OR_RAISE(expired_complete, CollectSnapshotFilesWithin(*table.io(), m, plan.expired, expired_files,
                                                                         seen_expired, budget));
    }
    std::set<std::string> kept_lists;
    for (const auto& s : plan.kept) kept_lists.insert(s->manifest_list);
    std::set<std::string> doomed_set;
    for (const auto& s : plan.expired) {
      if (!s->manifest_list.empty() && !kept_lists.count(s->manifest_list)) doomed_set.insert(s->manifest_list);
    }
    if (kept_complete) {
      for (const auto& f : expired_files) {
        if (!kept_files.count(f)) doomed_set.insert(f);
      }
    }
    std::vector<std::string> doomed(doomed_set.begin(), doomed_set.end());
    result.files_unknown = !expired_complete;
    if (result.files_unknown) {
      LS_LOG_INFO("expire-snapshots on {}: the time budget ran out reading manifests ({} of the retained snapshots' "
                  "and {} of the expired ones' read); the expiry is committed, and the data, delete and manifest files "
                  "only the expired snapshots referenced that were not read are left for remove-orphans",
                  table.name(), seen_kept.size(), seen_expired.size());
    }
    if (options.dry_run) {
      result.deleted_files = std::move(doomed);
      return result;
    }
    std::vector<iceberg::TableRequirement> requirements = {iceberg::AssertTableUuid{m.table_uuid}};
    for (const auto& [name, ref] : m.refs) requirements.push_back(iceberg::AssertRefSnapshotId{name, ref.snapshot_id});
    std::vector<iceberg::TableUpdate> updates;
    std::map<std::string, std::string> properties = plan.position_properties;
    for (const auto& [key, value] : options.set_properties) properties[key] = value;
    if (!properties.empty()) updates.push_back(iceberg::SetProperties{properties});
    updates.push_back(iceberg::RemoveSnapshots{plan.expire});
    Failpoint(kFailpointExpireBeforeCommit);
    auto committed = table.catalog()->CommitTable(table.identifier(), requirements, updates);
    if (!committed.ok()) {
      if (KindOf(committed.status()) == ErrorKind::kCommitConflict && attempt < options.max_attempts) {
        LS_LOG_INFO("expire-snapshots on {}: another commit landed first (attempt {}); planning again", table.name(),
                    attempt);
        ARROW_RETURN_NOT_OK(table.Refresh());
        continue;
      }
      return committed.status();
    }
    table.Update(std::move(*committed));
    Failpoint(kFailpointExpireAfterCommit);
    size_t tried = 0;
    for (const auto& f : doomed) {
      if (tried++ > 0 && budget.Spent()) {
        result.left_files.push_back(f);
        continue;
      }
      auto st = table.io()->Delete(f);
      if (st.ok() || KindOf(st) == ErrorKind::kNotFound) {
        result.deleted_files.push_back(f);
      } else {
        LS_LOG_WARN("expire-snapshots on {}: could not delete {}: {}", table.name(), f, st.message());
        result.undeleted_files.push_back(f);
      }
      Failpoint(kFailpointExpireAfterDelete);
    }
    if (!result.left_files.empty()) {
      LS_LOG_INFO("expire-snapshots on {}: the time budget ran out; {} file(s) left for remove-orphans", table.name(),
                  result.left_files.size());
    }
    return result;
  }
}

}  // namespace lakesync::maintenance
