// CSV read against a table schema. Arrow's CSV reader splits rows and cells (quoting, embedded line
// breaks); every column is read as raw bytes and converted here with the JSON Lines converters, because
// our CSV output carries the same text as JSON Lines without the quotes (base64 binary, ISO dates and
// timestamps, exact decimals, "NaN"/"Infinity", nested values as JSON). Converting here, rather than in
// Arrow's CSV converter, is what lets an error name the row and the column.
#include <arrow/array.h>
#include <arrow/csv/api.h>
#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include <fmt/ranges.h>

#include <set>

#include "lakesync/common/utf8.h"
#include "lakesync/formats/tabular/readers_internal.h"
#include "lakesync/formats/tabular/value_converters_internal.h"

namespace lakesync::tabular {
namespace {

class CsvReader : public arrow::RecordBatchReader {
 public:
  CsvReader(std::shared_ptr<arrow::RecordBatchReader> cells, std::string location,
            std::shared_ptr<arrow::Schema> target, std::unique_ptr<ColumnBuilders> columns, std::vector<int> source)
      : cells_(std::move(cells)), location_(std::move(location)), target_(std::move(target)),
        columns_(std::move(columns)), source_(std::move(source)) {}

  std::shared_ptr<arrow::Schema> schema() const override { return target_; }

  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    ARROW_RETURN_NOT_OK(error_);
    std::shared_ptr<arrow::RecordBatch> cells;
    error_ = cells_->ReadNext(&cells);
    if (!error_.ok()) return error_ = WithContext(error_, "reading " + location_);
    if (!cells) return Status::OK();
    error_ = Convert(*cells);
    ARROW_RETURN_NOT_OK(error_);
    rows_before_ += cells->num_rows();
    ARROW_ASSIGN_OR_RAISE(*out, columns_->Finish(cells->num_rows()));
    return Status::OK();
  }

 private:
  // Row by row, so that the first error reported is the first in the file.
  Status Convert(const arrow::RecordBatch& cells) {
    ARROW_RETURN_NOT_OK(columns_->Reserve(cells.num_rows()));
    auto& converters = columns_->converters();
    std::vector<const arrow::BinaryArray*> inputs;
    for (int source : source_) {
      inputs.push_back(source < 0 ? nullptr : static_cast<const arrow::BinaryArray*>(cells.column(source).get()));
    }
    for (int64_t r = 0; r < cells.num_rows(); ++r) {
      for (size_t c = 0; c < converters.size(); ++c) {
        ValueConverter& converter = *converters[c];
        ValuePath path{nullptr, converter.field()->name()};
        Status st;
        if (inputs[c] == nullptr) {
          st = converter.AppendMissing(path);
        } else if (inputs[c]->IsNull(r)) {
          st = converter.AppendNull(path);
        } else {
          const std::string_view cell = inputs[c]->GetView(r);
          const auto id = converter.field()->type()->id();
          if ((id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING) && !IsValidUtf8(cell)) {
            st = AtPath(path, InvalidArgument("the text is not valid UTF-8"));
          } else {
            st = converter.AppendText(cell, path);
          }
        }
        if (!st.ok()) {
          return MakeError(KindOf(st),
                           fmt::format("{}: data row {}, {}", location_, rows_before_ + r + 1, st.message()));
        }
      }
    }
    return Status::OK();
  }

  std::shared_ptr<arrow::RecordBatchReader> cells_;
  std::string location_;
  std::shared_ptr<arrow::Schema> target_;
  std::unique_ptr<ColumnBuilders> columns_;
  std::vector<int> source_;  // per target column, its index in the file, or -1 when the file lacks it
  int64_t rows_before_ = 0;
  Status error_;
};

// The number of cells in the header line (commas outside quotes, plus one), from the file's start.
Result<int> HeaderColumns(arrow::io::RandomAccessFile& input) {
  ARROW_ASSIGN_OR_RAISE(auto head, input.ReadAt(0, 1 << 16));
  ARROW_RETURN_NOT_OK(input.Seek(0));  // ReadAt may or may not move the position
  int columns = 1;
  bool quoted = false;
  const std::string_view text(reinterpret_cast<const char*>(head->data()), static_cast<size_t>(head->size()));
  for (char c : text) {
    if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && c == ',') {
      ++columns;
    } else if (!quoted && (c == '\n' || c == '\r')) {
      break;
    }
  }
  return columns;
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenCsvReader(std::shared_ptr<arrow::io::RandomAccessFile> input,
                                                                std::string location,
                                                                std::shared_ptr<arrow::Schema> target) {
  LS_ASSIGN_OR_RAISE_CTX(auto columns, ColumnBuilders::Make(target), "reading {}", location);
  auto read = arrow::csv::ReadOptions::Defaults();
  read.block_size = 1 << 22;
  auto parse = arrow::csv::ParseOptions::Defaults();
  parse.newlines_in_values = true;  // the writer quotes cells with line breaks
  // In a one-column file an empty line is a row whose value is null, which is how the writer writes
  // it; Arrow would skip it. With more columns an empty line is no row at all.
  LS_ASSIGN_OR_RAISE_CTX(const int header_columns, HeaderColumns(*input), "reading {}", location);
  parse.ignore_empty_lines = header_columns > 1;
  auto convert = arrow::csv::ConvertOptions::Defaults();
  // Raw bytes: the converters parse them, and string columns are checked for UTF-8 with the row named.
  for (const auto& f : target->fields()) convert.column_types[f->name()] = arrow::binary();
  // An unquoted empty cell is null; a quoted one ("") is an empty value, as the writer writes them.
  // Arrow's default null spellings ("NaN", "null", "N/A", ...) are values here.
  convert.null_values = {""};
  convert.strings_can_be_null = true;
  convert.quoted_strings_can_be_null = false;
  auto cells = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), std::move(input), read, parse,
                                                 convert);
  if (!cells.ok()) return WithContext(cells.status(), "reading " + location);

  const auto& header = (*cells)->schema();
  std::vector<std::string> unknown;
  std::set<std::string> seen;
  for (const auto& f : header->fields()) {
    if (!seen.insert(f->name()).second) {
      return InvalidArgument("{}: the header names column '{}' twice", location, f->name());
    }
    if (target->GetFieldIndex(f->name()) < 0) unknown.push_back("'" + f->name() + "'");
  }
  if (!unknown.empty()) {
    std::string names;
    for (const auto& f : target->fields()) names += (names.empty() ? "" : ", ") + f->name();
    return InvalidArgument("{}: the header names {} {}, {} not in the table (its columns: {})", location,
                           unknown.size() == 1 ? "column" : "columns", fmt::join(unknown, ", "),
                           unknown.size() == 1 ? "which is" : "which are", names);
  }
  std::vector<int> source;
  for (const auto& f : target->fields()) {
    const int index = header->GetFieldIndex(f->name());
    if (index < 0 && !f->nullable()) {
      return InvalidArgument("{}: required column '{}' is missing from the header", location, f->name());
    }
    source.push_back(index);
  }
  return std::make_shared<CsvReader>(*cells, std::move(location), std::move(target), std::move(columns),
                                     std::move(source));
}

}  // namespace lakesync::tabular
