#include "lakesync/table/snapshot_update.h"

#include "lakesync/iceberg/commit/schema_commit.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "lakesync/catalog/metadata_files.h"
#include "lakesync/common/failpoint.h"
#include "lakesync/common/logging.h"
#include "lakesync/common/version.h"
#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/iceberg/manifest/manifest_list.h"
#include "lakesync/iceberg/manifest/snapshot_manifests.h"
#include "lakesync/iceberg/manifest/manifest_reader.h"
#include "lakesync/iceberg/manifest/manifest_writer.h"
#include "lakesync/table/pending_files.h"

namespace lakesync::table {
namespace {

using iceberg::DataFile;
using iceberg::FileContent;
using iceberg::ManifestContent;
using iceberg::ManifestEntry;
using iceberg::ManifestEntryStatus;
using iceberg::ManifestFile;

std::string ManifestCodec(const iceberg::TableMetadata& m) {
  return m.Property("write.avro.compression-codec", "gzip");
}

// `stem` from Table::NewFileStem: named by the attempt's pending-files record before it exists.
std::string NewManifestLocation(const iceberg::TableMetadata& m, const std::string& stem, int index) {
  return io::JoinLocation(catalog::MetadataDirectory(m), fmt::format("{}-m{}.avro", stem, index));
}

std::pair<std::string, std::string> DeleteKey(const DataFile& f) {
  return {f.file_path, f.IsDeletionVector() ? f.referenced_data_file.value_or("") : std::string()};
}

int64_t SummaryInt(const std::map<std::string, std::string>& summary, const char* key, bool* present) {
  auto it = summary.find(key);
  if (it == summary.end()) {
    *present = false;
    return 0;
  }
  try {
    return std::stoll(it->second);
  } catch (...) {
    *present = false;
    return 0;
  }
}

// Counts for the snapshot summary (spec Appendix F, Java SnapshotSummary).
struct SummaryCounts {
  int64_t added_data_files = 0, deleted_data_files = 0, added_records = 0, deleted_records = 0;
  int64_t added_files_size = 0, removed_files_size = 0;
  int64_t added_delete_files = 0, removed_delete_files = 0;
  int64_t added_pos_delete_files = 0, removed_pos_delete_files = 0, added_dvs = 0, removed_dvs = 0;
  int64_t added_eq_delete_files = 0, removed_eq_delete_files = 0;
  int64_t added_pos_deletes = 0, removed_pos_deletes = 0, added_eq_deletes = 0, removed_eq_deletes = 0;
  std::set<std::string> partitions;

