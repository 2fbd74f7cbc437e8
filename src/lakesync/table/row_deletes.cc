#include "lakesync/table/row_deletes.h"

#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <fmt/format.h>

#include <set>

#include "lakesync/common/executor.h"
#include "lakesync/common/logging.h"
#include "lakesync/common/version.h"
#include "lakesync/formats/puffin/deletion_vector.h"
#include "lakesync/formats/puffin/deletion_vector_file.h"
#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/iceberg/write/equality_delete_writer.h"
#include "lakesync/iceberg/write/file_namer.h"
#include "lakesync/iceberg/write/position_delete_writer.h"
#include "lakesync/iceberg/manifest/manifest_reader.h"
#include "lakesync/iceberg/manifest/snapshot_manifests.h"
#include "lakesync/iceberg/scan/delete_loader.h"
#include "lakesync/table/pending_files.h"
#include "lakesync/table/scan.h"

namespace lakesync::table {
namespace {

iceberg::OutputFactory OutputsOf(const Table& table) { return table.Outputs(); }

}  // namespace

std::string DataLocation(const iceberg::TableMetadata& m) {
  return m.Property(iceberg::kPropDataPath, io::JoinLocation(m.location, "data"));
}

PositionDeletes::Target& PositionDeletes::TargetFor(const iceberg::DataFilePtr& data_file,
                                                    const iceberg::DataFilePtr& current_dv) {
  auto& t = targets_[data_file->file_path];
  if (!t.data_file) {
    t.data_file = data_file;
    t.current_dv = current_dv;
  }
  return t;
}

Status PositionDeletes::AddPosition(Target& t, int64_t position) {
  if (!t.positions.Contains(position)) {
    ARROW_RETURN_NOT_OK(t.positions.Add(position));
    ++count_;
  }
  return Status::OK();
}

Status PositionDeletes::AddPositions(Target& t, const puffin::PositionBitmap& positions) {
  const int64_t before = t.positions.Cardinality();
  t.positions.Or(positions);
  count_ += t.positions.Cardinality() - before;
  return Status::OK();
}

Status PositionDeletes::Add(const iceberg::FileScanTask& task, int64_t position) {
  auto& t = TargetFor(task.file, task.deletion_vector);
  if (!t.position_delete_files) t.position_delete_files = task.position_deletes;
  return AddPosition(t, position);
}

Status PositionDeletes::Add(const iceberg::FileScanTask& task, const puffin::PositionBitmap& positions) {
  auto& t = TargetFor(task.file, task.deletion_vector);
  if (!t.position_delete_files) t.position_delete_files = task.position_deletes;
  return AddPositions(t, positions);
}

Status PositionDeletes::Add(const iceberg::DataFilePtr& data_file, const iceberg::DataFilePtr& current_dv,
                            int64_t position) {
  return AddPosition(TargetFor(data_file, current_dv), position);
}

Status PositionDeletes::Add(const iceberg::DataFilePtr& data_file, const iceberg::DataFilePtr& current_dv,
                            const puffin::PositionBitmap& positions) {
  return AddPositions(TargetFor(data_file, current_dv), positions);
}

Status PositionDeletes::WriteTo(AttemptDeletes& deletes) {
  ARROW_ASSIGN_OR_RAISE(auto files, Write(deletes.written));
  for (auto& f : files.added) deletes.AddDeleteFile(std::move(f));
  for (auto& [path, referenced] : files.removed) deletes.RemoveDeleteFile(path, referenced);
  return Status::OK();
}

Status PositionDeletes::WriteTo(SnapshotUpdate& update, std::vector<std::string>& written) {
  ARROW_ASSIGN_OR_RAISE(auto files, Write(written));
  for (auto& f : files.added) update.AddDeleteFile(std::move(f));
  for (auto& [path, referenced] : files.removed) update.RemoveDeleteFile(path, referenced);
  return Status::OK();
}

Result<WrittenDeletes> PositionDeletes::Write(std::vector<std::string>& written) {
  if (targets_.empty()) return WrittenDeletes{};
  if (table_->metadata()->format_version >= 3) return WriteDeletionVectors(written);
  return WritePositionDeleteFiles(written);
}

namespace {

// The live v2 position delete files (Parquet/Avro/ORC, not vectors) of the table's current snapshot,
// by the data file they name. After `table upgrade` to v3 a data file can have such deletes and no
// deletion vector; the first vector written for it must carry those positions too, because a v3
// reader ignores position delete files for a data file that has a vector (spec: position deletes for
// a file are merged into its vector). Only for targets added without their scan task: planning
// already lists these files per task.
Result<std::map<std::string, std::vector<iceberg::DataFilePtr>>> LivePositionDeleteFiles(
    const Table& table, iceberg::DeleteLoader& loader) {
  std::map<std::string, std::vector<iceberg::DataFilePtr>> by_data_file;
  const auto& m = *table.metadata();
  auto current = m.CurrentSnapshot();
  if (!current) return by_data_file;
  ARROW_ASSIGN_OR_RAISE(auto manifests, iceberg::ReadSnapshotManifests(*table.io(), m, *current));
  for (const auto& manifest : manifests) {
    if (manifest.content != iceberg::ManifestContent::kDeletes) continue;
    LS_ASSIGN_OR_RAISE_CTX(std::string bytes, table.io()->ReadAll(manifest.manifest_path), "reading manifest {}",
                           manifest.manifest_path);
    ARROW_ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifest(bytes, manifest, &m));
    for (const auto& e : entries) {
      const auto& f = e.data_file;
      if (e.status == iceberg::ManifestEntryStatus::kDeleted || f->content != iceberg::FileContent::kPositionDeletes ||
          f->IsDeletionVector()) {
        continue;
      }
      if (f->referenced_data_file) {
        by_data_file[*f->referenced_data_file].push_back(f);
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto targets, loader.PositionDeleteTargets(f));
      for (const auto& path : targets) by_data_file[path].push_back(f);
    }
  }
  return by_data_file;
}

}  // namespace

