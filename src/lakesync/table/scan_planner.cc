// Scan planning: choose the snapshot, prune manifests and data files, match delete files.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <arrow/type.h>

#include "lakesync/iceberg/expr/binder.h"
#include "lakesync/iceberg/expr/metrics_evaluator.h"
#include "lakesync/iceberg/expr/parser.h"
#include "lakesync/iceberg/expr/partition_evaluator.h"
#include "lakesync/iceberg/manifest/snapshot_manifests.h"
#include "lakesync/iceberg/manifest/manifest_reader.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/scan/delete_loader.h"
#include "lakesync/iceberg/scan/equality_deletes.h"
#include "lakesync/table/scan.h"
#include "lakesync/table/scan_internal.h"

namespace lakesync::table {
namespace {

using iceberg::DataFile;
using iceberg::DataFilePtr;
using iceberg::FileContent;
using iceberg::ManifestContent;
using iceberg::ManifestEntryStatus;

struct SequencedFile {
  int64_t sequence_number;
  DataFilePtr file;
};

// Delete files of a snapshot, indexed the way scan planning looks them up.
class DeleteIndex {
 public:
  Status Add(const iceberg::ManifestEntry& entry, const iceberg::TableMetadata& metadata) {
    const DataFilePtr& f = entry.data_file;
    const int64_t seq = entry.sequence_number.value_or(0);
    if (f->content == FileContent::kPositionDeletes) {
      if (f->IsDeletionVector()) {
        const std::string& target = f->referenced_data_file.value_or("");
        if (target.empty()) return Corrupt("deletion vector in {} has no referenced_data_file", f->file_path);
        if (!dvs_.emplace(target, SequencedFile{seq, f}).second) {
          // Java readers refuse such tables too ("Can't index multiple DVs").
          return Corrupt("two live deletion vectors for data file {} ({} and {})", target,
                         dvs_[target].file->file_path, f->file_path);
        }
      } else {
        positional_[iceberg::PartitionTupleKey(*f)].push_back({seq, f});
      }
    } else if (f->content == FileContent::kEqualityDeletes) {
      auto spec = metadata.SpecById(f->spec_id);
      equality_->Add({seq, f}, /*global=*/spec && spec->IsUnpartitioned());
      ++equality_files_;
    }
    return Status::OK();
  }

  void Attach(FileScanTask& task) {
    const DataFile& d = *task.file;
    const int64_t seq = task.data_sequence_number;
    if (auto it = dvs_.find(d.file_path); it != dvs_.end() && seq <= it->second.sequence_number) {
      task.deletion_vector = it->second.file;
    } else if (auto pit = positional_.find(iceberg::PartitionTupleKey(d)); pit != positional_.end()) {
      // Position delete files are ignored for a data file that has a DV (spec).
      for (const auto& p : pit->second) {
        if (seq > p.sequence_number) continue;
        if (p.file->referenced_data_file && *p.file->referenced_data_file != d.file_path) continue;
        if (!MayReference(*p.file, d.file_path)) continue;
        task.position_deletes.push_back(p.file);
      }
    }
    task.equality_deletes = equality_->Match(d, seq);
  }

  // After every task is attached: the snapshot's equality deletes, shared by the tasks that have any
  // (their key maps are built once, on first read).
  void ShareEqualityDeletes(std::vector<FileScanTask>& tasks) {
    std::shared_ptr<const iceberg::EqualityDeleteIndex> shared = std::move(equality_);
    for (auto& task : tasks) {
      if (!task.equality_deletes.empty()) task.equality_index = shared;
    }
  }

