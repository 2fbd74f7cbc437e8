// Deleting rows in merge-on-read style. Rows identified by (data file, position) become deletion
// vectors on v3 tables (one per data file, merged with the file's current vector, which the commit
// removes, so a file never has two live vectors) or position delete files on v2 tables (one per
// partition). Rows identified by key become equality delete files (the opt-in fallback).
#pragma once

#include <arrow/type_fwd.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/formats/puffin/positions_bitmap.h"
#include "lakesync/iceberg/scan/file_scan_task.h"
#include "lakesync/table/snapshot_update.h"

namespace lakesync::table {

// Delete files written for a set of positions, not yet registered with a commit: what a worker of a
// distributed apply hands to the committer.
struct WrittenDeletes {
  std::vector<iceberg::DataFile> added;  // deletion vectors (v3) or position delete files (v2)
  // Deletion vectors the new ones replace (merged into them): {Puffin path, referenced data file}.
  std::vector<std::pair<std::string, std::string>> removed;
};

class PositionDeletes {
 public:
  explicit PositionDeletes(std::shared_ptr<Table> table) : table_(std::move(table)) {}

  // Records that rows of a planned file are deleted. The task names everything that already deletes
  // rows of the file (its vector, or the v2 position delete files an upgraded table left), which the
  // new vector must carry on v3: the preferred form, because nothing has to be read again.
  Status Add(const iceberg::FileScanTask& task, int64_t position);
  Status Add(const iceberg::FileScanTask& task, const puffin::PositionBitmap& positions);
  // The same from a file and its live vector only (positions handed over by another process). When a
  // target was added this way, writing vectors reads the current snapshot's delete manifests once to
  // find v2 position delete files.
  Status Add(const iceberg::DataFilePtr& data_file, const iceberg::DataFilePtr& current_dv, int64_t position);
  Status Add(const iceberg::DataFilePtr& data_file, const iceberg::DataFilePtr& current_dv,
             const puffin::PositionBitmap& positions);

  int64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }

  // Writes the delete files and records them (and the vectors they replace) in `deletes`, with the
  // locations written, so that a failed commit attempt can delete them.
  Status WriteTo(AttemptDeletes& deletes);
  // The same for a commit whose content is fixed: registers the files with `update` and appends the
  // locations written to `written`.
  Status WriteTo(SnapshotUpdate& update, std::vector<std::string>& written);
  // The same files, returned instead of registered (WriteTo is Write plus registering them).
  Result<WrittenDeletes> Write(std::vector<std::string>& written);

  // The positions recorded per data file, for handing them to another process (one entry per data
  // file, in path order). Merging the entries of several PositionDeletes of one table state with
  // Add(data_file, current_dv, positions) gives one vector per data file.
  struct Target {
    iceberg::DataFilePtr data_file;
    iceberg::DataFilePtr current_dv;
    puffin::PositionBitmap positions;
    // The file's live v2 position delete files when known from planning; unset: not known.
    std::optional<std::vector<iceberg::DataFilePtr>> position_delete_files;
  };
  const std::map<std::string, Target>& targets() const { return targets_; }

 private:
  Result<WrittenDeletes> WriteDeletionVectors(std::vector<std::string>& written);
  Result<WrittenDeletes> WritePositionDeleteFiles(std::vector<std::string>& written);
  Target& TargetFor(const iceberg::DataFilePtr& data_file, const iceberg::DataFilePtr& current_dv);
  Status AddPositions(Target& target, const puffin::PositionBitmap& positions);
  Status AddPosition(Target& target, int64_t position);

  std::shared_ptr<Table> table_;
  std::map<std::string, Target> targets_;  // by data file path
  int64_t count_ = 0;
};

enum class DeleteMode { kPosition, kEquality };

struct DeleteWhereOptions {
  std::string filter;  // rows to delete (required; "true" deletes everything)
  DeleteMode mode = DeleteMode::kPosition;
  std::vector<std::string> equality_columns;  // kEquality: default the table's identifier fields
};

struct DeleteWhereResult {
  int64_t deleted_rows = 0;
  int64_t delete_files = 0;
  std::optional<int64_t> snapshot_id;  // none when nothing matched
};

// Deletes the rows matching a filter without rewriting data files.
Result<DeleteWhereResult> DeleteWhere(const std::shared_ptr<Table>& table, const DeleteWhereOptions& options);

// The table's data directory (write.data.path or <location>/data).
std::string DataLocation(const iceberg::TableMetadata& metadata);

}  // namespace lakesync::table
