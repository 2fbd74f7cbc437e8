#include "lakesync/iceberg/write/data_file_writer.h"

#include <arrow/record_batch.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "lakesync/common/text.h"

namespace lakesync::iceberg {
namespace {

// Rolling is checked after every slice of rows; a slice is sized to add about an eighth of the target
// size, within [kMinCheckRows, kMaxCheckRows] rows (Java checks every 1,000 rows).
constexpr int64_t kMinCheckRows = 1000;
constexpr int64_t kMaxCheckRows = 65536;

}  // namespace

Result<std::unique_ptr<DataFileWriter>> DataFileWriter::Make(std::string location,
                                                             std::shared_ptr<arrow::io::OutputStream> sink,
                                                             SchemaPtr schema, int32_t spec_id,
                                                             std::vector<Literal> partition,
                                                             parquet_io::ParquetWriterOptions options,
                                                             std::optional<int32_t> sort_order_id) {
  auto w = std::unique_ptr<DataFileWriter>(new DataFileWriter());
  ARROW_ASSIGN_OR_RAISE(w->writer_, parquet_io::ParquetFileWriter::Make(std::move(sink), std::move(location),
                                                                        std::move(schema), std::move(options)));
  w->spec_id_ = spec_id;
  w->partition_ = std::move(partition);
  w->sort_order_id_ = sort_order_id;
  return w;
}

Result<DataFile> DataFileWriter::Close() {
  ARROW_ASSIGN_OR_RAISE(auto metrics, writer_->Close());
  DataFile f;
  f.content = FileContent::kData;
  f.file_path = writer_->location();
  f.file_format = FileFormat::kParquet;
  f.spec_id = spec_id_;
  f.partition = partition_;
  f.sort_order_id = sort_order_id_;
  metrics.ApplyTo(f);
  return f;
}

RollingDataWriter::~RollingDataWriter() = default;

Result<std::unique_ptr<RollingDataWriter>> RollingDataWriter::Make(DataWriterOptions options) {
  if (!options.schema) return InvalidArgument("a data writer needs a table schema");
  if (!options.output_factory) return InvalidArgument("a data writer needs an output factory");
  if (options.table_location.empty() && !options.properties.count(kWriteDataPathProperty)) {
    return InvalidArgument("a data writer needs the table location or {}", kWriteDataPathProperty);
  }
  if (options.max_open_files < 1) return InvalidArgument("max_open_files must be at least 1");
  if (!options.spec) options.spec = PartitionSpec::Unpartitioned();
  const auto& props = options.properties;
  if (auto it = props.find("write.format.default"); it != props.end() && AsciiLower(it->second) != "parquet") {
    return Unsupported("table property write.format.default={}: only parquet data files can be written", it->second);
  }
  if (auto it = props.find("write.object-storage.enabled"); it != props.end() && AsciiLower(it->second) == "true") {
    return Unsupported("table property write.object-storage.enabled=true: the object storage layout is not supported");
  }
  std::unique_ptr<RollingDataWriter> w(new RollingDataWriter());
  if (auto it = props.find(kTargetFileSizeProperty); it != props.end()) {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || ptr != it->second.data() + it->second.size() || v <= 0) {
      return InvalidArgument("table property {} must be a positive integer, got '{}'", kTargetFileSizeProperty,
                             it->second);
    }
    w->target_file_size_ = v;
  }
  ARROW_ASSIGN_OR_RAISE(w->parquet_options_.parquet, parquet_io::ParquetWriteProperties::FromTableProperties(props));
  ARROW_ASSIGN_OR_RAISE(w->parquet_options_.metrics, parquet_io::MetricsConfig::Make(props, *options.schema));
  w->namer_ = std::make_unique<FileNamer>(DataLocation(options.table_location, props), options.partition_id,
                                          options.task_id, options.operation_id);
  if (!options.spec->IsUnpartitioned()) {
    ARROW_ASSIGN_OR_RAISE(w->splitter_, PartitionSplitter::Make(options.schema, options.spec));
    w->partition_types_ = w->splitter_->result_types();
  } else if (!options.spec->fields().empty()) {
    // Only void fields: every row has the all-null tuple.
    ARROW_ASSIGN_OR_RAISE(auto type, options.spec->PartitionType(*options.schema));
    for (const auto& f : type->fields()) w->partition_types_.push_back(f.type);
  }
  w->options_ = std::move(options);
  return w;
}