  // A deletion vector (or a position delete file written for one data file) must reference a data
  // file that is live in the snapshot: one that references anything else (a damaged manifest, a
  // commit that lost its data file) would be applied to nothing while the rows it deletes come
  // back. `seen` holds every live data file read while planning; `may_be_pruned` says whether the
  // file a delete references could sit in a data manifest skipped by the filter, where it cannot be
  // looked up.
  //
  // Position delete files differ: v2 writers (Spark's compaction among them) legitimately leave a
  // file-scoped position delete file behind when its data file is removed. Such a dangling file
  // still names its data file in every row, so `rows_name_only_target` reads it and only a file
  // whose rows name another data file than its referenced_data_file is corrupt.
  Status CheckReferencedFiles(const std::set<std::string, std::less<>>& seen,
                              const std::function<Result<bool>(const DataFile&)>& may_be_pruned,
                              const std::function<Status(const DataFilePtr&)>& rows_name_only_target) const {
    auto check = [&](const std::string& target, const DataFile& deletes, const char* kind) -> Status {
      if (seen.count(target)) return Status::OK();
      ARROW_ASSIGN_OR_RAISE(bool pruned, may_be_pruned(deletes));
      if (pruned) return Status::OK();
      return Corrupt("the {} in {} references data file {}, which is not live in the snapshot", kind,
                     deletes.file_path, target);
    };
    for (const auto& [target, dv] : dvs_) ARROW_RETURN_NOT_OK(check(target, *dv.file, "deletion vector"));
    for (const auto& [partition, files] : positional_) {
      for (const auto& p : files) {
        if (p.file->referenced_data_file && !seen.count(*p.file->referenced_data_file)) {
          ARROW_RETURN_NOT_OK(rows_name_only_target(p.file));
        }
      }
    }
    return Status::OK();
  }

  int64_t size() const {
    int64_t n = static_cast<int64_t>(dvs_.size()) + equality_files_;
    for (const auto& [k, v] : positional_) n += static_cast<int64_t>(v.size());
    return n;
  }

 private:
  // Uses the file_path bounds of a position delete file to skip data files it cannot reference.
  static bool MayReference(const DataFile& deletes, const std::string& path) {
    auto lo = deletes.lower_bounds.find(iceberg::kDeleteFilePathFieldId);
    auto hi = deletes.upper_bounds.find(iceberg::kDeleteFilePathFieldId);
    if (lo != deletes.lower_bounds.end() && path < lo->second) return false;
    // Upper bounds may be truncated prefixes: only compare the prefix length.
    if (hi != deletes.upper_bounds.end() && path.compare(0, hi->second.size(), hi->second) > 0) return false;
    return true;
  }

