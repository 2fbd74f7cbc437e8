// The data of the dashboard's table pages, as plain functions of a loaded table that return JSON (no
// HTTP here, so they are tested directly): a catalog overview row from the metadata alone, and a
// table's health from its current snapshot's manifests (files, deletes, partitions, file sizes, the
// compaction hint), its snapshots and its schemas. docs/ui.md documents every field.
#pragma once

#include <nlohmann/json.hpp>

#include "lakesync/table/table.h"

namespace lakesync::ui {

// The thresholds of the "needs compaction" hint: Apache Iceberg's rewrite_data_files options and their
// defaults, so the hint means what Iceberg's own compaction would act on.
struct CompactionThresholds {
  // A data file is small below this share of the table's write.target-file-size-bytes (Iceberg's
  // min-file-size-bytes default: 75 %).
  double min_file_size_ratio = 0.75;
  // Small files are worth rewriting once a partition has at least this many (min-input-files).
  int64_t min_input_files = 5;
  // A data file with at least this share of its rows deleted is worth rewriting (delete-ratio-threshold).
  double delete_ratio_threshold = 0.3;
  // A data file with at least this many delete files applying to it is worth rewriting
  // (delete-file-threshold; Iceberg leaves it unbounded by default, 2 position delete files per data
  // file already double the files a reader opens).
  int64_t delete_file_threshold = 2;
};

struct TableHealthOptions {
  CompactionThresholds compaction;
  size_t max_snapshots = 1000;   // the newest ones are shown; older ones are counted
  size_t max_partitions = 1000;  // the largest by bytes
};

// A snapshot id as the API gives it: a string (JavaScript numbers would round a 64-bit id), or null.
nlohmann::json SnapshotIdJson(std::optional<int64_t> id);

// One row of the catalog overview: name, format version, rows (live, once deletes apply), records,
// files, bytes, the last commit and the sink ids with progress in the table. Reads no manifest.
nlohmann::json TableOverview(const table::Table& table);

// Everything the table page shows. Reads the current snapshot's manifest list and manifests.
// Errors: those of reading them, naming the table and file.
Result<nlohmann::json> TableHealth(const std::shared_ptr<table::Table>& table, const TableHealthOptions& options = {});

}  // namespace lakesync::ui