Status RollingDataWriter::CloseOpen(Open& open) {
  if (!open.writer) return Status::OK();
  std::unique_ptr<DataFileWriter> writer = std::move(open.writer);
  ratio_hint_ = writer->compression_ratio();
  ARROW_ASSIGN_OR_RAISE(auto file, writer->Close());
  done_.push_back(std::move(file));
  return Status::OK();
}

Status RollingDataWriter::WritePartition(const std::string& key, const std::vector<Literal>& partition,
                                         const std::shared_ptr<arrow::RecordBatch>& rows) {
  auto it = open_.find(key);
  if (it == open_.end()) {
    if (static_cast<int>(open_.size()) >= options_.max_open_files) {
      // Fanout bound: finish the least recently written partition's file.
      const std::string victim = lru_.back();
      lru_.pop_back();
      auto vit = open_.find(victim);
      Status st = CloseOpen(vit->second);
      open_.erase(vit);
      ARROW_RETURN_NOT_OK(st);
    }
    Open o;
    o.partition = partition;
    o.partition_path = options_.spec->fields().empty() ? "" : options_.spec->PartitionPath(*options_.schema, partition);
    lru_.push_front(key);
    o.lru = lru_.begin();
    it = open_.emplace(key, std::move(o)).first;
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  Open& open = it->second;
  int64_t check_rows = kMaxCheckRows;
  if (rows->num_rows() > kMinCheckRows) {
    ARROW_ASSIGN_OR_RAISE(int64_t memory, arrow::util::ReferencedBufferSize(*rows));
    const double per_row =
        std::max(1e-3, static_cast<double>(memory) * ratio_hint_ / static_cast<double>(rows->num_rows()));
    check_rows = std::clamp(static_cast<int64_t>(static_cast<double>(target_file_size_) / 8.0 / per_row), kMinCheckRows,
                            kMaxCheckRows);
  }
  for (int64_t offset = 0; offset < rows->num_rows(); offset += check_rows) {
    if (!open.writer) {
      const std::string location = namer_->NewLocation(open.partition_path);
      LS_ASSIGN_OR_RAISE_CTX(auto sink, options_.output_factory(location), "opening data file {}", location);
      started_.push_back(location);
      auto parquet_options = parquet_options_;
      parquet_options.initial_compression_ratio = ratio_hint_;
      ARROW_ASSIGN_OR_RAISE(open.writer,
                            DataFileWriter::Make(location, std::move(sink), options_.schema, options_.spec->spec_id(),
                                                 open.partition, parquet_options, options_.sort_order_id));
    }
    auto slice = rows->Slice(offset, std::min(check_rows, rows->num_rows() - offset));
    ARROW_RETURN_NOT_OK(open.writer->Write(*slice));
    if (open.writer->EstimatedSize() >= target_file_size_) ARROW_RETURN_NOT_OK(CloseOpen(open));
  }
  return Status::OK();
}

Status RollingDataWriter::Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
  if (!batch || batch->num_rows() == 0) return Status::OK();
  if (!splitter_) {
    std::vector<Literal> nulls(partition_types_.size());
    return WritePartition(PartitionKey(nulls, partition_types_), nulls, batch);
  }
  ARROW_ASSIGN_OR_RAISE(auto groups, splitter_->Split(batch));
  for (const auto& g : groups) ARROW_RETURN_NOT_OK(WritePartition(g.key, g.partition, g.rows));
  return Status::OK();
}

Result<std::vector<DataFile>> RollingDataWriter::Close() {
  // Finish in order of least recent use, so file order is stable for a given input.
  for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) ARROW_RETURN_NOT_OK(CloseOpen(open_.at(*it)));
  open_.clear();
  lru_.clear();
  return std::move(done_);
}

std::vector<std::string> RollingDataWriter::Abort() {
  for (auto& [key, open] : open_) {
    if (open.writer) (void)open.writer->Abort();
  }
  open_.clear();
  lru_.clear();
  done_.clear();
  return std::move(started_);
}

}  // namespace lakesync::iceberg