Result<WrittenDeletes> PositionDeletes::WriteDeletionVectors(std::vector<std::string>& written) {
  WrittenDeletes result;
  const auto& m = *table_->metadata();
  const std::string location =
      io::JoinLocation(DataLocation(m), fmt::format("{}-deletes.puffin", table_->NewFileStem()));
  ARROW_ASSIGN_OR_RAISE(auto out, table_->OpenOutput(location));
  written.push_back(location);
  puffin::DeletionVectorWriterOptions options;
  options.lakesync_version = LAKESYNC_VERSION;
  ARROW_ASSIGN_OR_RAISE(auto writer, puffin::DeletionVectorWriter::Make(out, options));
  iceberg::DeleteLoader loader(table_->io(), m.Schema());
  std::map<std::string, std::vector<iceberg::DataFilePtr>> unplanned;  // live v2 files, when a target needs them
  for (const auto& [path, target] : targets_) {
    if (!target.position_delete_files) {
      ARROW_ASSIGN_OR_RAISE(unplanned, LivePositionDeleteFiles(*table_, loader));
      break;
    }
  }
  // Per data file, in parallel on the executor: merge with what already deletes rows of it (its
  // vector — one live vector per data file — or the position delete files a v2 table left before its
  // upgrade; reading those is I/O) and serialize. The blobs then go into the one Puffin file in path
  // order, so the file is the same whatever the thread count.
  std::vector<std::pair<const std::string*, Target*>> order;
  for (auto& [path, target] : targets_) order.emplace_back(&path, &target);
  struct Blob {
    std::string bytes;
    int64_t cardinality = 0;
  };
  ARROW_ASSIGN_OR_RAISE(auto blobs, ParallelMap<Blob>(order.size(), [&](size_t i) -> Result<Blob> {
    const std::string& path = *order[i].first;
    Target& target = *order[i].second;
    static const std::vector<iceberg::DataFilePtr> kNone;
    const std::vector<iceberg::DataFilePtr>* v2 = &kNone;
    if (target.position_delete_files) {
      v2 = &*target.position_delete_files;
    } else if (auto it = unplanned.find(path); it != unplanned.end()) {
      v2 = &it->second;
    }
    if (target.current_dv || !v2->empty()) {
      ARROW_ASSIGN_OR_RAISE(auto existing, loader.DeletedPositions(path, target.current_dv, *v2));
      target.positions.Or(existing);
    }
    target.positions.RunOptimize();
    Blob blob;
    blob.cardinality = target.positions.Cardinality();
    LS_ASSIGN_OR_RAISE_CTX(blob.bytes, puffin::SerializeDeletionVector(target.positions),
                           "writing the deletion vector of {}", path);
    return blob;
  }));
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string& path = *order[i].first;
    LS_RETURN_NOT_OK_CTX(writer->AddSerialized(path, std::move(blobs[i].bytes), blobs[i].cardinality),
                         "writing the deletion vector of {}", path);
  }
  ARROW_ASSIGN_OR_RAISE(auto file, writer->Finish());
  ARROW_RETURN_NOT_OK(out->Close());
  for (size_t i = 0; i < order.size(); ++i) {
    const Target& target = *order[i].second;
    const auto& dv = file.vectors[i];
    iceberg::DataFile f;
    f.content = iceberg::FileContent::kPositionDeletes;
    f.file_format = iceberg::FileFormat::kPuffin;
    f.file_path = location;
    f.spec_id = target.data_file->spec_id;
    f.partition = target.data_file->partition;
    f.record_count = dv.cardinality;
    f.file_size_in_bytes = file.file_size_in_bytes;
    f.referenced_data_file = dv.referenced_data_file;
    f.content_offset = dv.content_offset;
    f.content_size_in_bytes = dv.content_size_in_bytes;
    result.added.push_back(std::move(f));
    if (target.current_dv) {
      result.removed.emplace_back(target.current_dv->file_path, target.current_dv->referenced_data_file.value_or(""));
    }
  }
  return result;
}

