// The one reader of Iceberg data files (shaped like iceberg-cpp's FileScanTaskReader): a file scan
// task in, Arrow batches of the projected table schema out, with the task's deletes either applied
// (deleted rows dropped) or reported as a live-row mask. Scans (table/), the changelog
// (iceberg/changelog/, a mask per table state) and the sink's key → position resolution (sink/) all
// read data files through it.
//
// Projection follows the spec's "Column Projection" rules: columns are matched by field id; files
// written without field ids through the table's name mapping (`schema.name-mapping.default`); a field
// the file does not hold reads as the data file's identity partition value, else as its v3
// `initial-default`, else as null (a required field with none of these is an error naming the file
// and the column); the type promotions the spec allows are applied (int → long, float → double,
// decimal precision, and on v3 tables date → timestamp); nested structs, lists and maps are matched
// field by field, missing or reordered sub-fields included (formats/parquet/parquet_data_reader.h).
//
// A task is an independent unit of work: a reader holds only its own file's state and shares with
// the other tasks of a scan only the ScanContext, whose delete loader is safe for concurrent use, so
// tasks can be read on separate threads and their batches emitted in task order.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/iceberg/model/name_mapping.h"
#include "lakesync/iceberg/expr/expression.h"
#include "lakesync/iceberg/model/table_metadata.h"
#include "lakesync/iceberg/scan/delete_filter.h"
#include "lakesync/iceberg/scan/file_scan_task.h"
#include "lakesync/io/file_io.h"

namespace lakesync::iceberg {

// Metadata columns a reader can add after the table columns.
inline constexpr char kFileColumn[] = "_file";  // the data file's path (string)
inline constexpr char kPosColumn[] = "_pos";    // the row's position in its data file (long)
// v3 row lineage (spec "Row Lineage"): reserved field ids. A data file may store them as columns
// (a rewrite copies them: maintenance/compact.cc); where a file has none or a value is null, the row
// inherits: _row_id = the file's first_row_id + _pos, _last_updated_sequence_number = the file's
// data sequence number. Null where nothing is inherited (tables before v3, files without first_row_id).
inline constexpr char kRowIdColumn[] = "_row_id";
inline constexpr int32_t kRowIdFieldId = 2147483540;
inline constexpr char kLastUpdatedSequenceNumberColumn[] = "_last_updated_sequence_number";
inline constexpr int32_t kLastUpdatedSequenceNumberFieldId = 2147483539;
// The two as optional long fields (for writers that store them, and for readers).
std::vector<NestedField> RowLineageFields();

// What every task of one scan shares: immutable, except the delete loader's guarded caches.
struct ScanContext {
  std::shared_ptr<io::FileIO> io;
  SchemaPtr schema;                                 // the table schema the scan reads with
  std::map<int32_t, PartitionSpecPtr> specs;        // the table's partition specs by id
  std::shared_ptr<const NameMapping> name_mapping;  // schema.name-mapping.default, or null
  int format_version = 2;
  std::shared_ptr<DeleteLoader> deletes;            // delete files, loaded once per scan

  // Errors: Corrupt naming the property when `schema.name-mapping.default` is malformed.
  static Result<std::shared_ptr<const ScanContext>> Make(std::shared_ptr<io::FileIO> io,
                                                         const TableMetadata& metadata, SchemaPtr schema);
};

struct DataFileReadOptions {
  // Top-level field ids of the output, in output order; empty: every field of the context schema.
  std::vector<int32_t> columns;
  // Rows must match this filter (bound to the context schema); its columns are read even when they
  // are not output.
  BoundExpr filter = BoundExpr::AlwaysTrue();
  enum class Deletes {
    kApply,  // deleted and filtered-out rows are dropped
    kMask,   // every row comes out, with a live mask per delete state
  };
  Deletes deletes = Deletes::kApply;
  // The delete states to apply (kApply: at most one) or report (kMask), e.g. the changelog's before
  // and after states of one file. Empty: the task's own deletes, as one state.
  std::vector<std::shared_ptr<const DeleteFilter>> delete_states;
  bool with_file_and_pos = false;  // append _file and _pos
  bool with_row_lineage = false;   // then append _row_id and _last_updated_sequence_number
  bool uuid_extension = false;     // uuid columns as arrow.uuid (output that should say "uuid")
  int64_t batch_rows = 64 * 1024;
  bool use_threads = false;        // decode (and copy) a batch's columns in parallel
  std::optional<std::vector<int>> row_groups;  // read only these row groups of the file
};

struct DataFileBatch {
  std::shared_ptr<arrow::RecordBatch> batch;  // the output columns (then _file, _pos)
  // The file position of the batch's first row. With kMask the batch's rows are consecutive.
  int64_t first_row_position = 0;
  // kMask: one bitmap per delete state, a bit set where the row is live in that state and matches
  // the filter; null when every row is.
  std::vector<std::shared_ptr<arrow::Buffer>> live;
};

// How a reader's decoded batches get their deletes, filter and projection (immutable, shared).
struct DataFileProcessing;

// A batch decoded from a data file, its deletes, filter and projection not yet applied: Finish() may
// run on any thread, also after the reader is gone, so a caller can finish one batch on the pool while
// the reader decodes the next (DataFileReader::NextDecoded).
struct DecodedDataFileBatch {
  parquet_io::DecodedBatch decoded;
  std::shared_ptr<const DataFileProcessing> processing;

  // What Next() returns for this batch; nullopt when kApply dropped all its rows.
  Result<std::optional<DataFileBatch>> Finish() const;
};

class DataFileReader {
 public:
  // Errors: Unsupported for a data file that is not Parquet; those of the delete loader and of
  // ParquetDataReader::Open (Corrupt for a file that is not Parquet, InvalidArgument for a column
  // that cannot be read as its type or a required column without a value), all naming the file.
  static Result<std::unique_ptr<DataFileReader>> Open(std::shared_ptr<const ScanContext> context,
                                                      const FileScanTask& task, DataFileReadOptions options);
  ~DataFileReader();

  // The schema of the batches (output columns, then _file and _pos when asked for).
  const std::shared_ptr<arrow::Schema>& schema() const;
  const std::string& path() const;
  // The row groups of the file (positions and byte ranges), for callers that read only some.
  const parquet_io::ParquetDataReader& file_reader() const { return *reader_; }

  // DataFileReadOptions::use_threads, for the batches not read yet.
  void set_use_threads(bool use_threads);

  // The next batch, or nullopt at the end. With kApply, batches whose rows were all dropped are
  // skipped.
  Result<std::optional<DataFileBatch>> Next();
  // Next() in two halves: the next batch decoded here (nullopt at the end; no batch is skipped),
  // finished later by DecodedDataFileBatch::Finish().
  Result<std::optional<DecodedDataFileBatch>> NextDecoded();

 private:
  DataFileReader() = default;

  std::unique_ptr<parquet_io::ParquetDataReader> reader_;
  std::shared_ptr<const DataFileProcessing> processing_;
};

// The rows of `batch` whose bit is set in `keep` (one bit per row, from bit 0): long runs of kept rows
// are copied column by column with memcpy where the type allows; short runs are selected with Arrow's
// Filter (strings, binaries), packed bit by bit (booleans) or gathered with Arrow's Take (the rest);
// with `use_threads` columns are copied in parallel on Arrow's CPU pool.
Result<std::shared_ptr<arrow::RecordBatch>> SelectRows(const arrow::RecordBatch& batch, const arrow::Buffer& keep,
                                                       bool use_threads);

}  // namespace lakesync::iceberg