  void Add(const DataFile& f, bool added, const std::string& partition_key) {
    partitions.insert(partition_key);
    // A DV counts the blob's size, not the whole Puffin file's (Java does the same).
    const int64_t size = f.IsDeletionVector() ? f.content_size_in_bytes.value_or(0) : f.file_size_in_bytes;
    (added ? added_files_size : removed_files_size) += size;
    switch (f.content) {
      case FileContent::kData:
        (added ? added_data_files : deleted_data_files) += 1;
        (added ? added_records : deleted_records) += f.record_count;
        break;
      case FileContent::kPositionDeletes:
        (added ? added_delete_files : removed_delete_files) += 1;
        if (f.IsDeletionVector()) {
          (added ? added_dvs : removed_dvs) += 1;
        } else {
          (added ? added_pos_delete_files : removed_pos_delete_files) += 1;
        }
        (added ? added_pos_deletes : removed_pos_deletes) += f.record_count;
        break;
      case FileContent::kEqualityDeletes:
        (added ? added_delete_files : removed_delete_files) += 1;
        (added ? added_eq_delete_files : removed_eq_delete_files) += 1;
        (added ? added_eq_deletes : removed_eq_deletes) += f.record_count;
        break;
    }
  }
};

}  // namespace

Result<LiveEntries> ReadLiveEntries(const io::FileIO& io, const iceberg::TableMetadata& metadata,
                                    const iceberg::Snapshot& snapshot, bool include_data, bool include_deletes) {
  LiveEntries out;
  LS_ASSIGN_OR_RAISE_CTX(out.manifests, iceberg::ReadSnapshotManifests(io, metadata, snapshot),
                         "reading the manifests of snapshot {}", snapshot.snapshot_id);
  for (const auto& manifest : out.manifests) {
    const bool is_data = manifest.content == ManifestContent::kData;
    if ((is_data && !include_data) || (!is_data && !include_deletes)) continue;
    LS_ASSIGN_OR_RAISE_CTX(std::string bytes, io.ReadAll(manifest.manifest_path), "reading manifest");
    LS_ASSIGN_OR_RAISE_CTX(auto entries, iceberg::ReadManifest(bytes, manifest, &metadata), "reading manifest {}",
                           manifest.manifest_path);
    for (auto& e : entries) {
      if (e.status == ManifestEntryStatus::kDeleted) continue;
      (is_data ? out.data : out.deletes).push_back(std::move(e));
    }
  }
  return out;
}

struct SnapshotUpdate::Attempt {
  std::vector<std::string> files;  // manifests and the list written by this attempt
};

Status SnapshotUpdate::WriteManifests(const std::vector<const DataFile*>& data,
                                      const std::vector<const DataFile*>& deletes, int first_index,
                                      std::vector<ManifestFile>& manifests, std::vector<std::string>& written) {
  const auto& m = *table_->metadata();
  // One manifest per (content, spec): a manifest holds one kind of file under one spec.
  std::map<std::pair<int, int32_t>, std::vector<const DataFile*>> groups;
  for (const DataFile* f : data) groups[{0, f->spec_id}].push_back(f);
  for (const DataFile* f : deletes) groups[{1, f->spec_id}].push_back(f);
  int index = first_index;
  for (const auto& [key, files] : groups) {
    auto spec = m.SpecById(key.second);
    if (!spec) return InvalidArgument("file {} names partition spec {}, which the table does not have",
                                      files.front()->file_path, key.second);
    iceberg::ManifestWriterOptions options;
    options.format_version = m.format_version;
    options.schema = schema_ ? schema_->schema : m.Schema();  // the schema the files were written with
    options.spec = spec;
    options.content = key.first == 0 ? ManifestContent::kData : ManifestContent::kDeletes;
    options.codec = ManifestCodec(m);
    options.location = NewManifestLocation(m, table_->NewFileStem(), index++);
    ARROW_ASSIGN_OR_RAISE(auto writer, iceberg::ManifestWriter::Make(options));
    for (const DataFile* f : files) {
      ManifestEntry e;
      e.status = ManifestEntryStatus::kAdded;
      e.data_file = std::make_shared<const DataFile>(*f);
      // Null inherits the new snapshot's number; an explicit one is kept (AddDataFile with a number).
      if (key.first == 0) {
        if (auto it = data_sequence_numbers_.find(f->file_path); it != data_sequence_numbers_.end()) {
          e.sequence_number = it->second;
        }
      }
      ARROW_RETURN_NOT_OK(writer->Add(e));
    }
    ARROW_ASSIGN_OR_RAISE(std::string bytes, writer->Finish());
    ARROW_RETURN_NOT_OK(table_->WriteFile(options.location, bytes));
    written.push_back(options.location);
    Failpoint(kFailpointAfterManifest);
    ARROW_ASSIGN_OR_RAISE(auto listed, writer->ToManifestFile(options.location, static_cast<int64_t>(bytes.size())));
    manifests.push_back(std::move(listed));
  }
  return Status::OK();
}

Result<CommitResult> SnapshotUpdate::TryCommit(Attempt& attempt, int attempt_number) {
  const auto base_ptr = table_->metadata();
  const auto& base = *base_ptr;
  const auto parent = base.CurrentSnapshot();
  const int64_t snapshot_id = iceberg::NewSnapshotId();
  const int64_t sequence_number = base.last_sequence_number + 1;
  // What depends on this state, built now; its files are this attempt's (cleaned up if it fails).
  AttemptDeletes rebuilt;
  if (attempt_deletes_) {
    Status st = attempt_deletes_(rebuilt);
    attempt.files.insert(attempt.files.end(), rebuilt.written.begin(), rebuilt.written.end());
    ARROW_RETURN_NOT_OK(st);
  }
  std::vector<const DataFile*> added_deletes;
  for (const auto& f : added_deletes_) added_deletes.push_back(&f);
  for (const auto& f : rebuilt.added) added_deletes.push_back(&f);
  std::set<std::pair<std::string, std::string>> removed_deletes_here = removed_deletes_;
  removed_deletes_here.insert(rebuilt.removed.begin(), rebuilt.removed.end());
  if (skip_if_empty_ && added_data_.empty() && added_deletes.empty() && removed_data_.empty() &&
      removed_deletes_here.empty()) {
    CommitResult skipped;
    skipped.skipped = true;
    skipped.attempts = attempt_number + 1;
    return skipped;
  }
  // A conflict the validations find on this state is final unless the deletes follow the state.
  auto state_conflict = [&](Status st) { return attempt_deletes_ ? st : WithFlag(st, ErrorFlag::kNotRetryable); };
  const bool need_deletes = !removed_deletes_here.empty() || !removed_data_.empty() || !added_deletes.empty();
  // Whenever delete entries are read (and so may be carried into rewritten manifests), the data
  // entries are read too, so that every carried deletion vector can be checked against them.
  const bool need_data = need_deletes;

  LiveEntries live;
  if (parent && (need_data || need_deletes)) {
    ARROW_ASSIGN_OR_RAISE(live, ReadLiveEntries(*table_->io(), base, *parent, need_data, need_deletes));
  } else if (parent) {
    LS_ASSIGN_OR_RAISE_CTX(live.manifests, iceberg::ReadSnapshotManifests(*table_->io(), base, *parent),
                           "reading the manifests of snapshot {}", parent->snapshot_id);
  }

  // Live data files and deletion vectors of the base, for the built-in checks.
  std::set<std::string> live_data;
  for (const auto& e : live.data) live_data.insert(e.data_file->file_path);
  std::map<std::string, const DataFile*> live_dvs;  // data file → its DV
  std::set<std::pair<std::string, std::string>> live_deletes;
  for (const auto& e : live.deletes) {
    live_deletes.insert(DeleteKey(*e.data_file));
    if (e.data_file->IsDeletionVector()) live_dvs[e.data_file->referenced_data_file.value_or("")] = e.data_file.get();
  }

  // A live deletion vector must reference a live data file of the base. One that does not comes from
  // a damaged delete manifest (a garbled referenced_data_file): committing would carry it into the
  // new snapshot, where restoring the damaged file no longer helps. Not retryable: the state is wrong.
  if (need_data && need_deletes) {
    for (const auto& [target, dv] : live_dvs) {
      if (!live_data.count(target)) {
        return Corrupt("the deletion vector in {} references data file {}, which is not live in snapshot {}; "
                       "refusing to carry it into a new snapshot",
                       dv->file_path, target, parent ? std::to_string(parent->snapshot_id) : "none");
      }
    }
  }

  CommitBase commit_base{base, [&]() -> Result<const std::set<std::string>*> {
                           if (parent && !need_data) {
                             ARROW_ASSIGN_OR_RAISE(auto data_live,
                                                   ReadLiveEntries(*table_->io(), base, *parent, true, false));
                             for (const auto& e : data_live.data) live_data.insert(e.data_file->file_path);
                           }
                           return &live_data;
                         }};
  for (const auto& validate : validations_) {
    Status st = validate(commit_base);
    // A failed validation describes the table's state; retrying on the same state cannot help.
    if (!st.ok()) return KindOf(st) == ErrorKind::kCommitConflict ? state_conflict(st) : st;
  }

  // Removing a data file also removes its deletion vector.
  std::set<std::pair<std::string, std::string>> removed_deletes = removed_deletes_here;
  for (const auto& path : removed_data_) {
    if (!live_data.count(path)) {
      return state_conflict(CommitConflict("cannot remove data file {}: it is not live in snapshot {}", path,
                                           parent ? std::to_string(parent->snapshot_id) : "none"));
    }
    if (auto it = live_dvs.find(path); it != live_dvs.end()) removed_deletes.insert(DeleteKey(*it->second));
  }
  for (const auto& key : removed_deletes_here) {
    if (!live_deletes.count(key)) {
      return state_conflict(CommitConflict("cannot remove delete file {}{}: it is not live any more", key.first,
                                           key.second.empty() ? "" : " (vector for " + key.second + ")"));
    }
  }
  std::set<std::string> added_paths;
  for (const auto& f : added_data_) added_paths.insert(f.file_path);
  for (const DataFile* f : added_deletes) {
    if (!f->IsDeletionVector()) continue;
    const std::string& target = f->referenced_data_file.value_or("");
    if (!live_data.count(target) && !added_paths.count(target)) {
      return state_conflict(
          CommitConflict("deletion vector for {} refers to a data file that is no longer live", target));
    }
    if (auto it = live_dvs.find(target); it != live_dvs.end() && !removed_deletes.count(DeleteKey(*it->second))) {
      return state_conflict(CommitConflict("found a concurrently added deletion vector for {}", target));
    }
  }

  // New manifests: the fixed files' (written once, reused), then this attempt's delete files.
  std::vector<ManifestFile> manifests = new_manifests_;
  if (!rebuilt.added.empty()) {
    std::vector<const DataFile*> rebuilt_files;
    for (const auto& f : rebuilt.added) rebuilt_files.push_back(&f);
    ARROW_RETURN_NOT_OK(WriteManifests({}, rebuilt_files, 50, manifests, attempt.files));
  }
  // Rewrite the manifests that hold removed files, merged into one manifest per content and spec (a
  // commit that removes files from many manifests, a compaction, leaves few manifests behind); keep
  // the others as they are, except those with no live entry left (only DELETED entries, the record of
  // an earlier snapshot's removals): they add nothing to this snapshot, and Java drops them too.
  SummaryCounts counts;
  for (const auto& f : added_data_) counts.Add(f, true, iceberg::PartitionTupleKey(f));
  for (const DataFile* f : added_deletes) counts.Add(*f, true, iceberg::PartitionTupleKey(*f));
  int rewrite_index = 100;
  std::map<std::pair<int, int32_t>, std::unique_ptr<iceberg::ManifestWriter>> rewriters;
  std::vector<std::pair<std::pair<int, int32_t>, std::string>> rewritten_locations;
  for (const auto& manifest : live.manifests) {
    if (!manifest.has_added_or_existing()) continue;
    const bool is_data = manifest.content == ManifestContent::kData;
    const bool may_hold = is_data ? !removed_data_.empty() : !removed_deletes.empty();
    if (!may_hold) {
      manifests.push_back(manifest);
      continue;
    }
    LS_ASSIGN_OR_RAISE_CTX(std::string bytes, table_->io()->ReadAll(manifest.manifest_path), "reading manifest");
    ARROW_ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifest(bytes, manifest, &base));
    bool touched = false;
    for (const auto& e : entries) {
      if (e.status == ManifestEntryStatus::kDeleted) continue;
      touched |= is_data ? removed_data_.count(e.data_file->file_path) > 0
                         : removed_deletes.count(DeleteKey(*e.data_file)) > 0;
    }
    if (!touched) {
      manifests.push_back(manifest);
      continue;
    }
    const std::pair<int, int32_t> key{static_cast<int>(manifest.content), manifest.partition_spec_id};
    auto& writer = rewriters[key];
    if (!writer) {
      iceberg::ManifestWriterOptions options;
      options.format_version = base.format_version;
      options.schema = base.Schema();
      options.spec = base.SpecById(manifest.partition_spec_id);
      options.content = manifest.content;
      options.snapshot_id = snapshot_id;
      options.codec = ManifestCodec(base);
      options.location = NewManifestLocation(base, table_->NewFileStem(), rewrite_index++);
      if (!options.spec) {
        return Corrupt("manifest {} names unknown spec {}", manifest.manifest_path, manifest.partition_spec_id);
      }
      ARROW_ASSIGN_OR_RAISE(writer, iceberg::ManifestWriter::Make(options));
      rewritten_locations.emplace_back(key, options.location);
    }
    for (const auto& e : entries) {
      if (e.status == ManifestEntryStatus::kDeleted) continue;  // deleted by an earlier snapshot
      ManifestEntry out = e;
      const bool removed = is_data ? removed_data_.count(e.data_file->file_path) > 0
                                   : removed_deletes.count(DeleteKey(*e.data_file)) > 0;
      if (removed) {
        out.status = ManifestEntryStatus::kDeleted;
        out.snapshot_id = snapshot_id;
        counts.Add(*e.data_file, false, iceberg::PartitionTupleKey(*e.data_file));
      } else {
        out.status = ManifestEntryStatus::kExisting;
      }
      ARROW_RETURN_NOT_OK(writer->Add(out));
    }
  }
  for (const auto& [key, location] : rewritten_locations) {
    auto& writer = rewriters.at(key);
    ARROW_ASSIGN_OR_RAISE(std::string out_bytes, writer->Finish());
    ARROW_RETURN_NOT_OK(table_->WriteFile(location, out_bytes));
    attempt.files.push_back(location);
    ARROW_ASSIGN_OR_RAISE(auto listed, writer->ToManifestFile(location, static_cast<int64_t>(out_bytes.size())));
    manifests.push_back(std::move(listed));
  }

