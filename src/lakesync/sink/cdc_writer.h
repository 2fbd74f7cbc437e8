// The Iceberg sink: applies a change stream (Arrow batches: table columns plus control columns) to one
// or more Iceberg tables, one atomic commit per destination table.
//
// merge-on-read: each key's changes are collapsed (plan/change_collapser.h); final after-images are
// written as data files; keys that may already exist are resolved to (data file, position) and
// deleted with deletion vectors (v3) or position delete files (v2) — or, with delete_strategy
// equality, with equality delete files in the partition of the key's before-image (keys without one
// that tells the partition, i.e. key-only deletes and after-images without a before-image on tables
// partitioned by other columns, are resolved to positions, since an equality delete in the wrong
// partition deletes nothing). append: rows are appended as they come.
//
// Exactly-once: every commit records `lakesync.sink-id` and `lakesync.source-position.<sink_id>` in
// its snapshot summary, atomically with the data. A batch whose source position is at or below the
// position already committed for the sink is skipped with a message saying so; a concurrent writer
// that commits the same position first makes ours a skip too. Positions are "<ordinal>[:<label>]"
// and compare by the integer ordinal (a Delta version, an Iceberg snapshot sequence number).
#pragma once

#include <arrow/type_fwd.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/catalog.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/plan/change_collapser.h"
#include "lakesync/sink/schema_evolution.h"
#include "lakesync/sink/sink_config.h"
#include "lakesync/table/table.h"

namespace lakesync::sink {

inline constexpr char kSummarySinkId[] = "lakesync.sink-id";
inline constexpr char kSummarySourcePositionPrefix[] = "lakesync.source-position.";

struct SourcePosition {
  int64_t ordinal = 0;
  std::string text;  // as given, recorded verbatim
};
// Errors: InvalidArgument naming the text when it does not start with a non-negative integer.
Result<SourcePosition> ParseSourcePosition(std::string_view text);

// The newest position committed for `sink_id` on the table's main lineage, if any.
Result<std::optional<SourcePosition>> CommittedPosition(const iceberg::TableMetadata& metadata,
                                                        const std::string& sink_id);

// After a commit whose outcome is unknown: reloads the table and returns the snapshot on its main
// lineage whose summary records `position` for `sink_id` (the commit landed), or nullopt.
Result<std::optional<int64_t>> FindCommittedPosition(table::Table& table, const std::string& sink_id,
                                                    const std::string& position);

struct TableApplyResult {
  std::string table;
  bool created = false;
  bool skipped = false;        // already applied (exactly-once) or nothing to do
  std::string message;         // why it was skipped, for users
  std::optional<int64_t> snapshot_id;
  int64_t rows_written = 0;    // data rows in new data files
  int64_t rows_deleted = 0;    // live rows removed (positions), or equality-deleted keys
  int64_t missing_deletes = 0; // keys to remove that did not exist (counted, not errors)
  int64_t data_files = 0;
  int64_t delete_files = 0;
  int64_t data_bytes = 0;
  int attempts = 0;
};

// The result for one table as JSON (table, created, skipped, rows_written, rows_deleted,
// missing_deletes, data_files, delete_files, data_bytes, commit_attempts, snapshot_id, message), for
// the summary lines of `lakesync apply --json` and `lakesync run`.
nlohmann::json TableApplyResultToJson(const TableApplyResult& result);

struct ApplyResult {
  std::vector<TableApplyResult> tables;
  plan::CollapseStats changes;  // summed over destinations
  int64_t dead_letters = 0;
  std::string dead_letter_location;  // where they were written, if any
};

// The summary of one apply as JSON (tables, changes, dead_letters, dead_letter_location,
// duration_seconds): `lakesync apply --json` and the Python package's apply() print the same.
nlohmann::json ApplyResultToJson(const ApplyResult& result, double seconds);

struct ApplyOptions {
  std::optional<std::string> source_position;  // recorded with the commit; skips batches already applied
  std::string source_name = "changes";         // names the input in messages
  // Where the input row with this 0-based ordinal (counting every row the reader returned) comes from:
  // the input's name (a file) and the number of rows of that input before it, so that errors name
  // the row as the user counts it. Unset: source_name and the ordinal itself.
  std::function<std::pair<std::string, int64_t>(int64_t)> locate_input_row;
  // Whether the table's schema follows the input's (sink/schema_evolution.h): with kAdditive, new
  // columns, widened types and `column_renames` (old → new names, as the source reports them) change
  // the table's schema in the same commit as the data. A distributed apply plans the change in
  // Prepare (ApplyTarget::schema); Stage ignores the option and writes with the target's schema.
  SchemaEvolution schema_evolution = SchemaEvolution::kNone;
  std::map<std::string, std::string> column_renames;
};

struct ApplyTarget;
struct StagedShard;

class CdcWriter {
 public:
  // Errors: InvalidArgument for options that contradict each other for this writer.
  static Result<std::unique_ptr<CdcWriter>> Make(std::shared_ptr<catalog::Catalog> catalog, SinkConfig config);
  ~CdcWriter();

