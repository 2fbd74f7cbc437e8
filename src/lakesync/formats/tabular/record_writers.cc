#include <arrow/array.h>
#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <algorithm>

#include "lakesync/common/column_threads.h"
#include "lakesync/formats/parquet/parquet_properties.h"
#include "lakesync/formats/tabular/json_values_internal.h"
#include "lakesync/formats/tabular/tabular.h"

namespace lakesync::tabular {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

// A writer of text lines: rows are appended to a buffer, which goes to the stream when it passes
// kFlushBytes and on Flush/Close.
class LineWriter : public RecordWriter {
 public:
  Status Flush() override {
    ARROW_RETURN_NOT_OK(WriteBuffer());
    return out_->Flush();
  }
  Status Close() override { return Flush(); }

 protected:
  explicit LineWriter(std::shared_ptr<arrow::io::OutputStream> out) : out_(std::move(out)) {}

  // Called after each line appended to buffer_.
  Status LineEnded() { return buffer_.size() > kFlushBytes ? WriteBuffer() : Status::OK(); }

  std::string buffer_;

 private:
  Status WriteBuffer() {
    ARROW_RETURN_NOT_OK(out_->Write(buffer_.data(), static_cast<int64_t>(buffer_.size())));
    buffer_.clear();
    return Status::OK();
  }
  std::shared_ptr<arrow::io::OutputStream> out_;
};

class JsonlWriter : public LineWriter {
 public:
  explicit JsonlWriter(std::shared_ptr<arrow::io::OutputStream> out) : LineWriter(std::move(out)) {}

  Status Write(const arrow::RecordBatch& batch) override {
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      ARROW_ASSIGN_OR_RAISE(auto row, RowToJson(batch, r));
      buffer_ += row;
      buffer_.push_back('\n');
      ARROW_RETURN_NOT_OK(LineEnded());
    }
    return Status::OK();
  }
};

// Quotes cells that need it, and empty values, which an unquoted empty field would make null.
void AppendCsvField(std::string& out, const std::string& cell) {
  if (!cell.empty() && cell.find_first_of(",\"\n\r") == std::string::npos) {
    out += cell;
    return;
  }
  out.push_back('"');
  for (char c : cell) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

class CsvWriter : public LineWriter {
 public:
  CsvWriter(std::shared_ptr<arrow::Schema> schema, std::shared_ptr<arrow::io::OutputStream> out)
      : LineWriter(std::move(out)) {
    for (int i = 0; i < schema->num_fields(); ++i) {
      if (i) buffer_.push_back(',');
      AppendCsvField(buffer_, schema->field(i)->name());
    }
    buffer_.push_back('\n');
  }

  Status Write(const arrow::RecordBatch& batch) override {
    std::string cell;
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      for (int c = 0; c < batch.num_columns(); ++c) {
        if (c) buffer_.push_back(',');
        if (batch.column(c)->IsNull(r)) continue;  // null is an empty field
        cell.clear();
        ARROW_RETURN_NOT_OK(AppendDisplayValue(cell, *batch.column(c), r));
        AppendCsvField(buffer_, cell);
      }
      buffer_.push_back('\n');
      ARROW_RETURN_NOT_OK(LineEnded());
    }
    return Status::OK();
  }
};

// Buffers cells to align columns; beyond max_rows it counts rows without keeping them.
class TextTableWriter : public RecordWriter {
 public:
  TextTableWriter(std::shared_ptr<arrow::Schema> schema, std::shared_ptr<arrow::io::OutputStream> out, int64_t max_rows)
      : schema_(std::move(schema)), out_(std::move(out)), max_rows_(max_rows) {}

  Status Write(const arrow::RecordBatch& batch) override {
    for (int64_t r = 0; r < batch.num_rows(); ++r, ++total_rows_) {
      if (static_cast<int64_t>(rows_.size()) >= max_rows_) continue;
      std::vector<std::string> row;
      for (int c = 0; c < batch.num_columns(); ++c) {
        std::string cell;
        ARROW_RETURN_NOT_OK(AppendDisplayValue(cell, *batch.column(c), r));
        std::replace(cell.begin(), cell.end(), '\n', ' ');
        row.push_back(std::move(cell));
      }
      rows_.push_back(std::move(row));
    }
    return Status::OK();
  }

  Status Flush() override { return Unsupported("a text table is written whole, at the end (use --format jsonl)"); }

