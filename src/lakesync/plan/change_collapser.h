// Collapses one commit's change stream to the final state per key (merge-on-read planning, spec
// beam-compat.md §4.3): which rows to write and which keys to delete. No table I/O happens here; the
// only files touched are spill files in a private temporary directory when the changes outgrow the
// memory limit.
//
// Semantics. Each input row is a change of the key formed by `key_columns`. A key's changes are
// ordered by (sequence, kind rank) with UPDATE_BEFORE < DELETE < UPDATE_AFTER < INSERT for equal
// sequence numbers; rows with equal (sequence, rank) keep their input order. Then, per key:
//  - the last change decides what is written: INSERT or UPDATE_AFTER writes that change's row,
//    DELETE or UPDATE_BEFORE writes nothing (a before-image without an after-image deletes);
//  - the key needs a delete (it may exist in the table before this commit) unless its first change
//    is an INSERT (the key is born in this commit); with `upsert` every key gets a delete.
//  A key inserted and deleted in the same commit therefore produces nothing at all.
// Deliberate differences from Apache Beam's Iceberg CDC sink:
//  - a key whose changes are only UPDATE_AFTERs gets a delete here (Beam skips it, which leaves the
//    old row alive when a source emits after-images without before-images);
//  - as in Beam (and the spec), `upsert` drops UPDATE_BEFORE rows before collapsing (they are counted
//    in `update_befores` and `collapsed_away`); DELETE rows still delete.
//
// Invalid rows (null key value, null sequence, null or unknown change code) fail `Add` with a message
// naming the source, the 1-based row number across all `Add` calls and the column; with `dead_letter`
// they are kept in `dead_letters()` with the reason instead. No row is ever dropped silently:
// changes == inserts + update_befores + update_afters + deletes + dead_letters.
//
// Memory. Buffered changes are counted with Arrow's buffer sizes. Above `memory_limit_bytes` they are
// hash-partitioned by key into Arrow IPC files (a fresh directory below `spill_directory`), and so
// are later changes. `NextPart` then collapses one bucket at a time; a bucket still larger than the
// limit is split again with another hash seed. With `delete_image_columns`, reaching the limit first
// narrows the buffered UPDATE_BEFORE and DELETE rows to the key, the delete image columns, sequence and
// kind (they are never written, and their images need only those), and spills only if the changes
// still do not fit; from then on both kinds of rows are kept (and spilled) side by side, full rows and
// narrow rows, and collapsed together. The one limit: all changes of a single key are always
// collapsed together in memory, however many there are. Collapsing a part needs about twice the
// part's size (a concatenated copy plus the sort indices) besides the output. Dead letters stay in
// memory and are not counted against the limit.
//
// Key shards (parallel collapsing). After the last Add, TakeShards splits the changes into independent
// slices of the key space by the key-shard hash (plan/key_shards.h), which callers collapse on
// different threads and consume in shard order. The number of shards depends only on the input and
// the memory limit, never on the thread count, so what is written is the same for every thread count:
//   target = min(32 MiB, memory_limit_bytes / 4)
//   shards = the smallest power of two ≥ buffered bytes / target, at most 32
// (buffered bytes: the changes in memory, or the first spill's files when spilled). Each shard gets
// memory_limit_bytes / shards: a spilled bucket above it is split again before it is collapsed, so
// shards in flight together hold at most memory_limit_bytes of changes (each collapse needs about
// twice its bucket, as above), whatever the number of threads.
//
// A collapser serves one commit of one table and is not thread-safe; its shards may each be used on
// a thread of their own, but must not outlive the collapser.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/change/change_kind.h"
#include "lakesync/common/status.h"

namespace lakesync::plan {

struct CollapseOptions {
  // Equality columns: top-level input columns, at least one, each also in `output_columns`. Any
  // primitive type except float/double (Iceberg forbids them as identifier fields): integers, bool,
  // date, time, timestamp, decimal, string, binary, fixed (uuid extension too); dictionary-encoded
  // columns of those are decoded. Several columns form a composite key.
  std::vector<std::string> key_columns;
  // Orders one key's changes: any integer type (widened to int64), non-null per row.
  std::string sequence_column = change::kDefaultSequenceColumn;
  // String column of change codes, mapped by `mapper`; absent means every row is an INSERT.
  std::optional<std::string> change_type_column;
  change::ChangeKindMapper mapper;
  bool upsert = false;
  // The table's columns in table order: what `rows` and `deletes` hold. Must not name the sequence or
  // change type column. Empty means every input column except those two (other control columns such
  // as _commit_version would then be kept, so the writer should pass the table's columns).
  std::vector<std::string> output_columns;
  // The output columns a delete image must carry besides the key columns (e.g. the partition source
  // columns an equality delete needs); absent: every output column. Delete images then hold nulls in
  // the other columns, and that lets the collapser keep UPDATE_BEFORE and DELETE rows (which are
  // never written) in this narrow form once the changes outgrow memory_limit_bytes, before it spills
  // ("Memory" above). Nested columns are always kept. The rule of which change wins is unchanged.
  std::optional<std::vector<std::string>> delete_image_columns;
  int64_t memory_limit_bytes = 100LL << 20;  // sorter_memory_mb
  // Parent of the spill directory, which is created on the first spill and removed when done or on
  // destruction. Empty means the system temporary directory.
  std::string spill_directory;
  bool dead_letter = false;  // invalid rows go to dead_letters() instead of failing Add
  std::string source_name;   // names the input in messages, e.g. "changes.parquet"
};

struct CollapseStats {
  int64_t changes = 0;         // input rows seen by successful Adds
  int64_t inserts = 0;         // valid rows per kind
  int64_t update_befores = 0;
  int64_t update_afters = 0;
  int64_t deletes = 0;
  int64_t keys = 0;            // distinct keys collapsed (filled by NextPart)
  int64_t rows_to_write = 0;   // rows in all parts' `rows`
  int64_t keys_to_delete = 0;  // rows in all parts' `deletes`
  int64_t collapsed_away = 0;  // valid changes that were not written as a row
  int64_t dead_letters = 0;
  int64_t spilled_bytes = 0;   // bytes written to spill files (re-splits included)