  // Reads every batch, then commits once per destination. On error nothing is committed for the
  // destinations not yet committed and their files are deleted (see the class comment for routing).
  // With a table template and a catalog that commits several tables atomically
  // (SupportsMultiTableCommit: SQL, REST servers offering transactions/commit), every destination
  // commits in one transaction at the end. A commit with an unknown outcome keeps its files; the
  // table is reloaded and the commit counts as made when a snapshot carries the source position.
  Result<ApplyResult> Apply(arrow::RecordBatchReader& changes, const ApplyOptions& options);

  // A distributed apply's steps (sink/staged_apply.h), for one destination table (no template).
  //
  // Prepare: creates the table from `input_schema` if it does not exist, and pins its current state.
  // With options.source_position already committed for the sink, the target says `skipped`.
  // Errors: as Apply's, before reading anything; Unsupported for sink options a distributed apply
  // does not offer (table templates, `only`, error_handling).
  Result<ApplyTarget> Prepare(const std::shared_ptr<arrow::Schema>& input_schema, const ApplyOptions& options);
  // Stage: applies one key shard's changes to the pinned state without committing: collapses them,
  // writes the data files (and equality deletes) and resolves the keys to remove to positions. The
  // changes must carry the sequence column (arrival order means nothing across shards).
  // On error the files it wrote are deleted.
  Result<StagedShard> Stage(arrow::RecordBatchReader& changes, const ApplyTarget& target,
                            const ApplyOptions& options);

  const SinkConfig& config() const { return config_; }

 private:
  CdcWriter(std::shared_ptr<catalog::Catalog> catalog, SinkConfig config);
  struct Destination;
  // Files written for one destination before anything depends on the table state.
  struct StagedRows {
    std::vector<iceberg::DataFile> data_files;
    std::vector<iceberg::DataFile> equality_files;
    std::shared_ptr<arrow::Table> position_deletes;  // delete images to resolve to positions, or null
    int64_t rows_written = 0;
    int64_t data_bytes = 0;
    int64_t equality_deleted = 0;
  };
  Result<Destination*> DestinationFor(const std::string& name, const std::shared_ptr<arrow::Schema>& input_schema,
                                      const ApplyOptions& options);
  Status Route(const std::shared_ptr<arrow::RecordBatch>& batch, const ApplyOptions& options);
  Result<StagedRows> StageRows(Destination& destination, const ApplyOptions& options);
  // The input name and rows before the batch being routed, for ConformBatch's messages.
  std::pair<std::string, int64_t> InputRow(const ApplyOptions& options, bool contiguous) const;
  Result<TableApplyResult> Finish(Destination& destination, const ApplyOptions& options);
  // schema_evolution: plans the destination's new schema from the input (sink/schema_evolution.h).
  Status EvolveFor(Destination& destination, const arrow::Schema& input_schema,
                   const std::vector<std::string>& input_columns, const ApplyOptions& options);
  Status CheckDistributable() const;

  std::shared_ptr<catalog::Catalog> catalog_;
  int64_t batch_first_row_ = 0;  // input rows before the batch being routed
  SinkConfig config_;
  std::vector<std::unique_ptr<Destination>> destinations_;
  const ApplyTarget* pinned_ = nullptr;  // Stage: destinations open this state, never create
  bool evolution_allowed_ = false;       // inside Apply only: its commit carries the schema change
};

}  // namespace lakesync::sink