  // A manifest rewrite replaces every manifest of the base (no file was added or removed above).
  std::map<std::string, std::string> rewrite_summary;
  if (manifest_rewrite_) {
    if (!added_data_.empty() || !added_deletes.empty() || !removed_data_.empty() || !removed_deletes_here.empty()) {
      return InvalidArgument("a manifest rewrite cannot add or remove files in the same commit");
    }
    ARROW_ASSIGN_OR_RAISE(manifests, manifest_rewrite_(base, live.manifests, attempt.files, rewrite_summary));
  }

  // The manifest list.
  iceberg::ManifestListWriteOptions list_options;
  list_options.format_version = base.format_version;
  list_options.snapshot_id = snapshot_id;
  if (parent) list_options.parent_snapshot_id = parent->snapshot_id;
  list_options.sequence_number = sequence_number;
  if (base.format_version >= 3) list_options.first_row_id = base.next_row_id;
  list_options.codec = ManifestCodec(base);
  list_options.location = io::JoinLocation(catalog::MetadataDirectory(base),
                                           fmt::format("snap-{}-{}-{}.avro", snapshot_id, attempt_number + 1,
                                                       table_->NewFileStem()));
  ARROW_ASSIGN_OR_RAISE(auto written, iceberg::WriteManifestList(list_options, manifests));
  ARROW_RETURN_NOT_OK(table_->WriteFile(list_options.location, written.bytes));
  attempt.files.push_back(list_options.location);

