// DeltaTable::ReadChanges: the Change Data Feed (lakesync spec delta.md §4). The whole range's log
// is read and checked, and every deletion vector decoded, before the reader is returned; the reader
// then streams one file at a time.
#include <fmt/format.h>

#include <map>
#include <set>

#include "lakesync/common/logging.h"
#include "lakesync/delta/deletion_vector.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/delta/file_reader_internal.h"
#include "lakesync/delta/table_config.h"

namespace lakesync::delta {
namespace {

using internal::ReadTask;

Status CheckCdfEnabled(const Metadata& metadata, int64_t version, const std::string& table) {
  if (ChangeDataFeedEnabled(metadata)) return Status::OK();
  return InvalidArgument(
      "change data was not recorded for version {} of {}: the table property delta.enableChangeDataFeed is not "
      "'true' there (read a range in which the Change Data Feed stays enabled)",
      version, table);
}

// A no-op MERGE rewrites files with dataChange=true; Spark emits nothing for it (delta.md §4.2).
bool IsNoOpMerge(const std::optional<CommitInfo>& info) {
  if (!info || info->operation != "MERGE") return false;
  for (const char* key : {"numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted"}) {
    auto it = info->operation_metrics.find(key);
    if (it == info->operation_metrics.end() || it->second != "0") return false;
  }
  return true;
}

}  // namespace

std::vector<FileAction> SelectChangeFiles(const std::vector<FileAction>& files, const std::optional<CommitInfo>& info) {
  std::vector<FileAction> out;
  for (const auto& f : files) {
    if (f.kind == FileAction::Kind::kCdc) out.push_back(f);
  }
  if (!out.empty()) return out;
  if (IsNoOpMerge(info)) return out;
  for (const auto& f : files) {
    if (f.kind != FileAction::Kind::kCdc && f.data_change) out.push_back(f);
  }
  return out;
}

Result<ChangePlan> DeltaTable::PlanChanges(const ChangeFeedOptions& options) {
  if (options.start_version.has_value() == options.start_timestamp_ms.has_value()) {
    if (options.start_version) return InvalidArgument("give a start version or a start timestamp, not both");
    return InvalidArgument("a start version or a start timestamp is required");
  }
  if (options.end_version && options.end_timestamp_ms) {
    return InvalidArgument("give an end version or an end timestamp, not both");
  }
  if (options.start_timestamp_ms && options.end_timestamp_ms && *options.start_timestamp_ms > *options.end_timestamp_ms) {
    return InvalidArgument("the start timestamp {} ms is after the end timestamp {} ms", *options.start_timestamp_ms,
                           *options.end_timestamp_ms);
  }
  const int64_t latest = latest_version();
  int64_t start, end;
  if (options.start_version) {
    start = *options.start_version;
    if (start < 0) return InvalidArgument("start version {} is negative", start);
    if (start > latest) {
      return InvalidArgument("start version {} is after the latest version {} of {}", start, latest, location());
    }
  } else {
    ARROW_ASSIGN_OR_RAISE(start, VersionAtOrAfter(*options.start_timestamp_ms));
  }
  if (options.end_version) {
    end = *options.end_version;
    if (end > latest) {
      return InvalidArgument("end version {} is after the latest version {} of {}", end, latest, location());
    }
  } else if (options.end_timestamp_ms) {
    ARROW_ASSIGN_OR_RAISE(end, VersionAtOrBefore(*options.end_timestamp_ms));
  } else {
    end = latest;
  }
  ChangePlan plan;
  plan.table_root = location();
  plan.start_version = start;
  plan.end_version = end;
  if (start > end) {
    // Two timestamps between the same two commits: an empty change set (Spark's answer), which is
    // what a polling job sees when nothing was committed. Versions given that way are an error.
    if (!(options.start_timestamp_ms && options.end_timestamp_ms)) {
      return InvalidArgument("the range is empty: start version {} is after end version {}", start, end);
    }
    ARROW_ASSIGN_OR_RAISE(auto state, StateAt(end, false));
    plan.protocol = *state.protocol;
    plan.metadata = *state.metadata;
    return plan;
  }

  // Every commit in the range must still be in the log: checkpoints cannot stand in for one.
  for (int64_t v = start; v <= end; ++v) {
    if (!listing_.commits.count(v)) {
      return NotFound("commit {:020d}.json (version {}) of {} is missing from the log, so its changes cannot be read",
                      v, v, location());
    }
  }

  // State at `start` (commit `start` included: a commit that enables CDF can be the start).
  ARROW_ASSIGN_OR_RAISE(auto state, StateAt(start, false));
  const std::string where = fmt::format("{} at version {}", location(), start);
  if (options.require_change_data_feed) ARROW_RETURN_NOT_OK(CheckCdfEnabled(*state.metadata, start, location()));
  LS_ASSIGN_OR_RAISE_CTX(auto schema, SchemaOf(*state.protocol, *state.metadata), "{}", where);
  plan.protocol = *state.protocol;
  plan.metadata = *state.metadata;
  Protocol protocol = *state.protocol;
  Metadata last_metadata = *state.metadata;
  std::map<int64_t, std::optional<int64_t>> ict_by_version;

  for (int64_t v = start; v <= end; ++v) {
    const LogFile& commit = listing_.commits.at(v);
    ARROW_ASSIGN_OR_RAISE(auto actions, ReadCommit(*io_, commit));
    CommitChanges c;
    c.version = v;
    std::optional<CommitInfo> info;
    std::vector<FileAction> files;
    for (auto& a : actions) {
      if (a.protocol) {
        ARROW_RETURN_NOT_OK(CheckReadable(*a.protocol, fmt::format("{} at version {}", location(), v)));
        protocol = *a.protocol;
        if (v != start) c.protocol = *a.protocol;
      }
      if (a.commit_info) {
        info = a.commit_info;
        ict_by_version[v] = a.commit_info->in_commit_timestamp;
      }
      if (a.file) files.push_back(std::move(*a.file));
    }
    for (auto& a : actions) {
      if (!a.metadata || v == start) continue;  // commit `start` is already in the start state
      if (options.require_change_data_feed) ARROW_RETURN_NOT_OK(CheckCdfEnabled(*a.metadata, v, location()));
      last_metadata = *a.metadata;
      c.metadata = *a.metadata;
      LS_ASSIGN_OR_RAISE_CTX(auto changed, SchemaOf(protocol, *a.metadata), "{} at version {}", location(), v);
      if (changed.fingerprint != schema.fingerprint && !options.keep_all_file_actions) {
        return InvalidArgument(
            "the schema of {} changes at version {} inside the requested range [{}, {}]; the Change Data Feed cannot "
            "be read across a schema change: split the range at version {}",
            location(), v, start, end, v);
      }
    }
    if (options.keep_all_file_actions) {
      for (auto& f : files) {
        if (f.kind == FileAction::Kind::kCdc || f.data_change) c.files.push_back(std::move(f));
      }
    } else {
      c.files = SelectChangeFiles(files, info);
    }
    if (c.files.empty() && IsNoOpMerge(info)) {
      LS_LOG_INFO("version {} of {} is a MERGE that changed no rows; it contributes no changes", v, location());
    }
    plan.commits.push_back(std::move(c));
  }
  // _commit_timestamp: the In-Commit Timestamp from its enablement version on (as configured at
  // the end of the range), else the modification time made monotonic (delta.md §4.5).
  const IctConfig ict = InCommitTimestamps(last_metadata);
  const int64_t ict_from = ict.enabled ? ict.enablement_version.value_or(0) : end + 1;
  std::vector<int64_t> timestamps;
  if (start < ict_from) {
    ARROW_ASSIGN_OR_RAISE(timestamps, MonotonicMtimes(start, std::min(end, ict_from - 1)));
  }
  for (int64_t v = std::max(start, ict_from); v <= end; ++v) {
    auto it = ict_by_version.find(v);
    if (it == ict_by_version.end() || !it->second) {
      return Corrupt("commit {:020d}.json of {} has no commitInfo.inCommitTimestamp although In-Commit Timestamps are "
                     "enabled from version {}",
                     v, location(), ict_from);
    }
    timestamps.push_back(*it->second);
  }
  for (auto& c : plan.commits) c.timestamp_ms = timestamps[c.version - start];
  return plan;
}

Result<std::shared_ptr<arrow::RecordBatchReader>> ReadChangePlan(std::shared_ptr<io::FileIO> io, const ChangePlan& plan,
                                                                 const ChangeReadOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto meta_columns, internal::ParseMetaColumns(options.metadata_columns));
  const std::string& root = plan.table_root;
  const std::string where = fmt::format("{} at version {}", root, plan.start_version);
  LS_ASSIGN_OR_RAISE_CTX(auto schema, SchemaOf(plan.protocol, plan.metadata), "{}", where);
  internal::StreamOptions so;
  so.meta_columns = meta_columns;
  if (plan.end_version < plan.start_version) {
    return internal::MakeTaskReader(io, std::move(schema), {}, std::move(so));
  }
  const bool partitioned = !plan.metadata.partition_columns.empty();

