#include "lakesync/formats/parquet/parquet_file_writer.h"

#include <arrow/array.h>
#include <arrow/compute/cast.h>
#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/key_value_metadata.h>
#include <parquet/arrow/schema.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_writer.h>

#include <algorithm>

#include "lakesync/formats/parquet/arrow_layout_internal.h"
#include "lakesync/formats/parquet/floating_stats_internal.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/model/json_serde.h"

namespace lakesync::parquet_io {
namespace {

// Row groups are checked against their byte budget after every slice of rows; a slice is sized to
// add about an eighth of the budget, within [kMinSliceRows, kMaxSliceRows] (parquet-mr checks
// between every 100 and 10,000 records).
constexpr int64_t kMinSliceRows = 100;
constexpr int64_t kMaxSliceRows = 16384;

}  // namespace

ParquetFileWriter::~ParquetFileWriter() = default;

Result<std::unique_ptr<ParquetFileWriter>> ParquetFileWriter::Make(std::shared_ptr<arrow::io::OutputStream> sink,
                                                                   std::string location,
                                                                   iceberg::SchemaPtr schema,
                                                                   ParquetWriterOptions options) {
  if (!sink) return InvalidArgument("no output stream given for {}", location);
  if (!schema) return InvalidArgument("no schema given for {}", location);
  std::unique_ptr<ParquetFileWriter> w(new ParquetFileWriter());
  w->location_ = std::move(location);
  w->schema_ = std::move(schema);
  w->options_ = std::move(options);
  w->sink_ = std::move(sink);
  w->ratio_ = w->options_.initial_compression_ratio > 0 ? w->options_.initial_compression_ratio : 1.0;
  LS_ASSIGN_OR_RAISE_CTX(w->table_arrow_schema_, iceberg::ToArrowSchema(*w->schema_), "writing {}", w->location_);
  arrow::FieldVector writer_fields;
  for (size_t i = 0; i < w->schema_->fields().size(); ++i) {
    const auto& f = w->schema_->fields()[i];
    if (f.type->id() == iceberg::TypeId::kUnknown) continue;
    LS_ASSIGN_OR_RAISE_CTX(auto af, internal::ParquetWriterField(f), "writing {}: column '{}'", w->location_, f.name);
    writer_fields.push_back(af);
    w->written_columns_.push_back(static_cast<int>(i));
  }
  w->writer_arrow_schema_ = arrow::schema(writer_fields);
  // Bloom filters name columns; a name that is not a primitive column here (or sits inside a list or
  // map, whose Parquet paths differ from Iceberg names) would silently get no filter.
  for (const auto& [column, fpp] : w->options_.parquet.bloom_filter_columns) {
    const auto* field = w->schema_->FindFieldByName(column);
    if (!field) {
      return InvalidArgument("table property write.parquet.bloom-filter-enabled.column.{}: the table has no column "
                             "'{}'", column, column);
    }
    if (!field->type->is_primitive() || field->type->id() == iceberg::TypeId::kBoolean) {
      return InvalidArgument("table property write.parquet.bloom-filter-enabled.column.{}: bloom filters are for "
                             "primitive, non-boolean columns; '{}' is {}", column, column, field->type->ToString());
    }
    const std::string full = w->schema_->FindColumnName(field->id);
    for (size_t dot = full.find('.'); dot != std::string::npos; dot = full.find('.', dot + 1)) {
      const auto* parent = w->schema_->FindFieldByName(full.substr(0, dot));
      if (parent && parent->type->id() != iceberg::TypeId::kStruct) {
        return Unsupported("table property write.parquet.bloom-filter-enabled.column.{}: columns inside lists and "
                           "maps cannot have bloom filters here", column);
      }
    }
  }
  w->floating_ = std::make_unique<internal::FloatingStatsCollector>(*w->schema_);

  // Arrow's writer opens with the first batch (OpenWriter), which chooses the columns' encodings;
  // the schema is checked now, so a schema Arrow cannot write fails here as before.
  std::shared_ptr<parquet::SchemaDescriptor> parquet_schema;
  LS_RETURN_NOT_OK_CTX(parquet::arrow::ToParquetSchema(w->writer_arrow_schema_.get(),
                                                       *w->options_.parquet.ToWriterProperties(),
                                                       *parquet::ArrowWriterProperties::Builder().build(),
                                                       &parquet_schema),
                       "opening Parquet writer for {}", w->location_);
  return w;
}

Status ParquetFileWriter::OpenWriter(const arrow::RecordBatch* first_batch) {
  // Columns whose first page would not shrink with a dictionary are written plain from the start
  // (parquet-mr's fallback rule, parquet_properties.h): hashing every value of a unique column into a
  // dictionary that is then thrown away or kept at a loss costs most of a write's CPU.
  std::vector<std::string> plain_columns;
  if (first_batch) plain_columns = ColumnsWithoutDictionaryGain(*first_batch, options_.parquet.page_row_limit);
  auto arrow_props = parquet::ArrowWriterProperties::Builder().build();
  arrow::MemoryPool* pool = options_.pool ? options_.pool : arrow::default_memory_pool();
  LS_ASSIGN_OR_RAISE_CTX(writer_,
                         parquet::arrow::FileWriter::Open(*writer_arrow_schema_, pool, sink_,
                                                          options_.parquet.ToWriterProperties(plain_columns),
                                                          arrow_props),
                         "opening Parquet writer for {}", location_);
  LS_RETURN_NOT_OK_CTX(writer_->AddKeyValueMetadata(arrow::key_value_metadata(
                           {"iceberg.schema"}, {iceberg::SchemaToJson(*schema_).dump()})),
                       "writing {}", location_);
  LS_ASSIGN_OR_RAISE_CTX(flushed_at_, sink_->Tell(), "writing {}", location_);
  return Status::OK();
}

Status ParquetFileWriter::StartRowGroup() {
  LS_RETURN_NOT_OK_CTX(writer_->NewBufferedRowGroup(), "writing {}", location_);
  if (rows_in_row_group_ > 0) {
    // The previous row group is on the sink now: learn how well this data compresses.
    LS_ASSIGN_OR_RAISE_CTX(int64_t pos, sink_->Tell(), "writing {}", location_);
    flushed_bytes_ += pos - flushed_at_;
    flushed_memory_ += buffered_bytes_;
    flushed_at_ = pos;
    if (flushed_memory_ > 0) ratio_ = static_cast<double>(flushed_bytes_) / static_cast<double>(flushed_memory_);
  }
  rows_in_row_group_ = 0;
  buffered_bytes_ = 0;
  return Status::OK();
}

int64_t ParquetFileWriter::EstimatedSize() const {
  return flushed_at_ + static_cast<int64_t>(static_cast<double>(buffered_bytes_) * ratio_);
}

Status ParquetFileWriter::Write(const arrow::RecordBatch& batch) {
  if (closed_) return InvalidArgument("writing {}: the file is already closed", location_);
  if (batch.num_columns() != table_arrow_schema_->num_fields()) {
    return InvalidArgument("writing {}: batch has {} columns, the table schema {}", location_, batch.num_columns(),
                           table_arrow_schema_->num_fields());
  }
  // Bring every column to the table's Arrow type (cast only where the layout differs).
  std::vector<std::shared_ptr<arrow::Array>> table_columns(static_cast<size_t>(batch.num_columns()));
  for (int i = 0; i < batch.num_columns(); ++i) {
    const auto& expected = table_arrow_schema_->field(i);
    std::shared_ptr<arrow::Array> col = batch.column(i);
    if (!internal::SameLayout(*col->type(), *expected->type())) {
      auto cast = arrow::compute::Cast(*col, expected->type(), arrow::compute::CastOptions::Safe());
      if (!cast.ok()) {
        return InvalidArgument("writing {}: column '{}' has type {}, the table schema needs {}: {}", location_,
                               expected->name(), col->type()->ToString(), expected->type()->ToString(),
                               cast.status().message());
      }
      col = *cast;
    }
    if (!expected->nullable() && col->null_count() > 0 && expected->type()->id() != arrow::Type::NA) {
      return InvalidArgument("writing {}: required column '{}' has {} null values", location_, expected->name(),
                             col->null_count());
    }
    table_columns[static_cast<size_t>(i)] = arrow::MakeArray(internal::Retype(col->data(), expected->type()));
  }
  auto table_batch = arrow::RecordBatch::Make(table_arrow_schema_, batch.num_rows(), table_columns);
  LS_RETURN_NOT_OK_CTX(floating_->Update(*table_batch), "writing {}", location_);

  std::vector<std::shared_ptr<arrow::Array>> writer_columns;
  for (size_t k = 0; k < written_columns_.size(); ++k) {
    const auto& col = table_columns[static_cast<size_t>(written_columns_[k])];
    writer_columns.push_back(
        arrow::MakeArray(internal::Retype(col->data(), writer_arrow_schema_->field(static_cast<int>(k))->type())));
  }
  auto writer_batch = arrow::RecordBatch::Make(writer_arrow_schema_, batch.num_rows(), writer_columns);
  if (!writer_ && writer_batch->num_rows() > 0) ARROW_RETURN_NOT_OK(OpenWriter(writer_batch.get()));

  int64_t slice_rows = kMaxSliceRows;
  if (writer_batch->num_rows() > kMinSliceRows) {
    ARROW_ASSIGN_OR_RAISE(int64_t memory, arrow::util::ReferencedBufferSize(*writer_batch));
    const double per_row =
        std::max(1e-3, static_cast<double>(memory) * ratio_ / static_cast<double>(writer_batch->num_rows()));
    const double budget = static_cast<double>(options_.parquet.row_group_size_bytes);
    slice_rows = std::clamp(static_cast<int64_t>(budget / 8.0 / per_row), kMinSliceRows, kMaxSliceRows);
  }
  for (int64_t offset = 0; offset < writer_batch->num_rows(); offset += slice_rows) {
    if (rows_in_row_group_ == 0 ||
        static_cast<double>(buffered_bytes_) * ratio_ >= static_cast<double>(options_.parquet.row_group_size_bytes)) {
      ARROW_RETURN_NOT_OK(StartRowGroup());
    }
    auto slice = writer_batch->Slice(offset, std::min(slice_rows, writer_batch->num_rows() - offset));
    LS_RETURN_NOT_OK_CTX(writer_->WriteRecordBatch(*slice), "writing {}", location_);
    ARROW_ASSIGN_OR_RAISE(int64_t bytes, arrow::util::ReferencedBufferSize(*slice));
    buffered_bytes_ += bytes;
    rows_in_row_group_ += slice->num_rows();
    record_count_ += slice->num_rows();
  }
  return Status::OK();
}

Result<ParquetFileMetrics> ParquetFileWriter::Close() {
  if (closed_) return InvalidArgument("{} is already closed", location_);
  closed_ = true;
  if (!writer_) ARROW_RETURN_NOT_OK(OpenWriter(nullptr));  // no rows: a file with the schema only
  LS_RETURN_NOT_OK_CTX(writer_->Close(), "finishing Parquet file {}", location_);
  LS_ASSIGN_OR_RAISE_CTX(int64_t size, sink_->Tell(), "finishing Parquet file {}", location_);
  if (!sink_->closed()) LS_RETURN_NOT_OK_CTX(sink_->Close(), "closing {}", location_);
  std::shared_ptr<parquet::FileMetaData> metadata = writer_->metadata();
  if (!metadata) return IOError("Parquet writer for {} returned no footer", location_);
  LS_ASSIGN_OR_RAISE_CTX(auto metrics,
                         MetricsFromFooter(*metadata, *schema_, options_.metrics, floating_->stats(), size),
                         "computing metrics of {}", location_);
  return metrics;
}

Status ParquetFileWriter::Abort() {
  if (closed_) return Status::OK();
  closed_ = true;
  if (!sink_->closed()) LS_RETURN_NOT_OK_CTX(sink_->Close(), "closing {}", location_);
  return Status::OK();
}

}  // namespace lakesync::parquet_io