  // The summary.
  std::map<std::string, std::string> summary;
  std::string operation = operation_.value_or("");
  if (operation.empty()) {
    const bool only_appends = counts.deleted_data_files == 0 && counts.added_delete_files == 0 &&
                              counts.removed_delete_files == 0;
    const bool no_new_data = counts.added_data_files == 0;
    operation = only_appends ? iceberg::kOperationAppend : no_new_data ? iceberg::kOperationDelete
                                                                       : iceberg::kOperationOverwrite;
  }
  summary["operation"] = operation;
  auto put = [&](const char* key, int64_t v, bool always = false) {
    if (v != 0 || always) summary[key] = std::to_string(v);
  };
  put("added-data-files", counts.added_data_files);
  put("deleted-data-files", counts.deleted_data_files);
  put("added-records", counts.added_records);
  put("deleted-records", counts.deleted_records);
  put("added-files-size", counts.added_files_size);
  put("removed-files-size", counts.removed_files_size);
  put("added-delete-files", counts.added_delete_files);
  put("removed-delete-files", counts.removed_delete_files);
  put("added-position-delete-files", counts.added_pos_delete_files);
  put("removed-position-delete-files", counts.removed_pos_delete_files);
  put("added-dvs", counts.added_dvs);
  put("removed-dvs", counts.removed_dvs);
  put("added-equality-delete-files", counts.added_eq_delete_files);
  put("removed-equality-delete-files", counts.removed_eq_delete_files);
  put("added-position-deletes", counts.added_pos_deletes);
  put("removed-position-deletes", counts.removed_pos_deletes);
  put("added-equality-deletes", counts.added_eq_deletes);
  put("removed-equality-deletes", counts.removed_eq_deletes);
  put("changed-partition-count", static_cast<int64_t>(counts.partitions.size()), true);
  // Totals carry over from the parent's summary (Java does the same); without them they are omitted.
  struct Total {
    const char* key;
    int64_t delta;
  };
  const Total totals[] = {
      {"total-data-files", counts.added_data_files - counts.deleted_data_files},
      {"total-delete-files", counts.added_delete_files - counts.removed_delete_files},
      {"total-records", counts.added_records - counts.deleted_records},
      {"total-files-size", counts.added_files_size - counts.removed_files_size},
      {"total-position-deletes", counts.added_pos_deletes - counts.removed_pos_deletes},
      {"total-equality-deletes", counts.added_eq_deletes - counts.removed_eq_deletes},
  };
  for (const auto& t : totals) {
    bool present = true;
    const int64_t previous = parent ? SummaryInt(parent->summary, t.key, &present) : 0;
    if (present) summary[t.key] = std::to_string(previous + t.delta);
  }
  summary["engine-name"] = "lakesync";
  summary["engine-version"] = LAKESYNC_VERSION;
  for (const auto& [k, v] : extra_summary_) summary[k] = v;
  for (const auto& [k, v] : rewrite_summary) summary[k] = v;