  std::vector<ReadTask> tasks;
  std::set<std::string> checked_files;
  // Partition values of files added inside the range, for removes written without them.
  std::map<std::string, std::map<std::string, std::optional<std::string>>> add_partitions;
  std::map<std::string, std::shared_ptr<const puffin::PositionBitmap>> dv_cache;
  auto load_dv = [&](const std::optional<DeletionVectorDescriptor>& d, const std::string& file,
                     int64_t v) -> Result<std::shared_ptr<const puffin::PositionBitmap>> {
    if (!d) return std::make_shared<const puffin::PositionBitmap>();
    const std::string id = d->UniqueId();
    auto it = dv_cache.find(id);
    if (it != dv_cache.end()) return it->second;
    LS_ASSIGN_OR_RAISE_CTX(auto bitmap, LoadDeletionVector(*io, root, *d), "deletion vector of {} at version {}",
                           file, v);
    auto ptr = std::make_shared<const puffin::PositionBitmap>(std::move(bitmap));
    dv_cache[id] = ptr;
    return ptr;
  };

  for (const CommitChanges& commit : plan.commits) {
    const int64_t v = commit.version;
    // A plan from elsewhere (a sharing server) may carry more than the rule selects.
    const std::vector<FileAction> files = SelectChangeFiles(commit.files, std::nullopt);
    auto make_task = [&](const FileAction& f, bool is_cdc, std::string change_type) -> Result<ReadTask> {
      ReadTask t;
      LS_ASSIGN_OR_RAISE_CTX(t.location, internal::ResolvePath(root, f.path), "version {}", v);
      t.size = f.size;
      if (f.partition_values) {
        t.partition_values = *f.partition_values;
      } else if (auto known = add_partitions.find(f.path); known != add_partitions.end()) {
        t.partition_values = known->second;  // recovered from the add earlier in the range
      } else if (partitioned) {
        return Corrupt("version {} of {}: the remove action for {} has no partitionValues, so its deleted rows "
                       "cannot be given their partition columns",
                       v, root, f.path);
      }
      t.is_cdc = is_cdc;
      t.change_type = std::move(change_type);
      t.version = v;
      t.commit_timestamp_ms = commit.timestamp_ms;
      // Fail now, before any row is emitted, when a file the range needs is gone.
      if (!options.check_files_first || !checked_files.insert(t.location).second) return t;
      auto checked = internal::CheckParquetFile(*io, t.location, t.size);
      if (!checked.ok()) {
        return WithContext(checked, fmt::format("version {} of {} needs {} file {}", v, root,
                                                is_cdc ? "change data" : "data", t.location));
      }
      return t;
    };
    if (partitioned) {
      for (const auto& f : files) {
        if (f.kind == FileAction::Kind::kAdd && f.partition_values) add_partitions[f.path] = *f.partition_values;
      }
    }
    std::map<std::string, const FileAction*> adds, removes;
    for (const auto& f : files) {
      if (f.kind == FileAction::Kind::kAdd) adds[f.path] = &f;
      if (f.kind == FileAction::Kind::kRemove) removes[f.path] = &f;
    }
    for (const auto& f : files) {
      if (f.kind == FileAction::Kind::kCdc) {
        ARROW_ASSIGN_OR_RAISE(auto t, make_task(f, true, ""));
        tasks.push_back(std::move(t));
      } else if (f.kind == FileAction::Kind::kRemove) {
        if (adds.count(f.path)) continue;  // a DV pair, handled at its add
        ARROW_ASSIGN_OR_RAISE(auto t, make_task(f, false, "delete"));
        ARROW_ASSIGN_OR_RAISE(auto dv, load_dv(f.deletion_vector, t.location, v));
        if (!dv->IsEmpty()) t.drop = dv;
        tasks.push_back(std::move(t));
      } else {
        auto rm = removes.find(f.path);
        if (rm == removes.end()) {
          ARROW_ASSIGN_OR_RAISE(auto t, make_task(f, false, "insert"));
          ARROW_ASSIGN_OR_RAISE(auto dv, load_dv(f.deletion_vector, t.location, v));
          if (!dv->IsEmpty()) t.drop = dv;
          tasks.push_back(std::move(t));
          continue;
        }
        // Same path removed and added: the rows whose deletion state changed (delta.md §4.3).
        if (!f.deletion_vector && !rm->second->deletion_vector) {
          LS_LOG_INFO("version {} of {} removes and re-adds {} without deletion vectors; no rows changed", v, root,
                      f.path);
          continue;
        }
        ARROW_ASSIGN_OR_RAISE(auto probe, make_task(f, false, ""));
        ARROW_ASSIGN_OR_RAISE(auto ad, load_dv(f.deletion_vector, probe.location, v));
        ARROW_ASSIGN_OR_RAISE(auto rmdv, load_dv(rm->second->deletion_vector, probe.location, v));
        puffin::PositionBitmap deleted = *ad;
        deleted.AndNot(*rmdv);
        puffin::PositionBitmap restored = *rmdv;
        restored.AndNot(*ad);
        if (!deleted.IsEmpty()) {
          ReadTask t = probe;
          t.change_type = "delete";
          t.keep_only = std::make_shared<const puffin::PositionBitmap>(std::move(deleted));
          tasks.push_back(std::move(t));
        }
        if (!restored.IsEmpty()) {
          ReadTask t = probe;
          t.change_type = "insert";
          t.keep_only = std::make_shared<const puffin::PositionBitmap>(std::move(restored));
          tasks.push_back(std::move(t));
        }
      }
    }
  }
  return internal::MakeTaskReader(std::move(io), std::move(schema), std::move(tasks), std::move(so));
}

Result<std::shared_ptr<arrow::RecordBatchReader>> DeltaTable::ReadChanges(const ChangeFeedOptions& options) {
  ARROW_RETURN_NOT_OK(internal::ParseMetaColumns(options.metadata_columns).status());
  ARROW_ASSIGN_OR_RAISE(auto plan, PlanChanges(options));
  ChangeReadOptions read;
  read.metadata_columns = options.metadata_columns;
  return ReadChangePlan(io_, plan, read);
}

}  // namespace lakesync::delta
