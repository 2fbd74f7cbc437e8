#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/interfaces.h>
#include <arrow/json/api.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/base64.h>
#include <arrow/util/decimal.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/iceberg/model/literal.h"

namespace lakesync::tabular {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Types JSON Lines carries as text in our contract: read them as strings, then parse with the same
// rules the writer uses (so our own output reads back exactly).
bool IsTextEncodedInJson(const arrow::DataType& t) {
  switch (t.id()) {
    case arrow::Type::TIMESTAMP:
    case arrow::Type::DATE32:
    case arrow::Type::TIME64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::FIXED_SIZE_BINARY: return true;
    default: return false;
  }
}

Result<std::shared_ptr<arrow::Array>> ParseTextColumn(const arrow::Array& column, const arrow::DataType& type,
                                                      const std::string& column_name) {
  if (column.type_id() == arrow::Type::NA) return arrow::MakeArrayOfNull(type.GetSharedPtr(), column.length());
  if (column.type_id() != arrow::Type::STRING) {
    return InvalidArgument("column '{}' must be given as a JSON string for type {}", column_name, type.ToString());
  }
  const auto& text = static_cast<const arrow::StringArray&>(column);
  std::unique_ptr<arrow::ArrayBuilder> builder;
  ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), type.GetSharedPtr(), &builder));
  for (int64_t i = 0; i < text.length(); ++i) {
    if (text.IsNull(i)) {
      ARROW_RETURN_NOT_OK(builder->AppendNull());
      continue;
    }
    const std::string_view v = text.GetView(i);
    auto bad = [&](const Status& st) {
      return InvalidArgument("row {}, column '{}': {}", i + 1, column_name, st.message());
    };
    switch (type.id()) {
      case arrow::Type::TIMESTAMP: {
        const auto& ts = static_cast<const arrow::TimestampType&>(type);
        const bool nanos = ts.unit() == arrow::TimeUnit::NANO;
        auto parsed = iceberg::ParseTimestamp(v, nanos);
        if (!parsed.ok()) return bad(parsed.status());
        int64_t value = *parsed;
        if (ts.unit() == arrow::TimeUnit::MILLI) value /= 1000;
        if (ts.unit() == arrow::TimeUnit::SECOND) value /= 1000000;
        ARROW_RETURN_NOT_OK(static_cast<arrow::TimestampBuilder&>(*builder).Append(value));
        break;
      }
      case arrow::Type::DATE32: {
        auto parsed = iceberg::ParseDate(v);
        if (!parsed.ok()) return bad(parsed.status());
        ARROW_RETURN_NOT_OK(static_cast<arrow::Date32Builder&>(*builder).Append(*parsed));
        break;
      }
      case arrow::Type::TIME64: {
        auto parsed = iceberg::ParseTime(v);
        if (!parsed.ok()) return bad(parsed.status());
        const auto unit = static_cast<const arrow::Time64Type&>(type).unit();
        ARROW_RETURN_NOT_OK(
            static_cast<arrow::Time64Builder&>(*builder).Append(unit == arrow::TimeUnit::NANO ? *parsed * 1000 : *parsed));
        break;
      }
      case arrow::Type::DECIMAL128: {
        const auto& dt = static_cast<const arrow::Decimal128Type&>(type);
        auto parsed = iceberg::ParseDecimal(v, dt.scale());
        if (!parsed.ok()) return bad(parsed.status());
        const __int128 u = *parsed;
        arrow::Decimal128 d(static_cast<int64_t>(u >> 64), static_cast<uint64_t>(u));
        if (!d.FitsInPrecision(dt.precision())) {
          return InvalidArgument("row {}, column '{}': {} does not fit in {}", i + 1, column_name, v, type.ToString());
        }
        ARROW_RETURN_NOT_OK(static_cast<arrow::Decimal128Builder&>(*builder).Append(d));
        break;
      }
      case arrow::Type::FIXED_SIZE_BINARY: {
        const int width = static_cast<const arrow::FixedSizeBinaryType&>(type).byte_width();
        std::string bytes;
        if (width == 16 && v.size() == 36 && v[8] == '-') {
          auto parsed = iceberg::ParseUuid(v);
          if (!parsed.ok()) return bad(parsed.status());
          bytes = *parsed;
        } else {
          auto decoded = arrow::util::base64_decode(v);
          if (!decoded.ok()) return bad(InvalidArgument("'{}' is not base64", v));
          bytes = *decoded;
        }
        if (static_cast<int>(bytes.size()) != width) {
          return InvalidArgument("row {}, column '{}': expected {} bytes, got {}", i + 1, column_name, width,
                                 bytes.size());
        }
        ARROW_RETURN_NOT_OK(static_cast<arrow::FixedSizeBinaryBuilder&>(*builder).Append(bytes));
        break;
      }
      default: {  // binary, large binary
        auto decoded = arrow::util::base64_decode(v);
        if (!decoded.ok()) return bad(InvalidArgument("'{}' is not base64", v));
        if (type.id() == arrow::Type::BINARY) {
          ARROW_RETURN_NOT_OK(static_cast<arrow::BinaryBuilder&>(*builder).Append(*decoded));
        } else {
          ARROW_RETURN_NOT_OK(static_cast<arrow::LargeBinaryBuilder&>(*builder).Append(*decoded));
        }
      }
    }
  }
  return builder->Finish();
}