  auto snapshot = std::make_shared<iceberg::Snapshot>();
  snapshot->snapshot_id = snapshot_id;
  if (parent) snapshot->parent_snapshot_id = parent->snapshot_id;
  snapshot->sequence_number = sequence_number;
  snapshot->timestamp_ms = std::max(iceberg::NowMs(), base.last_updated_ms);
  snapshot->manifest_list = list_options.location;
  snapshot->summary = summary;
  snapshot->schema_id = base.current_schema_id;
  // schema_evolution: the new schema lands with the snapshot, which names it.
  std::vector<iceberg::TableUpdate> schema_updates;
  std::vector<iceberg::TableRequirement> schema_requirements;
  if (schema_) {
    if (base.current_schema_id == schema_base_id_ && base.last_column_id == schema_base_last_column_id_) {
      schema_updates = iceberg::SchemaChangeUpdates(*schema_);
      schema_requirements = {iceberg::AssertCurrentSchemaId{base.current_schema_id},
                             iceberg::AssertLastAssignedFieldId{base.last_column_id}};
      snapshot->schema_id = iceberg::SchemaIdAfterAdd(base, *schema_->schema);
    } else if (!base.Schema()->SameSchema(*schema_->schema)) {
      return WithFlag(CommitConflict("the schema of {} changed (now schema {}) while this commit was written for "
                                     "schema {}; run again to write for the new schema",
                                     table_->name(), base.current_schema_id, schema_base_id_),
                      ErrorFlag::kNotRetryable);
    }
  }
  if (base.format_version >= 3) {
    snapshot->first_row_id = base.next_row_id;
    snapshot->added_rows = written.added_rows;
  }

