// Resolving keys to row positions: for the keys a commit must remove, find the (data file, position)
// of every live row that holds them, reading only the key columns of the data files that can hold
// them (pruned by key bounds and, when the partition is a function of the key, by partition).
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lakesync/table/row_deletes.h"
#include "lakesync/table/table.h"

namespace lakesync::sink {

struct ResolveStats {
  int64_t keys = 0;           // distinct keys asked for
  int64_t keys_found = 0;     // keys with at least one live row
  int64_t rows_found = 0;     // live rows matched (more than keys_found if a key is duplicated)
  int64_t files_scanned = 0;  // data files whose key columns were read
  int64_t files_pruned = 0;   // data files skipped by bounds or partition
};

struct ResolvedPositions {
  ResolveStats stats;
  // Data files positions were resolved in: the commit must fail (and resolution run again) if a
  // concurrent commit removed any of them.
  std::set<std::string> data_files;
};

// Adds the positions of the live rows whose key columns equal a row of `keys` to `deletes`.
// `keys` holds the key columns (named as in the table; other columns are ignored) with the table's
// Arrow types. Reads the table's current snapshot.
Result<ResolvedPositions> ResolveKeys(const std::shared_ptr<table::Table>& table, const arrow::Table& keys,
                                      const std::vector<std::string>& key_columns, table::PositionDeletes& deletes);

}  // namespace lakesync::sink
