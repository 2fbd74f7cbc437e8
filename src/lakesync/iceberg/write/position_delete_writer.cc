#include "lakesync/iceberg/write/position_delete_writer.h"

#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/record_batch.h>

#include <algorithm>

#include "lakesync/formats/parquet/parquet_file_writer.h"

namespace lakesync::iceberg {
namespace {

constexpr int64_t kBatchRows = 64 * 1024;

}  // namespace

Result<std::unique_ptr<PositionDeleteWriter>> PositionDeleteWriter::Make(PositionDeleteWriterOptions options) {
  if (options.location.empty()) return InvalidArgument("a position delete writer needs a file location");
  if (!options.output_factory) return InvalidArgument("a position delete writer needs an output factory");
  // Validate the properties now rather than at Close.
  ARROW_RETURN_NOT_OK(parquet_io::ParquetWriteProperties::FromTableProperties(options.properties, true).status());
  std::unique_ptr<PositionDeleteWriter> w(new PositionDeleteWriter());
  w->options_ = std::move(options);
  return w;
}

Status PositionDeleteWriter::Delete(std::string_view data_file_path, int64_t position) {
  if (closed_) return InvalidArgument("position delete file {} is already closed", options_.location);
  if (data_file_path.empty()) return InvalidArgument("a position delete needs a data file path");
  if (position < 0) return InvalidArgument("position {} in {} is negative", position, data_file_path);
  auto it = positions_.find(data_file_path);
  if (it == positions_.end()) it = positions_.emplace(std::string(data_file_path), std::vector<int64_t>{}).first;
  it->second.push_back(position);
  ++pending_;
  return Status::OK();
}

Status PositionDeleteWriter::DeletePositions(std::string_view data_file_path, const std::vector<int64_t>& positions) {
  for (int64_t p : positions) ARROW_RETURN_NOT_OK(Delete(data_file_path, p));
  return Status::OK();
}

Result<DataFile> PositionDeleteWriter::Close() {
  if (closed_) return InvalidArgument("position delete file {} is already closed", options_.location);
  closed_ = true;
  if (pending_ == 0) return InvalidArgument("no positions were deleted; {} would be empty", options_.location);
  parquet_io::ParquetWriterOptions parquet_options;
  ARROW_ASSIGN_OR_RAISE(parquet_options.parquet,
                        parquet_io::ParquetWriteProperties::FromTableProperties(options_.properties, true));
  parquet_options.metrics = parquet_io::MetricsConfig::ForPositionDeletes();
  LS_ASSIGN_OR_RAISE_CTX(auto sink, options_.output_factory(options_.location), "opening position delete file {}",
                         options_.location);
  ARROW_ASSIGN_OR_RAISE(auto writer, parquet_io::ParquetFileWriter::Make(std::move(sink), options_.location,
                                                                         PositionDeleteSchema(), parquet_options));
  arrow::StringBuilder paths;
  arrow::Int64Builder pos;
  int64_t rows = 0;
  auto flush = [&]() -> Status {
    if (rows == 0) return Status::OK();
    ARROW_ASSIGN_OR_RAISE(auto p, paths.Finish());
    ARROW_ASSIGN_OR_RAISE(auto q, pos.Finish());
    ARROW_RETURN_NOT_OK(writer->Write(*arrow::RecordBatch::Make(writer->arrow_schema(), rows, {p, q})));
    rows = 0;
    return Status::OK();
  };
  // std::map iterates paths in byte order, which is the spec's file_path order for UTF-8 paths.
  for (auto& [path, list] : positions_) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    for (int64_t p : list) {
      ARROW_RETURN_NOT_OK(paths.Append(path));
      ARROW_RETURN_NOT_OK(pos.Append(p));
      if (++rows == kBatchRows) ARROW_RETURN_NOT_OK(flush());
    }
  }
  ARROW_RETURN_NOT_OK(flush());
  ARROW_ASSIGN_OR_RAISE(auto metrics, writer->Close());
  DataFile f;
  f.content = FileContent::kPositionDeletes;
  f.file_path = options_.location;
  f.file_format = FileFormat::kParquet;
  f.spec_id = options_.spec_id;
  f.partition = options_.partition;
  metrics.ApplyTo(f);
  if (positions_.size() == 1) f.referenced_data_file = positions_.begin()->first;
  positions_.clear();
  return f;
}

}  // namespace lakesync::iceberg