// Wraps a reader, conforming every batch to the target schema.
class ConformingReader : public arrow::RecordBatchReader {
 public:
  ConformingReader(std::shared_ptr<arrow::RecordBatchReader> inner, std::shared_ptr<arrow::Schema> target,
                   std::string source, std::shared_ptr<arrow::Schema> json_text_schema)
      : inner_(std::move(inner)), target_(std::move(target)), source_(std::move(source)),
        json_text_schema_(std::move(json_text_schema)) {}

  std::shared_ptr<arrow::Schema> schema() const override { return target_; }

  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    std::shared_ptr<arrow::RecordBatch> batch;
    auto st = inner_->ReadNext(&batch);
    if (!st.ok()) return WithContext(st, "reading " + source_);
    if (!batch) {
      *out = nullptr;
      return Status::OK();
    }
    if (json_text_schema_) {
      ARROW_ASSIGN_OR_RAISE(batch, ParseJsonTextColumns(batch));
    }
    ARROW_ASSIGN_OR_RAISE(*out, ConformBatch(batch, target_, source_));
    return Status::OK();
  }

 private:
  Result<std::shared_ptr<arrow::RecordBatch>> ParseJsonTextColumns(const std::shared_ptr<arrow::RecordBatch>& batch) {
    arrow::ArrayVector columns = batch->columns();
    arrow::FieldVector fields = batch->schema()->fields();
    for (int i = 0; i < batch->num_columns(); ++i) {
      auto target_field = target_->GetFieldByName(fields[static_cast<size_t>(i)]->name());
      if (!target_field || !IsTextEncodedInJson(*target_field->type())) continue;
      LS_ASSIGN_OR_RAISE_CTX(columns[static_cast<size_t>(i)],
                             ParseTextColumn(*columns[static_cast<size_t>(i)], *target_field->type(),
                                             target_field->name()),
                             "reading {}", source_);
      fields[static_cast<size_t>(i)] = target_field;
    }
    return arrow::RecordBatch::Make(arrow::schema(fields), batch->num_rows(), columns);
  }

  std::shared_ptr<arrow::RecordBatchReader> inner_;
  std::shared_ptr<arrow::Schema> target_;
  std::string source_;
  std::shared_ptr<arrow::Schema> json_text_schema_;
};

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenParquet(std::shared_ptr<arrow::io::RandomAccessFile> input,
                                                              const ReadOptions& options) {
  parquet::ArrowReaderProperties props;
  props.set_batch_size(options.batch_rows);
  parquet::arrow::FileReaderBuilder builder;
  try {
    ARROW_RETURN_NOT_OK(builder.Open(std::move(input)));
  } catch (const parquet::ParquetException& e) {
    return Corrupt("not a readable Parquet file: {}", e.what());
  }
  builder.properties(props);
  ARROW_ASSIGN_OR_RAISE(auto reader, builder.Build());
  ARROW_ASSIGN_OR_RAISE(auto batches, reader->GetRecordBatchReader());
  // The RecordBatchReader keeps what it needs of the FileReader alive only while it lives, so hold both.
  struct Holder : arrow::RecordBatchReader {
    std::unique_ptr<parquet::arrow::FileReader> file;
    std::shared_ptr<arrow::RecordBatchReader> inner;
    std::shared_ptr<arrow::Schema> schema() const override { return inner->schema(); }
    Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override { return inner->ReadNext(out); }
  };
  auto holder = std::make_shared<Holder>();
  holder->file = std::move(reader);
  holder->inner = std::move(batches);
  return holder;
}

}  // namespace