Result<WrittenDeletes> PositionDeletes::WritePositionDeleteFiles(std::vector<std::string>& written) {
  WrittenDeletes out;
  const auto& m = *table_->metadata();
  iceberg::FileNamer namer(DataLocation(m), 0, 0, table_->NewFileStem());
  std::map<std::string, std::vector<const Target*>> groups;
  for (const auto& [path, target] : targets_) groups[iceberg::PartitionTupleKey(*target.data_file)].push_back(&target);
  // One file per partition, written in parallel on the executor; locations are chosen (and recorded)
  // in partition order first, so names and the files' order do not depend on the thread count.
  std::vector<iceberg::PositionDeleteWriterOptions> options_of;
  std::vector<const std::vector<const Target*>*> targets_of;
  for (const auto& [key, targets] : groups) {
    const auto& first = *targets.front()->data_file;
    auto spec = m.SpecById(first.spec_id);
    const std::string partition_path = spec ? spec->PartitionPath(*m.Schema(), first.partition) : "";
    iceberg::PositionDeleteWriterOptions options;
    options.location = namer.NewLocation(partition_path, /*deletes=*/true);
    options.output_factory = OutputsOf(*table_);
    options.spec_id = first.spec_id;
    options.partition = first.partition;
    options.properties = m.properties;
    written.push_back(options.location);
    options_of.push_back(std::move(options));
    targets_of.push_back(&targets);
  }
  ARROW_ASSIGN_OR_RAISE(out.added, ParallelMap<iceberg::DataFile>(
                                       options_of.size(), [&](size_t i) -> Result<iceberg::DataFile> {
                                         ARROW_ASSIGN_OR_RAISE(auto writer,
                                                               iceberg::PositionDeleteWriter::Make(options_of[i]));
                                         for (const Target* t : *targets_of[i]) {
                                           ARROW_RETURN_NOT_OK(writer->DeletePositions(t->data_file->file_path,
                                                                                       t->positions.ToVector()));
                                         }
                                         return writer->Close();
                                       }));
  return out;
}

