// A file scan task (spec "Scan Planning"): one live data file of a snapshot with the delete files
// that apply to it by the sequence-number rules. Planning (table/scan_planner.cc) makes them; the
// data-file reader (data_file_reader.h) reads them. A task is an independent unit of work: it holds
// everything needed to read its rows.
#pragma once

#include <cstdint>
#include <vector>

#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/scan/equality_deletes.h"

namespace lakesync::iceberg {

struct FileScanTask {
  DataFilePtr file;
  int64_t data_sequence_number = 0;
  DataFilePtr deletion_vector;                // at most one: applies when seq(file) <= seq(DV)
  std::vector<DataFilePtr> position_deletes;  // v2 position delete files (never with a DV)
  std::vector<DataFilePtr> equality_deletes;  // seq(file) < seq(delete), same partition or global
  // The equality deletes of the whole planned snapshot, shared by its tasks: readers probe its key
  // maps (built once per scan) instead of the files of equality_deletes one by one. Null for a task
  // made by hand: its equality_deletes are then read for it alone.
  std::shared_ptr<const EqualityDeleteIndex> equality_index;
};

}  // namespace lakesync::iceberg