Result<Format> ParseFormat(std::string_view name) {
  const std::string n = Lower(name);
  if (n == "parquet") return Format::kParquet;
  if (n == "csv") return Format::kCsv;
  if (n == "jsonl" || n == "json" || n == "ndjson") return Format::kJsonl;
  if (n == "table") return Format::kTable;
  return InvalidArgument("unknown format '{}' (choose table, jsonl, csv or parquet)", name);
}

Result<Format> FormatFromPath(std::string_view location) {
  const std::string l = Lower(location);
  if (EndsWith(l, ".parquet") || EndsWith(l, ".parq")) return Format::kParquet;
  if (EndsWith(l, ".csv")) return Format::kCsv;
  if (EndsWith(l, ".jsonl") || EndsWith(l, ".ndjson") || EndsWith(l, ".json")) return Format::kJsonl;
  return InvalidArgument("cannot tell the format of '{}' from its extension (.parquet, .csv, .jsonl)", location);
}

Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                         const std::shared_ptr<arrow::Schema>& target,
                                                         const std::string& source) {
  std::set<std::string> wanted;
  for (const auto& f : target->fields()) wanted.insert(f->name());
  for (const auto& f : batch->schema()->fields()) {
    if (!wanted.count(f->name())) {
      return InvalidArgument("{}: column '{}' is not in the table schema", source, f->name());
    }
  }
  arrow::ArrayVector columns;
  for (const auto& f : target->fields()) {
    auto column = batch->GetColumnByName(f->name());
    if (!column) {
      if (!f->nullable()) return InvalidArgument("{}: required column '{}' is missing", source, f->name());
      ARROW_ASSIGN_OR_RAISE(column, arrow::MakeArrayOfNull(f->type(), batch->num_rows()));
    } else if (!column->type()->Equals(*f->type(), /*check_metadata=*/false)) {
      auto cast = arrow::compute::Cast(*column, f->type(), arrow::compute::CastOptions::Safe());
      if (!cast.ok()) {
        return InvalidArgument("{}: column '{}' of type {} cannot be converted to {}: {}", source, f->name(),
                               column->type()->ToString(), f->type()->ToString(), cast.status().message());
      }
      column = *cast;
    }
    if (!f->nullable() && column->null_count() > 0) {
      int64_t row = 0;
      while (row < column->length() && !column->IsNull(row)) ++row;
      return InvalidArgument("{}: required column '{}' is null in row {}", source, f->name(), row + 1);
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(target, batch->num_rows(), std::move(columns));
}

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenReader(const io::FileIO& io, const std::string& location,
                                                              Format format, const ReadOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto input, io.OpenInput(location));
  std::shared_ptr<arrow::RecordBatchReader> inner;
  std::shared_ptr<arrow::Schema> json_text_schema;
  switch (format) {
    case Format::kParquet: {
      LS_ASSIGN_OR_RAISE_CTX(inner, OpenParquet(input, options), "reading {}", location);
      break;
    }
    case Format::kCsv: {
      auto read = arrow::csv::ReadOptions::Defaults();
      read.block_size = 1 << 22;
      auto parse = arrow::csv::ParseOptions::Defaults();
      auto convert = arrow::csv::ConvertOptions::Defaults();
      convert.strings_can_be_null = true;
      if (options.target_schema) {
        for (const auto& f : options.target_schema->fields()) {
          if (f->type()->id() != arrow::Type::STRUCT && f->type()->id() != arrow::Type::LIST &&
              f->type()->id() != arrow::Type::MAP) {
            convert.column_types[f->name()] = f->type();
          }
        }
      }
      auto reader = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), input, read, parse, convert);
      if (!reader.ok()) return WithContext(reader.status(), "reading " + location);
      inner = *reader;
      break;
    }
    case Format::kJsonl: {
      auto read = arrow::json::ReadOptions::Defaults();
      read.block_size = 1 << 22;
      auto parse = arrow::json::ParseOptions::Defaults();
      if (options.target_schema) {
        arrow::FieldVector fields;
        for (const auto& f : options.target_schema->fields()) {
          fields.push_back(IsTextEncodedInJson(*f->type()) ? arrow::field(f->name(), arrow::utf8()) : f);
        }
        json_text_schema = arrow::schema(fields);
        parse.explicit_schema = json_text_schema;
        parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::Error;
      }
      auto reader = arrow::json::StreamingReader::Make(input, read, parse);
      if (!reader.ok()) return WithContext(reader.status(), "reading " + location);
      inner = *reader;
      break;
    }
    case Format::kTable: return InvalidArgument("the table format is for output only");
  }
  if (!options.target_schema) return inner;
  return std::make_shared<ConformingReader>(inner, options.target_schema, location, json_text_schema);
}

}  // namespace lakesync::tabular