  std::map<std::string, SequencedFile> dvs_;
  std::map<std::string, std::vector<SequencedFile>> positional_;
  std::unique_ptr<iceberg::EqualityDeleteIndex> equality_ = std::make_unique<iceberg::EqualityDeleteIndex>();
  int64_t equality_files_ = 0;
};

}  // namespace

Result<std::unique_ptr<TableScan>> TableScan::Make(std::shared_ptr<Table> table, ScanOptions options) {
  std::unique_ptr<TableScan> scan(new TableScan());
  const auto& m = *table->metadata();
  if (options.snapshot_id) {
    scan->snapshot_ = m.SnapshotById(*options.snapshot_id);
    if (!scan->snapshot_) {
      return NotFound("table {} has no snapshot {}", table->name(), *options.snapshot_id);
    }
  } else if (options.as_of_timestamp_ms) {
    scan->snapshot_ = m.SnapshotAsOf(*options.as_of_timestamp_ms);
    if (!scan->snapshot_) {
      return NotFound("table {} has no snapshot at or before {}Z", table->name(),
                      iceberg::FormatTimestamp(*options.as_of_timestamp_ms * 1000, false, false));
    }
  } else {
    scan->snapshot_ = m.SnapshotForRef(options.ref);
    if (!scan->snapshot_ && options.ref != iceberg::kMainBranch) {
      return NotFound("table {} has no branch or tag '{}'", table->name(), options.ref);
    }
  }
  // Time travel reads with the schema the snapshot was written with; the current state with the
  // current schema.
  scan->schema_ = m.Schema();
  if (scan->snapshot_ && (options.snapshot_id || options.as_of_timestamp_ms) && scan->snapshot_->schema_id) {
    if (auto s = m.SchemaById(*scan->snapshot_->schema_id)) scan->schema_ = s;
  }
  auto state = std::make_shared<State>();
  state->schema = scan->schema_;
  state->filter = iceberg::BoundExpr::AlwaysTrue();
  if (!options.filter.empty()) {
    LS_ASSIGN_OR_RAISE_CTX(state->filter,
                           iceberg::ParseAndBind(options.filter, *scan->schema_, options.case_sensitive),
                           "invalid --filter");
  }
  if (options.bound_filter) state->filter = iceberg::BoundExpr::And(state->filter, *options.bound_filter);
  // Output columns: the selection (or all), in the order given.
  std::vector<iceberg::NestedField> output_fields;
  if (options.select.empty()) {
    output_fields = scan->schema_->fields();
  } else {
    for (const auto& name : options.select) {
      const iceberg::NestedField* found = nullptr;
      for (const auto& f : scan->schema_->fields()) {
        const bool same = options.case_sensitive
                              ? f.name == name
                              : std::equal(f.name.begin(), f.name.end(), name.begin(), name.end(),
                                           [](char a, char b) { return std::tolower(a) == std::tolower(b); });
        if (same) found = &f;
      }
      if (!found) {
        std::string available;
        for (const auto& f : scan->schema_->fields()) available += (available.empty() ? "" : ", ") + f.name;
        return InvalidArgument("unknown column '{}' in --select (columns: {})", name, available);
      }
      output_fields.push_back(*found);
    }
  }
  state->output = std::make_shared<const iceberg::Schema>(scan->schema_->schema_id(), output_fields);
  // Output says "uuid" with the arrow.uuid extension type; the engine computes on its storage.
  ARROW_ASSIGN_OR_RAISE(auto arrow_out, iceberg::ToArrowSchema(*state->output, /*uuid_extension=*/true));
  if (options.with_file_and_pos) {
    ARROW_ASSIGN_OR_RAISE(arrow_out, arrow_out->AddField(arrow_out->num_fields(),
                                                        arrow::field(kFileColumn, arrow::utf8(), false)));
    ARROW_ASSIGN_OR_RAISE(arrow_out, arrow_out->AddField(arrow_out->num_fields(),
                                                        arrow::field(kPosColumn, arrow::int64(), false)));
  }
  if (options.with_row_lineage) {
    for (const auto& f : iceberg::RowLineageFields()) {
      ARROW_ASSIGN_OR_RAISE(auto field, iceberg::ToArrowField(f));
      ARROW_ASSIGN_OR_RAISE(arrow_out, arrow_out->AddField(arrow_out->num_fields(), field));
    }
  }
  scan->output_schema_ = arrow_out;
  scan->state_ = state;
  scan->table_ = std::move(table);
  scan->options_ = std::move(options);
  return scan;
}

Result<std::vector<FileScanTask>> TableScan::PlanFiles() {
  if (tasks_) return *tasks_;
  std::vector<FileScanTask> tasks;
  if (!snapshot_) {
    tasks_ = tasks;
    return tasks;
  }
  const auto& m = *table_->metadata();
  auto& io = *table_->io();
  LS_ASSIGN_OR_RAISE_CTX(auto manifests, iceberg::ReadSnapshotManifests(io, m, *snapshot_),
                         "reading the manifests of snapshot {}", snapshot_->snapshot_id);

  const bool filtered = state_->filter.op() != iceberg::Operation::kTrue;
  std::map<int32_t, std::optional<iceberg::ManifestEvaluator>> manifest_evaluators;
  std::map<int32_t, std::optional<iceberg::PartitionEvaluator>> partition_evaluators;
  std::optional<iceberg::InclusiveMetricsEvaluator> metrics;
  if (filtered) metrics.emplace(state_->filter);

  DeleteIndex deletes;
  std::vector<std::pair<int64_t, DataFilePtr>> data_files;
  // Every live data file read (pruned by metrics or partition or not), for the delete checks.
  std::set<std::string, std::less<>> seen_data_files;
  bool data_manifest_skipped = false;
  for (const auto& manifest : manifests) {
    ++stats_.manifests;
    auto spec = m.SpecById(manifest.partition_spec_id);
    const bool is_data = manifest.content == ManifestContent::kData;
    if (is_data && filtered && spec) {
      auto& evaluator = manifest_evaluators[manifest.partition_spec_id];
      if (!evaluator) {
        auto made = iceberg::ManifestEvaluator::Make(state_->filter, *spec, *schema_);
        if (made.ok()) evaluator.emplace(std::move(*made));
      }
      if (evaluator) {
        ARROW_ASSIGN_OR_RAISE(bool may, evaluator->MightMatch(manifest));
        if (!may) {
          ++stats_.manifests_skipped;
          data_manifest_skipped = true;
          continue;
        }
      }
    }
    LS_ASSIGN_OR_RAISE_CTX(std::string bytes, io.ReadAll(manifest.manifest_path), "reading manifest");
    ARROW_ASSIGN_OR_RAISE(auto reader, iceberg::ManifestReader::Open(bytes, manifest, &m));
    while (true) {
      ARROW_ASSIGN_OR_RAISE(auto entry, reader->Next());
      if (!entry) break;
      if (entry->status == ManifestEntryStatus::kDeleted) continue;
      if (!is_data) {
        ++stats_.delete_files;
        LS_RETURN_NOT_OK_CTX(deletes.Add(*entry, m), "planning a scan of {}", table_->name());
        continue;
      }
      ++stats_.data_files;
      seen_data_files.insert(entry->data_file->file_path);
      if (filtered) {
        bool may = metrics->MightMatch(*entry->data_file);
        if (may && spec && !spec->fields().empty()) {
          auto& evaluator = partition_evaluators[manifest.partition_spec_id];
          if (!evaluator) {
            auto made = iceberg::PartitionEvaluator::Make(state_->filter, *spec, *schema_);
            if (made.ok()) evaluator.emplace(std::move(*made));
          }
          if (evaluator) {
            ARROW_ASSIGN_OR_RAISE(may, evaluator->MightMatch(entry->data_file->partition));
          }
        }
        if (!may) {
          ++stats_.data_files_skipped;
          continue;
        }
      }
      data_files.emplace_back(entry->sequence_number.value_or(0), entry->data_file);
    }
  }
  // A delete whose data file was not seen may still be fine when a data manifest was skipped: the
  // delete carries its data file's partition, so if the filter rules that partition out, the data
  // file sat in a pruned manifest. Otherwise the data file would have been read.
  auto may_be_pruned = [&](const DataFile& deletes) -> Result<bool> {
    if (!data_manifest_skipped) return false;
    auto spec = m.SpecById(deletes.spec_id);
    if (!spec || spec->fields().empty()) return true;  // cannot tell: do not accuse
    auto evaluator = iceberg::PartitionEvaluator::Make(state_->filter, *spec, *schema_);
    if (!evaluator.ok()) return true;
    ARROW_ASSIGN_OR_RAISE(bool may_match, evaluator->MightMatch(deletes.partition));
    return !may_match;
  };
  iceberg::DeleteLoader loader(table_->io(), schema_);
  auto rows_name_only_target = [&](const DataFilePtr& file) -> Status {
    ARROW_ASSIGN_OR_RAISE(auto targets, loader.PositionDeleteTargets(file));
    for (const auto& target : targets) {
      if (target != *file->referenced_data_file) {
        return Corrupt("position delete file {} is recorded as deleting rows of {} only, but its rows name {}",
                       file->file_path, *file->referenced_data_file, target);
      }
    }
    return Status::OK();
  };
  LS_RETURN_NOT_OK_CTX(deletes.CheckReferencedFiles(seen_data_files, may_be_pruned, rows_name_only_target),
                       "planning a scan of {}", table_->name());
  for (auto& [seq, file] : data_files) {
    FileScanTask task;
    task.file = std::move(file);
    task.data_sequence_number = seq;
    deletes.Attach(task);
    tasks.push_back(std::move(task));
  }
  deletes.ShareEqualityDeletes(tasks);
  tasks_ = tasks;
  return tasks;
}

}  // namespace lakesync::table