  std::vector<iceberg::TableRequirement> requirements = {
      iceberg::AssertTableUuid{base.table_uuid},
      iceberg::AssertRefSnapshotId{iceberg::kMainBranch,
                                   parent ? std::optional<int64_t>(parent->snapshot_id) : std::nullopt}};
  iceberg::SnapshotRef ref;
  ref.snapshot_id = snapshot_id;
  requirements.insert(requirements.end(), schema_requirements.begin(), schema_requirements.end());
  std::vector<iceberg::TableUpdate> updates = schema_updates;
  updates.push_back(iceberg::AddSnapshot{snapshot});
  updates.push_back(iceberg::SetSnapshotRef{iceberg::kMainBranch, ref});
  if (!table_properties_.empty()) updates.push_back(iceberg::SetProperties{table_properties_});
  // Every file the commit names must be durable before the catalog publishes it: the streamed files
  // closed so far (this attempt's delete files too) were synced on the IO executor (io/file_syncs.h).
  ARROW_RETURN_NOT_OK(table_->AwaitFileSyncs());
  Failpoint(kFailpointBeforeCommit);
  // The catalog names the new metadata file; it is recorded with this attempt's files all the same.
  std::optional<catalog::ScopedMetadataFileRecorder> recorder;
  if (auto pending = table_->pending_files()) {
    recorder.emplace([pending](const std::string& location) { return pending->Record(location); });
  }
  // Holds the process here (commit.pause=wait:PATH) with this attempt built on the state it read:
  // writers released together race for the catalog (tests/cli/test_concurrent_commits.py).
  Failpoint(kFailpointCommitPause);
  // Error failpoints (common/failpoint.h): the catalog's three answers other than success that the
  // caller must handle, injected deterministically for tests/reliability/test_failpoints.py.
  if (FailpointFires(kFailpointCommitConflict)) {
    return CommitConflict("{}: requirement failed: another writer committed first (failpoint {})", table_->name(),
                          kFailpointCommitConflict);
  }
  if (FailpointFires(kFailpointCommitBeforeSwap)) {
    return CommitStateUnknown("{}: no answer from the catalog (failpoint {}); the commit may or may not have been "
                              "applied", table_->name(), kFailpointCommitBeforeSwap);
  }
  ARROW_ASSIGN_OR_RAISE(auto committed, table_->catalog()->CommitTable(table_->identifier(), requirements, updates));
  recorder.reset();
  if (FailpointFires(kFailpointCommitAfterSwap)) {
    return CommitStateUnknown("{}: the commit was applied but its answer was lost (failpoint {}); the commit may or "
                              "may not have been applied", table_->name(), kFailpointCommitAfterSwap);
  }
  Failpoint(kFailpointAfterCommit);
  table_->Update(std::move(committed));
  return CommitResult{snapshot_id, sequence_number, operation, summary, attempt_number + 1};
}