namespace {

Result<DeleteWhereResult> DeleteWhereAttempt(const std::shared_ptr<Table>& table, const DeleteWhereOptions& options) {
  if (options.filter.empty()) return InvalidArgument("a delete needs a filter (use 'true' to delete every row)");
  if (table->metadata()->format_version < 2) return Unsupported("row-level deletes need format version 2 or later");
  std::vector<std::string> equality_columns = options.equality_columns;
  std::vector<int32_t> equality_ids;
  if (options.mode == DeleteMode::kEquality) {
    auto schema = table->metadata()->Schema();
    if (equality_columns.empty()) {
      for (int32_t id : schema->identifier_field_ids()) equality_columns.push_back(schema->FindColumnName(id));
    }
    if (equality_columns.empty()) {
      return InvalidArgument("equality deletes need key columns: give --equality-columns or set identifier fields");
    }
    for (const auto& c : equality_columns) {
      const auto* f = schema->FindFieldByName(c);
      if (!f || schema->TopLevelIndex(f->id) < 0) return InvalidArgument("unknown top-level column '{}'", c);
      equality_ids.push_back(f->id);
    }
  }

  // The rows to delete are found on the state each commit attempt is made on: a concurrent commit
  // that rewrote a data file we resolved positions in, or gave it a deletion vector, makes the
  // commit loop (SnapshotUpdate) scan again on the new state.
  DeleteWhereResult result;
  std::set<std::string> scanned;  // data files the attempt's deletes name
  SnapshotUpdate update(table);
  update.SkipIfEmpty();
  update.SetAttemptDeletes([&](AttemptDeletes& deletes) -> Status {
    result = DeleteWhereResult{};
    scanned.clear();
    const auto& m = *table->metadata();
    auto schema = m.Schema();
    ScanOptions scan_options;
    scan_options.filter = options.filter == "true" ? "" : options.filter;
    scan_options.with_file_and_pos = true;
    if (options.mode == DeleteMode::kEquality) {
      scan_options.select = equality_columns;
    } else if (!schema->fields().empty()) {
      scan_options.select = {schema->fields().front().name};
    }
    ARROW_ASSIGN_OR_RAISE(auto scan, TableScan::Make(table, scan_options));
    ARROW_ASSIGN_OR_RAISE(auto tasks, scan->PlanFiles());
    std::map<std::string, const FileScanTask*> task_of;
    for (const auto& t : tasks) task_of[t.file->file_path] = &t;
    ARROW_ASSIGN_OR_RAISE(auto reader, scan->Open());
    PositionDeletes positions(table);
    std::map<std::string, std::unique_ptr<iceberg::EqualityDeleteWriter>> equality_writers;
    iceberg::FileNamer namer(DataLocation(m), 0, 0, table->NewFileStem());
    Status st = [&]() -> Status {
      while (true) {
        std::shared_ptr<arrow::RecordBatch> batch;
        ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
        if (!batch) break;
        const auto& files = static_cast<const arrow::StringArray&>(*batch->GetColumnByName(kFileColumn));
        const auto& pos = static_cast<const arrow::Int64Array&>(*batch->GetColumnByName(kPosColumn));
        if (options.mode == DeleteMode::kPosition) {
          for (int64_t i = 0; i < batch->num_rows(); ++i) {
            const FileScanTask* task = task_of.at(std::string(files.GetView(i)));
            scanned.insert(task->file->file_path);
            ARROW_RETURN_NOT_OK(positions.Add(*task, pos.Value(i)));
          }
          continue;
        }
        // Equality mode: the matched rows' key values go to a delete file in their data file's partition.
        // The key columns by name (the writer puts them in its delete schema's order).
        ARROW_ASSIGN_OR_RAISE(auto keys, batch->SelectColumns([&] {
          std::vector<int> idx;
          for (const auto& c : equality_columns) idx.push_back(batch->schema()->GetFieldIndex(c));
          return idx;
        }()));
        for (int64_t i = 0; i < batch->num_rows(); ++i) {
          const FileScanTask* task = task_of.at(std::string(files.GetView(i)));
          const std::string group = iceberg::PartitionTupleKey(*task->file);
          auto& writer = equality_writers[group];
          if (!writer) {
            auto spec = m.SpecById(task->file->spec_id);
            iceberg::EqualityDeleteWriterOptions eq;
            eq.table_schema = schema;
            eq.equality_field_ids = equality_ids;
            eq.location = namer.NewLocation(spec ? spec->PartitionPath(*schema, task->file->partition) : "", true);
            eq.output_factory = OutputsOf(*table);
            eq.spec_id = task->file->spec_id;
            eq.partition = task->file->partition;
            eq.properties = m.properties;
            ARROW_ASSIGN_OR_RAISE(writer, iceberg::EqualityDeleteWriter::Make(eq));
            deletes.written.push_back(eq.location);
          }
          ARROW_RETURN_NOT_OK(writer->Write(keys->Slice(i, 1)));
          ++result.deleted_rows;
        }
      }
      if (options.mode == DeleteMode::kPosition) {
        result.deleted_rows = positions.count();
        ARROW_RETURN_NOT_OK(positions.WriteTo(deletes));
      } else {
        for (auto& [group, writer] : equality_writers) {
          ARROW_ASSIGN_OR_RAISE(auto file, writer->Close());
          deletes.AddDeleteFile(std::move(file));
        }
        equality_writers.clear();
      }
      return Status::OK();
    }();
    for (auto& [k, w] : equality_writers) (void)w->Abort();
    result.delete_files = static_cast<int64_t>(deletes.written.size());
    return st;
  });
  // Position deletes name data files: they must still be live when the commit lands.
  update.AddValidation([&](const CommitBase& base) -> Status {
    ARROW_ASSIGN_OR_RAISE(auto live, base.live_data_files());
    for (const auto& path : scanned) {
      if (!live->count(path)) return CommitConflict("data file {} was removed by a concurrent commit", path);
    }
    return Status::OK();
  });
  auto committed = update.Commit();
  if (!committed.ok()) return WithContext(committed.status(), "deleting from " + table->name());
  if (committed->skipped) return DeleteWhereResult{};
  result.snapshot_id = committed->snapshot_id;
  return result;
}

}  // namespace

// The attempt's files are recorded before they are written (table/pending_files.h), so a crash
// leaves nothing the next writer cannot clean up. Conflicts are retried by the one commit loop
// (SnapshotUpdate::Commit), which resolves positions again on the new base.
Result<DeleteWhereResult> DeleteWhere(const std::shared_ptr<Table>& table, const DeleteWhereOptions& options) {
  ARROW_RETURN_NOT_OK(BeginWriteAttempt(*table));
  auto result = DeleteWhereAttempt(table, options);
  EndWriteAttempt(*table, result.status());
  return result;
}

}  // namespace lakesync::table