  // Sums every counter: the totals of a run made of parts, shards or destinations.
  CollapseStats& operator+=(const CollapseStats& o) {
    changes += o.changes;
    inserts += o.inserts;
    update_befores += o.update_befores;
    update_afters += o.update_afters;
    deletes += o.deletes;
    keys += o.keys;
    rows_to_write += o.rows_to_write;
    keys_to_delete += o.keys_to_delete;
    collapsed_away += o.collapsed_away;
    dead_letters += o.dead_letters;
    spilled_bytes += o.spilled_bytes;
    return *this;
  }
};
// A new counter must be added to operator+= too.
static_assert(sizeof(CollapseStats) == 11 * sizeof(int64_t), "CollapseStats::operator+= sums every counter");

// One independent slice of the key space: all changes of a key are in exactly one part.
struct CollapsedPart {
  // Final after-images to write: output columns in table order, one row per written key.
  std::shared_ptr<arrow::Table> rows;
  // One row per key that must be removed if it already exists, with the output columns holding the
  // "delete image": the key's first change when that is an UPDATE_BEFORE or DELETE (its old values,
  // e.g. the partition it lived in), else its last change. With CollapseOptions::delete_image_columns
  // only the key, those columns and nested columns hold the image's values; the others are null.
  std::shared_ptr<arrow::Table> deletes;
  // One flag per row of `deletes`: true when its image is the key's old row (the first change was an
  // UPDATE_BEFORE or DELETE), false when it is the key's last change because no before-image was given;
  // such an image's values (its partition, say) need not be those of the row it replaces.
  std::vector<bool> delete_is_old_image;
};

class ChangeCollapser;

// One key shard of a collapser's changes (ChangeCollapser::TakeShards): all changes of its keys and no
// others. Not thread-safe itself; different shards of one collapser may be used at the same time.
class CollapseShard {
 public:
  ~CollapseShard();
  CollapseShard(const CollapseShard&) = delete;
  CollapseShard& operator=(const CollapseShard&) = delete;

  // The shard's next collapsed part; nullopt when done. Errors: as ChangeCollapser::NextPart.
  Result<std::optional<CollapsedPart>> NextPart();
  // What this shard's parts added: keys, rows_to_write, keys_to_delete, collapsed_away and the bytes
  // of its re-splits (spilled_bytes). ChangeCollapser::stats() includes them.
  const CollapseStats& stats() const;
  int32_t index() const;  // its shard number, in [0, count())
  int32_t count() const;  // how many key shards the changes were split into (empty ones included)

  // Made by ChangeCollapser only (Impl is private to it).
  class Impl;
  explicit CollapseShard(std::unique_ptr<Impl> impl);
  Impl* impl() const { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

class ChangeCollapser {
 public:
  // Errors: InvalidArgument naming the column when a key, sequence, change type or output column is
  // missing, duplicated, nested or of the wrong type, or when the options contradict each other.
  static Result<std::unique_ptr<ChangeCollapser>> Make(std::shared_ptr<arrow::Schema> input_schema,
                                                       CollapseOptions options);
  ~ChangeCollapser();
  ChangeCollapser(const ChangeCollapser&) = delete;
  ChangeCollapser& operator=(const ChangeCollapser&) = delete;

  // Buffers one batch of changes (input schema; field metadata may differ); may spill to disk.
  // Errors: InvalidArgument for a batch with another schema or, without dead_letter, for invalid rows
  // (the whole batch is then rejected and nothing of it is kept); IOError when spilling fails;
  // InvalidArgument after the first NextPart.
  Status Add(const std::shared_ptr<arrow::RecordBatch>& changes);

  // The next collapsed part, after the last Add; nullopt when all parts were returned. Parts with
  // neither rows nor deletes are skipped, so a commit without changes yields no part.
  // Errors: IOError/Corrupt reading spill files; errors of Arrow's compute kernels with context.
  // Parts come shard by shard (TakeShards), in shard order. Do not mix with TakeShards.
  Result<std::optional<CollapsedPart>> NextPart();

  // Ends adding and returns the non-empty key shards in shard order (see "Key shards" above); empty
  // when there are no changes to collapse. Errors: IOError finishing the spill files; InvalidArgument
  // when called twice or after NextPart.
  Result<std::vector<std::shared_ptr<CollapseShard>>> TakeShards();

  // Counters; keys, rows_to_write, keys_to_delete and collapsed_away grow as parts are returned (by
  // NextPart or by the shards'). Not while shards are being collapsed on other threads.
  CollapseStats stats() const;
  // Schema of `rows` and `deletes`.
  const std::shared_ptr<arrow::Schema>& output_schema() const;
  // Rows that could not be applied: every input column in its input type plus an "_error" string
  // naming the row and the reason. Empty (with that schema) when there were none.
  std::shared_ptr<arrow::Table> dead_letters() const;

 private:
  class Impl;
  explicit ChangeCollapser(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lakesync::plan
