// Data files for Iceberg tables: DataFileWriter writes one Parquet file of one partition;
// RollingDataWriter takes batches in the table schema, routes rows to a writer per partition
// (fanout, with a bound on open files), rolls to a new file when one passes the target size, and
// returns the DataFile records to commit.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lakesync/formats/parquet/parquet_file_writer.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/partition_spec.h"
#include "lakesync/iceberg/model/schema.h"
#include "lakesync/iceberg/write/file_namer.h"
#include "lakesync/iceberg/write/output_factory.h"
#include "lakesync/iceberg/write/partition_splitter.h"

namespace lakesync::iceberg {

inline constexpr char kTargetFileSizeProperty[] = "write.target-file-size-bytes";
inline constexpr int64_t kTargetFileSizeDefault = 512LL << 20;

// Writes one data file. The DataFile it returns has content DATA, format PARQUET, the given spec id,
// partition and sort order id, and the file's metrics.
class DataFileWriter {
 public:
  // Returns errors of ParquetFileWriter::Make.
  static Result<std::unique_ptr<DataFileWriter>> Make(std::string location,
                                                      std::shared_ptr<arrow::io::OutputStream> sink, SchemaPtr schema,
                                                      int32_t spec_id, std::vector<Literal> partition,
                                                      parquet_io::ParquetWriterOptions options,
                                                      std::optional<int32_t> sort_order_id = std::nullopt);

  Status Write(const arrow::RecordBatch& batch) { return writer_->Write(batch); }
  int64_t EstimatedSize() const { return writer_->EstimatedSize(); }
  int64_t record_count() const { return writer_->record_count(); }
  double compression_ratio() const { return writer_->compression_ratio(); }
  const std::string& location() const { return writer_->location(); }

  Result<DataFile> Close();
  Status Abort() { return writer_->Abort(); }

 private:
  std::unique_ptr<parquet_io::ParquetFileWriter> writer_;
  int32_t spec_id_ = 0;
  std::vector<Literal> partition_;
  std::optional<int32_t> sort_order_id_;
};

struct DataWriterOptions {
  SchemaPtr schema;
  PartitionSpecPtr spec;  // unpartitioned when null
  std::string table_location;
  // Table properties: write.data.path, write.target-file-size-bytes, write.parquet.*,
  // write.metadata.metrics.*. write.object-storage.enabled=true and a write.format.default other
  // than parquet are refused (not supported yet) rather than ignored.
  std::map<std::string, std::string> properties;
  OutputFactory output_factory;
  int32_t partition_id = 0;   // first number in file names (Spark's partition id)
  int64_t task_id = 0;
  std::string operation_id;   // shared by the files of one write; a random UUID when empty
  std::optional<int32_t> sort_order_id;
  // At most this many files open at once; past it the least recently written partition's file is
  // closed (a later row of that partition starts a new file). Each open file buffers a row group.
  int max_open_files = 32;
};

class RollingDataWriter {
 public:
  // Returns InvalidArgument for a missing schema/factory/location or malformed properties (naming
  // the key), Unsupported for settings not supported, errors of PartitionSplitter::Make.
  static Result<std::unique_ptr<RollingDataWriter>> Make(DataWriterOptions options);
  ~RollingDataWriter();

  // Routes the rows (table schema) to their partitions' files. Errors name the file involved; after
  // an error call Abort.
  Status Write(const std::shared_ptr<arrow::RecordBatch>& batch);

  // Closes every open file and returns all files written, in the order they were finished.
  Result<std::vector<DataFile>> Close();
  // Closes open files without finishing them and returns the locations of every file started, for
  // the caller to delete.
  std::vector<std::string> Abort();

  int64_t target_file_size() const { return target_file_size_; }
  const std::string& data_location() const { return namer_->data_location(); }

 private:
  struct Open {
    std::vector<Literal> partition;
    std::string partition_path;
    std::unique_ptr<DataFileWriter> writer;
    std::list<std::string>::iterator lru;
  };

  RollingDataWriter() = default;
  Status WritePartition(const std::string& key, const std::vector<Literal>& partition,
                        const std::shared_ptr<arrow::RecordBatch>& rows);
  Status CloseOpen(Open& open);

  DataWriterOptions options_;
  parquet_io::ParquetWriterOptions parquet_options_;
  int64_t target_file_size_ = kTargetFileSizeDefault;
  std::unique_ptr<FileNamer> namer_;
  std::unique_ptr<PartitionSplitter> splitter_;  // null when unpartitioned
  std::vector<TypePtr> partition_types_;
  std::unordered_map<std::string, Open> open_;
  std::list<std::string> lru_;  // most recent at the front
  std::vector<DataFile> done_;
  std::vector<std::string> started_;
  double ratio_hint_ = 1.0;
};

}  // namespace lakesync::iceberg