  Status Close() override {
    const int n = schema_->num_fields();
    std::vector<size_t> width(static_cast<size_t>(n));
    for (int c = 0; c < n; ++c) width[static_cast<size_t>(c)] = schema_->field(c)->name().size();
    for (const auto& row : rows_) {
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], std::min<size_t>(row[c].size(), 60));
    }
    std::string text;
    auto line = [&](const std::vector<std::string>& cells) {
      for (size_t c = 0; c < cells.size(); ++c) {
        std::string cell = cells[c].size() > 60 ? cells[c].substr(0, 57) + "..." : cells[c];
        text += (c ? " | " : "") + cell + std::string(width[c] - std::min(width[c], cell.size()), ' ');
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      text.push_back('\n');
    };
    std::vector<std::string> header;
    for (int c = 0; c < n; ++c) header.push_back(schema_->field(c)->name());
    line(header);
    for (size_t c = 0; c < width.size(); ++c) text += (c ? "-+-" : "") + std::string(width[c], '-');
    text.push_back('\n');
    for (const auto& row : rows_) line(row);
    if (total_rows_ > static_cast<int64_t>(rows_.size())) {
      text += "... " + std::to_string(total_rows_ - static_cast<int64_t>(rows_.size())) +
              " more rows not shown (use --format jsonl or --limit)\n";
    }
    text += "(" + std::to_string(total_rows_) + (total_rows_ == 1 ? " row)\n" : " rows)\n");
    ARROW_RETURN_NOT_OK(out_->Write(text.data(), static_cast<int64_t>(text.size())));
    return out_->Flush();
  }

 private:
  std::shared_ptr<arrow::Schema> schema_;
  std::shared_ptr<arrow::io::OutputStream> out_;
  int64_t max_rows_;
  int64_t total_rows_ = 0;
  std::vector<std::vector<std::string>> rows_;
};

class ParquetRecordWriter : public RecordWriter {
 public:
  ParquetRecordWriter(std::shared_ptr<arrow::Schema> schema, std::shared_ptr<arrow::io::OutputStream> out,
                      arrow::Compression::type codec)
      : schema_(std::move(schema)), out_(std::move(out)), codec_(codec) {}

  // The Arrow writer opens with the first batch, which decides the columns written without a
  // dictionary (below); a stream with no rows opens it at Close, for a file with the schema alone.
  Status Write(const arrow::RecordBatch& batch) override {
    if (!writer_) ARROW_RETURN_NOT_OK(Open(&batch));
    return writer_->WriteRecordBatch(batch);
  }
  Status Flush() override { return Unsupported("Parquet is written in whole row groups, not flushed row by row"); }
  Status Close() override {
    if (!writer_) ARROW_RETURN_NOT_OK(Open(nullptr));
    return writer_->Close();
  }

 private:
  Status Open(const arrow::RecordBatch* first_batch) {
    // Page checksums as on every Parquet file lakesync writes (parquet_properties.h).
    parquet::WriterProperties::Builder builder;
    builder.compression(codec_)->enable_page_checksum();
    // Columns whose first page's worth of rows would not shrink with a dictionary (ids, amounts,
    // timestamps) are written plain, by the table writer's rule (parquet_io::ColumnsWithoutDictionaryGain):
    // Arrow would hash their values into a dictionary it then drops. A function of the first batch's
    // rows, which are the same at every thread count, so the file stays the same bytes.
    if (first_batch) {
      const int64_t sample_rows = parquet_io::ParquetWriteProperties().page_row_limit;  // a page's worth
      for (const std::string& name : parquet_io::ColumnsWithoutDictionaryGain(*first_batch, sample_rows)) {
        builder.disable_dictionary(name);
      }
    }
    // Columns are encoded and compressed in parallel on the engine's executor (the same bytes as
    // one thread: each column chunk is encoded on its own, and the row group is laid out in column
    // order). Not from a pool thread: Arrow's writer waits on its column tasks, and a pool thread
    // waiting on tasks queued behind it could deadlock the pool (common/executor.h).
    parquet::ArrowWriterProperties::Builder arrow_builder;
    arrow_builder.store_schema();
    arrow_builder.set_use_threads(ColumnThreads(true));
    ARROW_ASSIGN_OR_RAISE(writer_, parquet::arrow::FileWriter::Open(*schema_, arrow::default_memory_pool(), out_,
                                                                    builder.build(), arrow_builder.build()));
    return Status::OK();
  }

  std::shared_ptr<arrow::Schema> schema_;
  std::shared_ptr<arrow::io::OutputStream> out_;
  arrow::Compression::type codec_;
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
};

}  // namespace

Result<std::string> RowToJson(const arrow::RecordBatch& batch, int64_t row) {
  std::string out = "{";
  for (int c = 0; c < batch.num_columns(); ++c) {
    if (c) out.push_back(',');
    AppendJsonString(out, batch.schema()->field(c)->name());
    out.push_back(':');
    ARROW_RETURN_NOT_OK(AppendJsonValue(out, *batch.column(c), row));
  }
  out.push_back('}');
  return out;
}

Result<std::unique_ptr<RecordWriter>> MakeRecordWriter(Format format, std::shared_ptr<arrow::Schema> schema,
                                                       std::shared_ptr<arrow::io::OutputStream> out,
                                                       const RecordWriterOptions& options) {
  switch (format) {
    case Format::kJsonl: return std::unique_ptr<RecordWriter>(std::make_unique<JsonlWriter>(std::move(out)));
    case Format::kCsv: return std::unique_ptr<RecordWriter>(std::make_unique<CsvWriter>(schema, std::move(out)));
    case Format::kTable:
      return std::unique_ptr<RecordWriter>(std::make_unique<TextTableWriter>(schema, std::move(out), options.table_max_rows));
    case Format::kParquet:
      return std::unique_ptr<RecordWriter>(
          std::make_unique<ParquetRecordWriter>(std::move(schema), std::move(out), options.parquet_codec));
  }
  return InvalidArgument("unknown output format");
}

}  // namespace lakesync::tabular
