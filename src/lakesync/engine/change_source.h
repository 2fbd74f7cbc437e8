// A source of changes as the job engine sees it: an ordered sequence of commits, each with an
// integer ordinal (a Delta version, an Iceberg snapshot sequence number), read as change streams.
//
// Progress is the ordinal of the last commit applied, recorded by the sink in the target's snapshot
// summary (`lakesync.source-position.<sink_id>`), atomically with the data. A run reads the commits
// after it, up to the latest (or the configured end). Sources never know about sinks.
#pragma once

#include <arrow/record_batch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::engine {

class ChangeSource {
 public:
  virtual ~ChangeSource() = default;

  // "delta table s3://bucket/orders", for messages and the summary line.
  virtual std::string Describe() const = 0;

  // What the source is, however a job file spells it: the table's own unique id where it has one
  // (Iceberg's table-uuid, Delta's metaData.id), else its normalised location. A job's default
  // sink_id derives from it. A table dropped and created again gets a new id — rightly, since its
  // positions (versions, sequence numbers) start again.
  virtual Result<std::string> Identity() { return Describe(); }

  // The source's primary-key columns, where it declares them (Iceberg identifier fields): a target
  // created without equality_columns gets them as its identifier fields.
  virtual std::vector<std::string> IdentifierColumns() const { return {}; }

  // When the commit with this ordinal was made (ms since the epoch), for the time lag; nullopt
  // where the source cannot tell.
  virtual Result<std::optional<int64_t>> CommitTimestampMs(int64_t ordinal) { return std::optional<int64_t>(); }

  // The ordinal of the newest commit the source has now; nullopt for a source without commits.
  virtual Result<std::optional<int64_t>> Latest() = 0;

  // The first ordinal to read when nothing has been committed yet, from the configured start bound
  // (start_version, start_timestamp, from_snapshot, starting_strategy...). nullopt: no commit
  // satisfies it yet (e.g. a start timestamp in the future).
  virtual Result<std::optional<int64_t>> FirstOrdinal() = 0;

  // The configured end bound as an ordinal, if any: runs never read past it.
  virtual Result<std::optional<int64_t>> EndOrdinal() = 0;

  // The ordinal of the first commit after `ordinal` (Delta: ordinal + 1; Iceberg: the next
  // snapshot's sequence number along the main branch); nullopt when there is none yet.
  virtual Result<std::optional<int64_t>> NextAfter(int64_t ordinal) = 0;

  // Changes of the commits with ordinals in [from, through], in commit order: table columns plus
  // the control columns named below. Errors are raised before the first batch where the source can
  // validate the range up front.
  virtual Result<std::shared_ptr<arrow::RecordBatchReader>> ReadChanges(int64_t from, int64_t through) = 0;

  // Schema changes (schema_evolution, docs/jobs.md). The ordinals in (from, through] whose commit
  // changes the schema and where a read must therefore start anew: a run splits its range there and
  // commits each part with its own schema (the Delta change feed is read with one schema). Sources
  // whose reads project every commit to the newest schema (Iceberg's changelog) return none.
  virtual Result<std::vector<int64_t>> SchemaChangesIn(int64_t from, int64_t through) {
    return std::vector<int64_t>{};
  }
  // The columns and struct fields renamed between the schema of the commit `before` and the schema
  // that reads from `at` on produce, old path → new path ("qty" → "amount", "st.a" → "st.b"; a field
  // inside a renamed struct only when its own name changed), matched by the source's stable ids
  // (Iceberg field ids, Delta column-mapping physical names). Empty where the source cannot tell.
  virtual Result<std::map<std::string, std::string>> RenamesSince(int64_t before, int64_t at) {
    return std::map<std::string, std::string>{};
  }

  // The table as of `ordinal`, every row an insert (same control columns), for the initial import.
  virtual Result<std::shared_ptr<arrow::RecordBatchReader>> ReadSnapshot(int64_t ordinal) = 0;

  // The position text recorded for `ordinal` ("12", or "7:5623119..." with the snapshot id).
  virtual std::string PositionText(int64_t ordinal) const { return std::to_string(ordinal); }

  // Control columns of the streams above: the change kind (Delta's or Iceberg's names) and the int64
  // column ordering a key's changes.
  virtual std::string change_type_column() const = 0;
  virtual std::string sequence_column() const = 0;

  // Polling cadence for streaming jobs (seconds), from the source's poll_interval_seconds.
  virtual double poll_interval_seconds() const { return 60; }
};

}  // namespace lakesync::engine
