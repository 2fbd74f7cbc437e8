// Equality deletes of one snapshot, indexed the way readers apply them (spec "Scan Planning"): an
// equality delete file E applies to a data file D when seq(D) < seq(E) (data sequence numbers,
// strictly) and E is global (its spec is unpartitioned) or has D's spec id and partition values.
//
// Planning adds the snapshot's equality delete files and matches each data file against them (the
// file-level form of the rule: a task's list of the delete files that apply to it). Reading uses the
// row-level form: per scope (the global scope, or one spec id + partition tuple) and per set of
// equality field ids ONE map, key → the highest data sequence number of a delete file holding that
// key, built once per index (that is, once per planned scan) and shared read-only by every task of
// the scan; a row of a data file with data sequence number s is deleted iff map[key] > s. That is
// the same as "some delete file that applies to the file holds the key", at one probe per row and
// map, however many equality-delete commits the table has piled up. Both forms call
// EqualityDeleteApplies, the rule's one place.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/key_columns.h"

namespace lakesync::iceberg {

// The spec's sequence-number rule for equality deletes: a delete with data sequence number
// `delete_sequence_number` applies to data with `data_sequence_number` when the data is strictly
// older (a row and its equality delete committed together: the row stays).
// The same rule as a bound, for probing a whole batch at once (KeySequenceMap::ClearAbove): a delete
// applies to data with `data_sequence_number` exactly when its number is above this.
inline int64_t HighestSequenceNotApplying(int64_t data_sequence_number) { return data_sequence_number; }
inline bool EqualityDeleteApplies(int64_t data_sequence_number, int64_t delete_sequence_number) {
  return delete_sequence_number > HighestSequenceNotApplying(data_sequence_number);
}

struct SequencedDeleteFile {
  int64_t sequence_number = 0;  // the delete file's data sequence number
  DataFilePtr file;
};

// The keys of the equality delete files of one scope with one set of equality field ids.
struct EqualityKeyMap {
  std::vector<int32_t> field_ids;  // top-level field ids, ascending (the key columns' order)
  KeySequenceMap keys;             // key → the highest sequence number of a file holding it
  // A row whose key maps to s' is deleted in data with sequence number s iff
  // EqualityDeleteApplies(s, s') (DeleteFilter::MarkDeleted).
};

class EqualityDeleteIndex {
 public:
  EqualityDeleteIndex() = default;
  EqualityDeleteIndex(const EqualityDeleteIndex&) = delete;
  EqualityDeleteIndex& operator=(const EqualityDeleteIndex&) = delete;

  // Planning: adds a live equality delete file; `global` when its spec is unpartitioned.
  void Add(SequencedDeleteFile file, bool global);
  // Planning: the delete files that apply to `data` (data sequence number `seq`), in the order they
  // were added. Marks them used: files no data file uses are left out of the key maps.
  std::vector<DataFilePtr> Match(const DataFile& data, int64_t seq);
  bool empty() const { return scopes_.empty(); }

  // Reads a group's files into one map (DeleteLoader::BuildEqualityKeyMap).
  using BuildFn = std::function<Result<std::shared_ptr<const EqualityKeyMap>>(
      const std::vector<int32_t>& field_ids, const std::vector<SequencedDeleteFile>& files)>;

  // Reading: the key maps that may apply to `data` with data sequence number `seq` (its partition's
  // scope and the global one; not those whose files are all too old for it), one per set of equality
  // field ids, each built with `build` on first use and kept. Safe to call from
  // several threads: one builds a map while the others wait for it. A build on a pool thread reads
  // its files inline (OrderedStream does on pool threads), so pool threads waiting for it never hold
  // it up; a build off the pool (a scan's consumer thread, which plans each task before its units
  // run: task_units.h) uses the pool while no pool thread can be waiting for the same map.
  Result<std::vector<std::shared_ptr<const EqualityKeyMap>>> KeyMapsFor(const DataFile& data, int64_t seq,
                                                                       const BuildFn& build) const;

 private:
  struct Group {
    std::vector<SequencedDeleteFile> files;
    std::vector<bool> used;
    int64_t max_used_sequence = 0;  // the highest sequence number of a used file
    mutable std::mutex mutex;
    mutable std::shared_ptr<const EqualityKeyMap> map;
  };
  // Scope ("" global, else PartitionTupleKey) → sorted field ids → files.
  using Scope = std::map<std::vector<int32_t>, std::unique_ptr<Group>>;
  const Scope* FindScope(const std::string& key) const;

  std::map<std::string, Scope> scopes_;
};

}  // namespace lakesync::iceberg
