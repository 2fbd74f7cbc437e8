// One apply, taken apart so that its steps can run in different processes (the Beam transforms in
// python/lakesync/beam, docs/scale-out.md) or, later, on different threads. CdcWriter::Apply runs the
// same steps one after another in one process; nothing here is a second implementation:
//
//   1. prepare (driver):   CdcWriter::Prepare — create the table if needed, pin its current
//                          metadata (ApplyTarget), check the exactly-once position.
//   2. stage (per shard):  CdcWriter::Stage — collapse one key shard's changes, write its data files
//                          (and equality deletes), resolve its keys to positions in the pinned state.
//                          All changes of a key must reach the same shard (plan/key_shards.h).
//   3. write deletes (per data file group): MergePositions + WriteDeletes — the positions the shards
//                          found, merged per data file, written as one deletion vector per data file
//                          (v3, merged with its current vector) or position delete files (v2).
//   4. commit (once per table): CommitFiles — one snapshot with every file, the same summary
//                          progress tokens as `lakesync run` (lakesync.sink-id,
//                          lakesync.source-position.<sink_id>), validated against concurrent commits.
//
// Everything crossing a process boundary has a JSON form (content files as
// iceberg/model/content_file_json.h; positions as portable Roaring64 bytes, hex in JSON).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/schema_update.h"
#include "lakesync/plan/change_collapser.h"
#include "lakesync/sink/sink_config.h"
#include "lakesync/table/row_deletes.h"
#include "lakesync/table/table.h"

namespace lakesync::sink {

// The destination of a distributed apply, pinned to one table state.
struct ApplyTarget {
  std::string table;                       // "ns.table"
  std::string metadata_location;           // the state every step resolves against
  std::optional<int64_t> snapshot_id;      // its current snapshot (none for an empty table)
  std::vector<std::string> key_columns;    // merge-on-read: the equality columns (shard by these)
  bool created = false;                    // Prepare created the table
  bool skipped = false;                    // the source position is already committed
  std::string message;                     // why it is skipped
  // schema_evolution (docs/jobs.md): the schema Prepare planned from the input, one above the pinned
  // state's. Every shard writes its files with it and the commit makes it current with the snapshot,
  // as CdcWriter::Apply does in one process. Unset: the pinned schema stays.
  std::optional<iceberg::EvolvedSchema> schema;

  nlohmann::json ToJson() const;
  static Result<ApplyTarget> FromJson(const nlohmann::json& json);
};

// Opens the table at the pinned state. Errors: as ReadTableMetadata (NotFound, Corrupt).
Result<std::shared_ptr<table::Table>> OpenPinned(const std::shared_ptr<catalog::Catalog>& catalog,
                                                 const ApplyTarget& target);

// Positions to delete in one data file, as found in the pinned state.
struct PositionsInFile {
  iceberg::DataFilePtr data_file;
  iceberg::DataFilePtr current_dv;  // its live deletion vector then, or null
  puffin::PositionBitmap positions;
};

// What one shard staged: files written but not committed, and positions resolved.
struct StagedShard {
  std::vector<iceberg::DataFile> data_files;
  std::vector<iceberg::DataFile> delete_files;   // equality deletes (delete_strategy equality)
  std::vector<PositionsInFile> positions;        // one entry per data file
  std::set<std::string> resolved_data_files;     // must still be live when committing
  int64_t rows_written = 0;
  int64_t data_bytes = 0;
  int64_t missing_deletes = 0;
  int64_t equality_deleted = 0;                  // keys in equality delete files
  plan::CollapseStats changes;
};

// Delete files written from merged positions.
struct StagedDeletes {
  std::vector<iceberg::DataFile> added;
  std::vector<std::pair<std::string, std::string>> removed;  // replaced vectors {Puffin path, data file}
  int64_t rows_deleted = 0;
};

// JSON forms (metadata: the pinned state, for partition types).
Result<nlohmann::json> StagedShardToJson(const StagedShard& shard, const iceberg::TableMetadata& metadata);
Result<StagedShard> StagedShardFromJson(const nlohmann::json& json, const iceberg::TableMetadata& metadata);
Result<nlohmann::json> StagedDeletesToJson(const StagedDeletes& deletes, const iceberg::TableMetadata& metadata);
Result<StagedDeletes> StagedDeletesFromJson(const nlohmann::json& json, const iceberg::TableMetadata& metadata);

// Step 3: the positions of several shards merged per data file and written as delete files of the
// pinned state (one deletion vector per data file on v3). Every data file must appear in exactly one
// call (group the entries by data file path first), so that no file gets two vectors.
// `written` receives the locations of the files written (for cleanup on failure).
Result<StagedDeletes> WriteDeletes(const std::shared_ptr<table::Table>& pinned,
                                   const std::vector<PositionsInFile>& positions, std::vector<std::string>& written);

// The number of distinct files among content files (deletion vectors share Puffin files): what
// summaries report as delete_files.
size_t DistinctFiles(const std::vector<iceberg::DataFile>& files);

// Step 4: everything one commit adds and removes.
struct FilesToCommit {
  std::vector<iceberg::DataFile> data_files;
  std::vector<iceberg::DataFile> delete_files;
  std::vector<std::pair<std::string, std::string>> removed_deletes;
  std::set<std::string> resolved_data_files;
  // schema_evolution: the schema the files were written with, made current in the same commit.
  std::optional<iceberg::EvolvedSchema> schema;
  // The state `schema` was planned on (a distributed apply's pinned state; unset: the table's current
  // one): a commit on a state whose schema another writer changed since fails rather than replace it.
  iceberg::TableMetadataPtr schema_base;
};

enum class CommitOutcome {
  kCommitted,
  kNothingToDo,       // no files and no position to record
  kAlreadyApplied,    // the position was committed by another writer (or by an earlier try of ours)
};

struct CommitFilesResult {
  CommitOutcome outcome = CommitOutcome::kCommitted;
  std::optional<int64_t> snapshot_id;
  int attempts = 0;
  std::string message;
  // kAlreadyApplied only: whether our own data files are live in the table, i.e. the position was
  // committed by an earlier try of this very commit (a retried Beam bundle): its files must be kept.
  bool files_are_live = false;
};

// Position deletes resolved against the state a commit attempt is made on: the snapshot update's
// one retry loop calls it on the first attempt and again on the refreshed table after a conflict
// (CdcWriter::Finish, where resolving and committing run in one process). It writes the delete files
// into `deletes` (which the loop deletes if the attempt fails) and names the data files its positions
// are in (`resolved`, validated live like FilesToCommit::resolved_data_files).
using ResolveAttempt = std::function<Status(table::AttemptDeletes& deletes, std::set<std::string>& resolved)>;

// Commits the files to `table` (its current state; the table is refreshed on conflicts by the
// snapshot update's own retries) with the sink's snapshot properties and progress tokens, validating
// that no other writer committed `position` for the sink first and that every resolved data file is
// still live (and, by the snapshot update, that no vector this commit replaces was replaced by
// another). Fixed files (no `resolve`) were resolved against a pinned state: a conflict the
// validations find is final. With `resolve`, positions follow the state of every attempt, so such a
// conflict is retried within the table's commit budget. Never deletes the caller's files.
// Errors: CommitConflict (a resolved file was removed, a vector replaced), CommitStateUnknown, and
// the catalog's errors.
Result<CommitFilesResult> CommitFiles(const std::shared_ptr<table::Table>& table, const FilesToCommit& files,
                                      const SinkConfig& config, const std::optional<std::string>& position,
                                      const ResolveAttempt& resolve = {});

}  // namespace lakesync::sink
