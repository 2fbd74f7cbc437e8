#include "lakesync/maintenance/compact.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>
#include <map>
#include <set>

#include "lakesync/common/failpoint.h"
#include "lakesync/common/logging.h"
#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/scan/delete_loader.h"
#include "lakesync/iceberg/scan/task_units.h"
#include "lakesync/iceberg/write/data_file_writer.h"
#include "lakesync/iceberg/write/transform_arrow.h"
#include "lakesync/maintenance/budget.h"
#include "lakesync/plan/external_sort.h"
#include "lakesync/table/append.h"
#include "lakesync/table/pending_files.h"
#include "lakesync/table/scan.h"
#include "lakesync/table/snapshot_update.h"

namespace lakesync::maintenance {
namespace {

namespace cp = arrow::compute;
using iceberg::DataFile;
using iceberg::DataFilePtr;
using iceberg::FileContent;
using iceberg::FileScanTask;

// Reached after the new data files are written, before the commit: `kill` leaves them as the pending
// files of an abandoned attempt (tests/cli/test_compact.py); firing fails the compaction there with
// an I/O error, as a store failing mid-rewrite would (tests/jobs/test_job_maintenance.py).
constexpr char kFailpointCompactWritten[] = "compact.after-write";
// Reached when a bin's sorted runs spilled and merging them starts: firing fails the compaction there
// with an I/O error, so a test sees the sort's temporary files go after an error too.
constexpr char kFailpointCompactSortMerge[] = "compact.sort-merge";

std::pair<std::string, std::string> DeleteKey(const DataFile& f) {
  return {f.file_path, f.IsDeletionVector() ? f.referenced_data_file.value_or("") : std::string()};
}

struct Candidate {
  FileScanTask task;
  int64_t deleted = 0;  // rows deleted (equality deletes: an upper bound, their row counts)
  double ratio = 0;
  int64_t live_bytes = 0;
};

struct Plan {
  iceberg::SnapshotPtr snapshot;
  int64_t target = 0;
  int64_t candidates = 0;
  std::vector<std::vector<const Candidate*>> bins;
  std::vector<Candidate> files;  // owns what bins point at
  std::set<std::string> rewritten;
  std::set<std::pair<std::string, std::string>> removed_deletes;  // position and equality files
  std::set<std::pair<std::string, std::string>> deletes_at_plan;  // every live delete file of the snapshot
  table::LiveEntries live;  // the snapshot's live entries (which deletes can go depends on them)
};

Result<int64_t> TargetSize(const iceberg::TableMetadata& m, const CompactOptions& options) {
  if (options.target_file_size) {
    if (*options.target_file_size <= 0) {
      return InvalidArgument("--target-file-size must be positive, not {}", *options.target_file_size);
    }
    return *options.target_file_size;
  }
  const int64_t v = m.PropertyAsInt(iceberg::kTargetFileSizeProperty, iceberg::kTargetFileSizeDefault);
  if (v <= 0) return InvalidArgument("table property {} must be positive, not {}", iceberg::kTargetFileSizeProperty, v);
  return v;
}

Result<Plan> MakePlan(const std::shared_ptr<table::Table>& table, const CompactOptions& options) {
  Plan plan;
  const auto& m = *table->metadata();
  ARROW_ASSIGN_OR_RAISE(plan.target, TargetSize(m, options));
  if (!(options.min_deleted_ratio >= 0 && options.min_deleted_ratio <= 1)) {
    return InvalidArgument("--min-deleted-ratio must be between 0 and 1, not {}", options.min_deleted_ratio);
  }
  plan.snapshot = m.CurrentSnapshot();
  if (!plan.snapshot) return plan;
  // Candidates come from a scan plan of the snapshot (deletes attached by the spec's rules, the
  // `where` filter pruning files); the whole live state is needed to decide which deletes can go.
  table::ScanOptions scan_options;
  scan_options.snapshot_id = plan.snapshot->snapshot_id;
  scan_options.filter = options.where;
  auto scan = table::TableScan::Make(table, scan_options);
  if (!scan.ok()) return WithContext(scan.status(), "--where");
  ARROW_ASSIGN_OR_RAISE(auto tasks, (*scan)->PlanFiles());
  ARROW_ASSIGN_OR_RAISE(plan.live, table::ReadLiveEntries(*table->io(), m, *plan.snapshot));
  for (const auto& e : plan.live.deletes) plan.deletes_at_plan.insert(DeleteKey(*e.data_file));

  iceberg::DeleteLoader loader(table->io(), m.Schema());
  const int64_t small = static_cast<int64_t>(static_cast<double>(plan.target) * options.small_file_ratio);
  std::map<std::string, std::vector<Candidate>> by_partition;  // ordered: deterministic plans
  for (auto& task : tasks) {
    Candidate c;
    const DataFile& d = *task.file;
    if (task.deletion_vector) {
      c.deleted = task.deletion_vector->record_count;
    } else if (!task.position_deletes.empty()) {
      LS_ASSIGN_OR_RAISE_CTX(auto positions, loader.DeletedPositions(d.file_path, nullptr, task.position_deletes),
                             "counting the deleted rows of {}", d.file_path);
      c.deleted = static_cast<int64_t>(positions.Cardinality());
    }
    for (const auto& e : task.equality_deletes) c.deleted += e->record_count;
    c.deleted = std::min(c.deleted, d.record_count);
    c.ratio = d.record_count > 0 ? static_cast<double>(c.deleted) / static_cast<double>(d.record_count) : 1.0;
    c.live_bytes = static_cast<int64_t>(static_cast<double>(d.file_size_in_bytes) * (1.0 - c.ratio));
    const bool many_deleted = c.deleted > 0 && c.ratio >= options.min_deleted_ratio;
    const bool is_small = d.file_size_in_bytes < small;
    if (!many_deleted && !is_small) continue;
    c.task = std::move(task);
    by_partition[iceberg::PartitionTupleKey(d)].push_back(std::move(c));
    ++plan.candidates;
  }
  // Bin-pack each partition: largest first, into the first bin with room (first-fit decreasing).
  std::vector<std::vector<Candidate>> packed;
  for (auto& [partition, files] : by_partition) {
    std::stable_sort(files.begin(), files.end(),
                     [](const Candidate& a, const Candidate& b) { return a.live_bytes > b.live_bytes; });
    std::vector<std::vector<Candidate>> bins;
    std::vector<int64_t> sizes;
    for (auto& c : files) {
      size_t i = 0;
      while (i < bins.size() && sizes[i] + c.live_bytes > plan.target) ++i;
      if (i == bins.size()) {
        bins.emplace_back();
        sizes.push_back(0);
      }
      sizes[i] += c.live_bytes;
      bins[i].push_back(std::move(c));
    }
    for (auto& bin : bins) {
      // One file without deletes would be rewritten as itself.
      if (bin.size() == 1 && bin.front().deleted == 0) continue;
      packed.push_back(std::move(bin));
    }
  }
  int64_t taken = 0;
  for (auto& bin : packed) {
    if (options.max_files > 0 && taken + static_cast<int64_t>(bin.size()) > options.max_files && taken > 0) break;
    taken += static_cast<int64_t>(bin.size());
    for (auto& c : bin) plan.files.push_back(std::move(c));
  }
  // Bins as pointers into plan.files (stable now).
  size_t next = 0;
  for (auto& bin : packed) {
    if (next >= plan.files.size()) break;
    std::vector<const Candidate*> b;
    for (size_t i = 0; i < bin.size(); ++i) b.push_back(&plan.files[next++]);
    plan.bins.push_back(std::move(b));
  }
  return plan;
}

// Fills plan.rewritten and plan.removed_deletes from plan.files: called by MakePlan's caller once the
// plan is made, and again when the time budget cut the rewrite short (fewer files rewritten means
// fewer delete files that can go).
Status ChooseRemovedDeletes(const std::shared_ptr<table::Table>& table, Plan& plan) {
  const auto& m = *table->metadata();
  const table::LiveEntries& live = plan.live;
  iceberg::DeleteLoader loader(table->io(), m.Schema());
  plan.rewritten.clear();
  plan.removed_deletes.clear();
  for (const auto& c : plan.files) plan.rewritten.insert(c.task.file->file_path);

  // Delete files that only applied to rewritten files go with them (deletion vectors go with their
  // data file in SnapshotUpdate).
  std::map<std::string, DataFilePtr> position_files, equality_files;
  for (const auto& c : plan.files) {
    for (const auto& p : c.task.position_deletes) position_files[p->file_path] = p;
    for (const auto& e : c.task.equality_deletes) equality_files[e->file_path] = e;
  }
  std::set<std::string> live_data;
  for (const auto& e : live.data) live_data.insert(e.data_file->file_path);
  for (const auto& [path, file] : position_files) {
    LS_ASSIGN_OR_RAISE_CTX(auto targets, loader.PositionDeleteTargets(file), "reading position delete file {}", path);
    bool only_rewritten = true;
    for (const auto& t : targets) only_rewritten &= !live_data.count(t) || plan.rewritten.count(t) > 0;
    if (only_rewritten) plan.removed_deletes.insert(DeleteKey(*file));
  }
  if (!equality_files.empty()) {
    std::map<std::string, int64_t> delete_seq;
    for (const auto& e : live.deletes) delete_seq[e.data_file->file_path] = e.sequence_number.value_or(0);
    for (const auto& [path, file] : equality_files) {
      const int64_t seq = delete_seq[path];
      auto spec = m.SpecById(file->spec_id);
      const bool global = spec && spec->IsUnpartitioned();
      const std::string partition = iceberg::PartitionTupleKey(*file);
      bool still_applies = false;
      for (const auto& e : live.data) {
        const DataFile& d = *e.data_file;
        if (plan.rewritten.count(d.file_path) || e.sequence_number.value_or(0) >= seq) continue;
        if (global || iceberg::PartitionTupleKey(d) == partition) {
          still_applies = true;
          break;
        }
      }
      if (!still_applies) plan.removed_deletes.insert(DeleteKey(*file));
    }
  }
  return Status::OK();
}

// Keeps the first `bins` bins of the plan (the time budget ran out after them).
Status TruncatePlan(const std::shared_ptr<table::Table>& table, Plan& plan, size_t bins) {
  size_t files = 0;
  for (size_t i = 0; i < bins; ++i) files += plan.bins[i].size();
  plan.bins.resize(bins);
  plan.files.resize(files);  // bins are consecutive runs of plan.files: the kept bins' pointers stay valid
  return ChooseRemovedDeletes(table, plan);
}

// The table's sort order as Arrow sort keys over the key columns it makes (transforms applied). A sort
// field may be a top-level column or a field inside structs (the path the partition splitter follows
// too, transform_arrow.h); one inside a list or map cannot be a sort key (spec), and then the bin is
// written in read order.
struct SortPlan {
  struct Field {
    std::vector<int> path;        // struct child indices from the top level
    iceberg::TypePtr source_type;
    iceberg::SortField field;
    std::string column;           // its name, for messages
  };
  std::vector<Field> fields;
};

// The key columns appended to each batch for the sort (and dropped before writing).
std::string SortKeyName(size_t i) { return "__lakesync_sort_key_" + std::to_string(i); }

Result<std::optional<SortPlan>> MakeSortPlan(const iceberg::TableMetadata& m) {
  auto order = m.SortOrder();
  if (!order || order->IsUnsorted()) return std::nullopt;
  const auto& schema = *m.Schema();
  SortPlan plan;
  for (const auto& f : order->fields) {
    auto path = iceberg::SourceFieldPath(schema, f.source_id, fmt::format("sort order {}", order->order_id));
    if (!path.ok()) {
      LS_LOG_WARN("{}: compacted files are not sorted", path.status().message());
      return std::nullopt;
    }
    plan.fields.push_back({std::move(*path), schema.FindFieldById(f.source_id)->type, f, schema.FindColumnName(f.source_id)});
  }
  return plan;
}

// `batch` with the sort key columns appended.
Result<std::shared_ptr<arrow::RecordBatch>> WithSortKeys(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                         const SortPlan& plan) {
  auto out = batch;
  for (size_t i = 0; i < plan.fields.size(); ++i) {
    const auto& f = plan.fields[i];
    ARROW_ASSIGN_OR_RAISE(auto column, iceberg::SourceColumn(*batch, f.path));
    if (f.field.transform.kind() != iceberg::Transform::Kind::kIdentity) {
      LS_ASSIGN_OR_RAISE_CTX(column, iceberg::ApplyTransform(f.field.transform, *f.source_type, column),
                             "sort order field on column '{}'", f.column);
    }
    ARROW_ASSIGN_OR_RAISE(out, out->AddColumn(out->num_columns(), SortKeyName(i), column));
  }
  return out;
}

std::vector<cp::SortKey> SortKeys(const SortPlan& plan) {
  std::vector<cp::SortKey> keys;
  for (size_t i = 0; i < plan.fields.size(); ++i) {
    const auto& f = plan.fields[i].field;
    keys.emplace_back(SortKeyName(i),
                      f.direction == iceberg::SortDirection::kAsc ? cp::SortOrder::Ascending : cp::SortOrder::Descending,
                      f.null_order == iceberg::NullOrder::kNullsFirst ? cp::NullPlacement::AtStart
                                                                      : cp::NullPlacement::AtEnd);
  }
  return keys;
}

// The schema the rewrite writes: the table's, plus on v3 the row lineage columns (spec "Row
// Lineage": a row moved to another file keeps its _row_id, and an unchanged row its
// _last_updated_sequence_number, stored explicitly in the new file since its position changed).
iceberg::SchemaPtr WriteSchema(const iceberg::TableMetadata& m) {
  if (m.format_version < 3) return m.Schema();
  std::vector<iceberg::NestedField> fields = m.Schema()->fields();
  for (auto& f : iceberg::RowLineageFields()) fields.push_back(std::move(f));
  return std::make_shared<const iceberg::Schema>(m.Schema()->schema_id(), std::move(fields),
                                                 m.Schema()->identifier_field_ids());
}

// Reads one bin (deletes applied) and writes its rows as new data files.
Status RewriteBin(const std::shared_ptr<table::Table>& table, const std::shared_ptr<const iceberg::ScanContext>& context,
                  const std::vector<const Candidate*>& bin, const std::optional<SortPlan>& sort, int64_t target,
                  const iceberg::SchemaPtr& write_schema, const std::shared_ptr<arrow::Schema>& arrow_schema,
                  const CompactOptions& options, int32_t bin_index, std::vector<DataFile>& written,
                  std::vector<std::string>& started, int64_t& spilled_runs) {
  auto tasks = std::make_shared<std::vector<FileScanTask>>();
  for (const Candidate* c : bin) tasks->push_back(c->task);
  iceberg::DataFileReadOptions read;  // every column, every row, deletes applied
  read.with_row_lineage = table->metadata()->format_version >= 3;
  using Batches = std::vector<std::shared_ptr<arrow::RecordBatch>>;
  auto read_unit = [](size_t, iceberg::DataFileReader& reader) -> Result<Batches> {
    Batches out;
    while (true) {
      LS_ASSIGN_OR_RAISE_CTX(auto next, reader.Next(), "reading data file {}", reader.path());
      if (!next) return out;
      if (next->batch->num_rows() > 0) out.push_back(std::move(next->batch));
    }
  };
  ARROW_ASSIGN_OR_RAISE(auto units, iceberg::TaskUnitStream<Batches>::Make(context, tasks, read, read_unit));

  // A sorted bin goes through the external sorter (plan/external_sort.h): in memory up to
  // sort_memory_bytes, beyond that in sorted runs spilled to temporary files (removed when `sorter`
  // goes, on every path) and merged.
  std::unique_ptr<plan::ExternalSorter> sorter;
  if (sort) {
    ARROW_ASSIGN_OR_RAISE(auto empty, arrow::RecordBatch::MakeEmpty(arrow_schema));
    ARROW_ASSIGN_OR_RAISE(auto keyed, WithSortKeys(empty, *sort));
    plan::ExternalSortOptions sort_options;
    sort_options.keys = SortKeys(*sort);
    sort_options.memory_limit_bytes = options.sort_memory_bytes;
    sort_options.spill_directory = options.sort_spill_directory;
    ARROW_ASSIGN_OR_RAISE(sorter, plan::ExternalSorter::Make(keyed->schema(), std::move(sort_options)));
  }
  iceberg::DataWriterOptions writer_options = table::DataWriterOptionsFor(*table);
  writer_options.schema = write_schema;
  writer_options.properties[iceberg::kTargetFileSizeProperty] = std::to_string(target);
  writer_options.partition_id = bin_index;
  if (!sort) writer_options.sort_order_id.reset();
  ARROW_ASSIGN_OR_RAISE(auto writer, iceberg::RollingDataWriter::Make(writer_options));
  const int data_columns = arrow_schema->num_fields();
  Status st = [&]() -> Status {
    while (true) {
      ARROW_ASSIGN_OR_RAISE(auto next, units->Next());
      if (!next) break;
      for (auto& batch : *next) {
        ARROW_ASSIGN_OR_RAISE(batch, tabular::ConformBatch(batch, arrow_schema, "compaction"));
        if (sorter) {
          ARROW_ASSIGN_OR_RAISE(auto keyed, WithSortKeys(batch, *sort));
          batch.reset();
          ARROW_RETURN_NOT_OK(sorter->Add(keyed));
        } else {
          ARROW_RETURN_NOT_OK(writer->Write(batch));
        }
      }
    }
    if (!sorter) return Status::OK();
    if (sorter->runs_spilled() > 0 && FailpointFires(kFailpointCompactSortMerge)) {
      return IOError("compaction failed merging the sorted runs of bin {} (failpoint {})", bin_index,
                     kFailpointCompactSortMerge);
    }
    ARROW_RETURN_NOT_OK(sorter->Finish([&](const std::shared_ptr<arrow::RecordBatch>& sorted) -> Status {
      std::vector<int> columns(static_cast<size_t>(data_columns));
      for (int c = 0; c < data_columns; ++c) columns[static_cast<size_t>(c)] = c;
      ARROW_ASSIGN_OR_RAISE(auto rows, sorted->SelectColumns(columns));
      return writer->Write(rows);
    }));
    spilled_runs += sorter->runs_spilled();
    if (sorter->runs_spilled() > 0) {
      LS_LOG_INFO("compaction of {}: bin {} sorted in {} spilled run(s) ({} bytes) within {} bytes of memory",
                  table->name(), bin_index, sorter->runs_spilled(), sorter->bytes_spilled(), options.sort_memory_bytes);
    }
    return Status::OK();
  }();
  sorter.reset();  // its temporary files go now, whatever happened
  if (!st.ok()) {
    for (auto& path : writer->Abort()) started.push_back(std::move(path));
    return st;
  }
  ARROW_ASSIGN_OR_RAISE(auto files, writer->Close());
  for (auto& f : files) {
    started.push_back(f.file_path);
    written.push_back(std::move(f));
  }
  return Status::OK();
}

// Nothing the plan rewrote changed since: each rewritten file is still live (SnapshotUpdate checks
// that) and no deletion vector or position delete file that may hit one was added.
Status ValidateUnchanged(const std::shared_ptr<table::Table>& table, const Plan& plan, const table::CommitBase& base) {
  auto current = base.metadata.CurrentSnapshot();
  if (current && current->snapshot_id == plan.snapshot->snapshot_id) return Status::OK();
  if (!current) return CommitConflict("the table has no snapshot any more");
  ARROW_ASSIGN_OR_RAISE(auto live, table::ReadLiveEntries(*table->io(), base.metadata, *current, false, true));
  iceberg::DeleteLoader loader(table->io(), base.metadata.Schema());
  for (const auto& e : live.deletes) {
    const DataFile& f = *e.data_file;
    if (f.content != FileContent::kPositionDeletes || plan.deletes_at_plan.count(DeleteKey(f))) continue;
    if (f.IsDeletionVector() || f.referenced_data_file) {
      const std::string target = f.referenced_data_file.value_or("");
      if (plan.rewritten.count(target)) {
        return CommitConflict("data file {} gained deletes ({}) while it was being rewritten", target, f.file_path);
      }
      continue;
    }
    ARROW_ASSIGN_OR_RAISE(auto targets, loader.PositionDeleteTargets(e.data_file));
    for (const auto& t : targets) {
      if (plan.rewritten.count(t)) {
        return CommitConflict("data file {} gained deletes ({}) while it was being rewritten", t, f.file_path);
      }
    }
  }
  return Status::OK();
}

void DeleteFiles(const table::Table& table, const std::vector<std::string>& files) {
  for (const auto& f : files) {
    auto st = table.io()->Delete(f);
    if (!st.ok() && KindOf(st) != ErrorKind::kNotFound) LS_LOG_WARN("could not delete {}: {}", f, st.message());
  }
}

}  // namespace

Result<CompactResult> Compact(const std::shared_ptr<table::Table>& table, const CompactOptions& options) {
  if (options.max_attempts < 1) return InvalidArgument("max_attempts must be at least 1");
  CompactResult result;
  // The budget covers every attempt: a rewrite planned again after a conflict does not start afresh.
  const TimeBudget budget(options.max_duration);
  auto describe = [](const Plan& plan, int attempt, CompactResult& out) {
    out = CompactResult{};
    out.attempts = attempt;
    out.candidate_files = plan.candidates;
    out.bins = static_cast<int64_t>(plan.bins.size());
    for (const auto& c : plan.files) {
      out.rewritten_files.push_back(c.task.file->file_path);
      out.rewritten_bytes += c.task.file->file_size_in_bytes;
      out.rewritten_records += c.task.file->record_count;
      if (c.task.deletion_vector) ++out.removed_delete_files;
    }
    out.rewritten_data_files = static_cast<int64_t>(plan.files.size());
    out.removed_delete_files += static_cast<int64_t>(plan.removed_deletes.size());
  };
  for (int attempt = 1;; ++attempt) {
    ARROW_ASSIGN_OR_RAISE(auto plan, MakePlan(table, options));
    ARROW_RETURN_NOT_OK(ChooseRemovedDeletes(table, plan));
    describe(plan, attempt, result);
    if (plan.files.empty() || options.dry_run) return result;
    int64_t bins_left = 0, files_left = 0;

    const auto& m = *table->metadata();
    ARROW_RETURN_NOT_OK(table::BeginWriteAttempt(*table));
    std::vector<DataFile> written;
    std::vector<std::string> started;
    int64_t spilled_runs = 0;
    Result<table::CommitResult> committed = [&]() -> Result<table::CommitResult> {
      LS_ASSIGN_OR_RAISE_CTX(auto context, iceberg::ScanContext::Make(table->io(), m, m.Schema()), "reading {}",
                             table->name());
      const iceberg::SchemaPtr write_schema = WriteSchema(m);
      ARROW_ASSIGN_OR_RAISE(auto arrow_schema, iceberg::ToArrowSchema(*write_schema));
      ARROW_ASSIGN_OR_RAISE(auto sort, MakeSortPlan(m));
      for (size_t i = 0; i < plan.bins.size(); ++i) {
        if (i > 0 && budget.Spent()) {
          // Out of time: commit the bins done; the rest qualify again in the next run.
          bins_left = static_cast<int64_t>(plan.bins.size() - i);
          for (size_t j = i; j < plan.bins.size(); ++j) files_left += static_cast<int64_t>(plan.bins[j].size());
          ARROW_RETURN_NOT_OK(TruncatePlan(table, plan, i));
          describe(plan, attempt, result);
          break;
        }
        ARROW_RETURN_NOT_OK(RewriteBin(table, context, plan.bins[i], sort, plan.target, write_schema, arrow_schema,
                                       options, static_cast<int32_t>(i), written, started, spilled_runs));
      }
      if (FailpointFires(kFailpointCompactWritten)) {
        return IOError("compaction failed after writing its files (failpoint {})", kFailpointCompactWritten);
      }
      table::SnapshotUpdate update(table);
      update.SetOperation(iceberg::kOperationReplace);
      update.SetSummaryProperty("lakesync.maintenance", "compact");
      for (const auto& f : written) update.AddDataFile(f, plan.snapshot->sequence_number);
      for (const auto& path : plan.rewritten) update.RemoveDataFile(path);
      for (const auto& [path, target] : plan.removed_deletes) update.RemoveDeleteFile(path, target.empty() ? std::nullopt : std::optional<std::string>(target));
      update.AddValidation([&table, &plan](const table::CommitBase& base) { return ValidateUnchanged(table, plan, base); });
      return update.Commit();
    }();
    if (committed.ok()) {
      table::EndWriteAttempt(*table, Status::OK());
      result.snapshot_id = committed->snapshot_id;
      result.bins_left = bins_left;
      result.files_left = files_left;
      result.sort_spilled_runs = spilled_runs;
      for (const auto& f : written) {
        ++result.added_data_files;
        result.added_bytes += f.file_size_in_bytes;
        result.written_records += f.record_count;
      }
      LS_LOG_INFO("compacted {}: {} data file(s) into {} ({} live rows), {} delete file(s) removed, snapshot {}",
                  table->name(), result.rewritten_data_files, result.added_data_files, result.written_records,
                  result.removed_delete_files, result.snapshot_id.value_or(0));
      if (bins_left > 0) {
        LS_LOG_INFO("compaction of {}: the time budget ran out; {} bin(s) of {} file(s) left for the next run",
                    table->name(), bins_left, files_left);
      }
      return result;
    }
    const Status& error = committed.status();
    if (KindOf(error) == ErrorKind::kCommitStateUnknown) {
      table::EndWriteAttempt(*table, error);  // the commit may have landed: keep every file
      return WithContext(error, "compacting " + table->name());
    }
    DeleteFiles(*table, started);
    table::EndWriteAttempt(*table, error);
    if (KindOf(error) != ErrorKind::kCommitConflict || attempt >= options.max_attempts) {
      return WithContext(error, attempt > 1 ? fmt::format("compacting {} (gave up after {} plans)", table->name(), attempt)
                                            : "compacting " + table->name());
    }
    LS_LOG_INFO("compaction of {}: {}; planning again (attempt {})", table->name(), error.message(), attempt + 1);
    ARROW_RETURN_NOT_OK(table->Refresh());
  }
}

}  // namespace lakesync::maintenance