Result<CommitResult> SnapshotUpdate::Commit() {
  auto cleanup = [&](const std::vector<std::string>& files) {
    for (const auto& f : files) {
      auto st = table_->io()->Delete(f);
      if (!st.ok()) LS_LOG_WARN("could not delete {} after a failed commit: {}", f, st.message());
    }
  };
  {
    std::vector<const DataFile*> data, deletes;
    for (const auto& f : added_data_) data.push_back(&f);
    for (const auto& f : added_deletes_) deletes.push_back(&f);
    auto st = WriteManifests(data, deletes, 0, new_manifests_, written_files_);
    if (!st.ok()) {
      cleanup(written_files_);
      return WithContext(st, "committing to " + table_->name());
    }
  }
  // The budget (Java's names and defaults, except a shorter total timeout).
  const auto& m = *table_->metadata();
  const int max_retries = static_cast<int>(m.PropertyAsInt(iceberg::kPropCommitNumRetries, 4));
  const int64_t min_wait = m.PropertyAsInt("commit.retry.min-wait-ms", 100);
  const int64_t max_wait = m.PropertyAsInt("commit.retry.max-wait-ms", 60000);
  const int64_t total_timeout = m.PropertyAsInt("commit.retry.total-timeout-ms", 1800000);
  const auto started = std::chrono::steady_clock::now();
  std::mt19937 rng(std::random_device{}());
  for (int attempt_number = 0;; ++attempt_number) {
    Attempt attempt;
    auto result = TryCommit(attempt, attempt_number);
    if (result.ok()) {
      if (result->skipped) {
        cleanup(attempt.files);
        cleanup(written_files_);
        return result;
      }
      LS_LOG_INFO("committed snapshot {} ({}) to {}", result->snapshot_id, result->operation, table_->name());
      return result;
    }
    const Status& error = result.status();
    if (KindOf(error) == ErrorKind::kCommitStateUnknown) {
      // The commit may have landed: deleting anything could corrupt the table.
      return WithContext(error, "committing to " + table_->name());
    }
    cleanup(attempt.files);
    const int64_t wait = std::min<int64_t>(max_wait, min_wait << std::min(attempt_number, 20));
    const int64_t jittered = wait / 2 + static_cast<int64_t>(rng() % static_cast<uint64_t>(wait / 2 + 1));
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    const bool retry = KindOf(error) == ErrorKind::kCommitConflict && IsRetryable(error) &&
                       attempt_number < max_retries && elapsed.count() + jittered <= total_timeout;
    if (!retry) {
      cleanup(written_files_);
      const bool budget_spent = KindOf(error) == ErrorKind::kCommitConflict && IsRetryable(error);
      return WithContext(error, budget_spent ? fmt::format("committing to {} (gave up after {} attempts)",
                                                           table_->name(), attempt_number + 1)
                                             : "committing to " + table_->name());
    }
    LS_LOG_INFO("commit to {} conflicted ({}); retrying in {} ms", table_->name(), error.message(), jittered);
    std::this_thread::sleep_for(std::chrono::milliseconds(jittered));
    auto refreshed = table_->Refresh();
    if (!refreshed.ok()) {
      cleanup(written_files_);
      return WithContext(refreshed, "refreshing " + table_->name() + " after a commit conflict");
    }
  }
}

}  // namespace lakesync::table
