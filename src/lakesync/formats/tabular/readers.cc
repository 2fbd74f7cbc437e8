// OpenReader: Parquet through Arrow's reader (conformed batch by batch), JSON Lines and CSV with a
// target schema through our own readers (readers_internal.h), without one through Arrow's inferring
// readers.
#include <arrow/csv/api.h>
#include <arrow/io/interfaces.h>
#include <arrow/json/api.h>
#include <arrow/record_batch.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <optional>

#include "lakesync/common/executor.h"
#include "lakesync/common/text.h"
#include "lakesync/formats/parquet/parquet_properties.h"
#include "lakesync/formats/parquet/row_group_units.h"
#include "lakesync/formats/tabular/readers_internal.h"
#include "lakesync/formats/tabular/tabular.h"

namespace lakesync::tabular {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Conforms every batch of a reader that carries its own types (Parquet) to the target schema,
// counting rows so that errors name the row in the file.
class ConformingReader : public arrow::RecordBatchReader {
 public:
  ConformingReader(std::shared_ptr<arrow::RecordBatchReader> inner, std::shared_ptr<arrow::Schema> target,
                   std::string source)
      : inner_(std::move(inner)), target_(std::move(target)), source_(std::move(source)) {}

  std::shared_ptr<arrow::Schema> schema() const override { return target_; }

  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    std::shared_ptr<arrow::RecordBatch> batch;
    auto st = inner_->ReadNext(&batch);
    if (!st.ok()) return WithContext(st, "reading " + source_);
    if (!batch) {
      *out = nullptr;
      return Status::OK();
    }
    ARROW_ASSIGN_OR_RAISE(*out, ConformBatch(batch, target_, source_, rows_before_));
    rows_before_ += batch->num_rows();
    return Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> inner_;
  std::shared_ptr<arrow::Schema> target_;
  std::string source_;
  int64_t rows_before_ = 0;
};

// A Parquet reader of `input` (its footer read here, or the one given).
Result<std::unique_ptr<parquet::arrow::FileReader>> OpenFileReader(std::shared_ptr<arrow::io::RandomAccessFile> input,
                                                                   const parquet::ArrowReaderProperties& props,
                                                                   std::shared_ptr<parquet::FileMetaData> metadata = nullptr) {
  parquet::arrow::FileReaderBuilder builder;
  try {
    ARROW_RETURN_NOT_OK(builder.Open(std::move(input), parquet_io::ParquetReaderProperties(nullptr), std::move(metadata)));
  } catch (const parquet::ParquetException& e) {
    return Corrupt("not a readable Parquet file: {}", e.what());
  }
  builder.properties(props);
  return builder.Build();
}

// Decoded row groups of one input file in flight at most (uncompressed sizes from the footer): the
// read-ahead limit of RowGroupReader below.
constexpr int64_t kReadAheadBytes = 128LL << 20;

// What the row-group units of an input file share: the file (whose ReadAt is thread-safe), its footer
// and the reader properties.
struct InputFile {
  std::string location;
  std::shared_ptr<arrow::io::RandomAccessFile> input;
  std::shared_ptr<parquet::FileMetaData> metadata;
  parquet::ArrowReaderProperties props;
};

using InputUnits = parquet_io::RowGroupUnits<InputFile, parquet::arrow::FileReader, arrow::RecordBatchVector>;

// An input Parquet file read by row group on the executor's pool (parquet_io::RowGroupUnits): each
// unit decodes one row group into batches with a reader of its own over the shared footer, and the
// batches come back in file order, so the stream is the one a single reader gives while later row
// groups decode as the consumer works on earlier ones (for an apply: while it routes and prepares the
// changes). At most `window` row groups are in flight.
class RowGroupReader : public arrow::RecordBatchReader {
 public:
  RowGroupReader(std::shared_ptr<const InputFile> file, std::shared_ptr<arrow::Schema> schema, int window)
      : schema_(std::move(schema)) {
    InputUnits::Hooks hooks;
    hooks.plan = [file](size_t) -> Result<std::optional<InputUnits::Planned>> {
      InputUnits::Planned planned;
      planned.file = file;
      for (int g = 0; g < file->metadata->num_row_groups(); ++g) planned.row_groups.push_back(g);
      return std::optional<InputUnits::Planned>(std::move(planned));
    };
    hooks.open_row_group = [](const InputFile& f, int) { return OpenFileReader(f.input, f.props, f.metadata); };
    hooks.read = [](const InputFile&, int row_group,
                    parquet::arrow::FileReader& reader) -> Result<arrow::RecordBatchVector> {
      ARROW_ASSIGN_OR_RAISE(auto batches, reader.GetRecordBatchReader({row_group}));
      arrow::RecordBatchVector out;
      while (true) {
        std::shared_ptr<arrow::RecordBatch> batch;
        ARROW_RETURN_NOT_OK(batches->ReadNext(&batch));
        if (!batch) return out;
        out.push_back(std::move(batch));
      }
    };
    hooks.describe = [](const InputFile& f) { return f.location; };
    units_ = std::make_unique<InputUnits>(1, std::move(hooks));
    units_->Start(/*split=*/true, /*column_threads=*/false, window);
  }

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }

  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    while (pending_.empty()) {
      ARROW_ASSIGN_OR_RAISE(auto group, units_->Next());
      if (!group) {
        *out = nullptr;
        return Status::OK();
      }
      for (auto& batch : *group) pending_.push_back(std::move(batch));
    }
    *out = std::move(pending_.front());
    pending_.pop_front();
    return Status::OK();
  }

 private:
  std::shared_ptr<arrow::Schema> schema_;
  std::deque<std::shared_ptr<arrow::RecordBatch>> pending_;
  std::unique_ptr<InputUnits> units_;  // last: destroyed (waiting for its units) first
};

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenParquet(std::shared_ptr<arrow::io::RandomAccessFile> input,
                                                              const std::string& location, const ReadOptions& options) {
  parquet::ArrowReaderProperties props;
  props.set_batch_size(options.batch_rows);
  ARROW_ASSIGN_OR_RAISE(auto reader, OpenFileReader(input, props));
  // Row groups side by side when a few of them fit the read-ahead limit; the choice depends on the
  // file alone (not the thread count: one thread runs the same units in turn), so the batches are
  // the same for every thread count.
  const auto metadata = reader->parquet_reader()->metadata();
  if (const int window = parquet_io::ReadAheadWindow(*metadata, kReadAheadBytes); window > 0) {
    std::shared_ptr<arrow::Schema> schema;
    ARROW_RETURN_NOT_OK(reader->GetSchema(&schema));
    auto file = std::make_shared<InputFile>(InputFile{location, std::move(input), metadata, props});
    return std::make_shared<RowGroupReader>(std::move(file), std::move(schema), window);
  }
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
  const std::string n = AsciiLower(name);
  if (n == "parquet") return Format::kParquet;
  if (n == "csv") return Format::kCsv;
  if (n == "jsonl" || n == "json" || n == "ndjson") return Format::kJsonl;
  if (n == "table") return Format::kTable;
  return InvalidArgument("unknown format '{}' (choose table, jsonl, csv or parquet)", name);
}

Result<Format> FormatFromPath(std::string_view location) {
  const std::string l = AsciiLower(location);
  if (EndsWith(l, ".parquet") || EndsWith(l, ".parq")) return Format::kParquet;
  if (EndsWith(l, ".csv")) return Format::kCsv;
  if (EndsWith(l, ".jsonl") || EndsWith(l, ".ndjson") || EndsWith(l, ".json")) return Format::kJsonl;
  return InvalidArgument("cannot tell the format of '{}' from its extension (.parquet, .csv, .jsonl)", location);
}

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenReader(const io::FileIO& io, const std::string& location,
                                                              Format format, const ReadOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto input, io.OpenInput(location));
  const auto& target = options.target_schema;
  switch (format) {
    case Format::kParquet: {
      LS_ASSIGN_OR_RAISE_CTX(auto inner, OpenParquet(input, location, options), "reading {}", location);
      if (!target) return inner;
      return std::make_shared<ConformingReader>(std::move(inner), target, location);
    }
    case Format::kCsv: {
      if (target) return OpenCsvReader(std::move(input), location, target);
      // Without a table, Arrow infers the column types.
      auto read = arrow::csv::ReadOptions::Defaults();
      read.block_size = 1 << 22;
      auto parse = arrow::csv::ParseOptions::Defaults();
      parse.newlines_in_values = true;
      auto convert = arrow::csv::ConvertOptions::Defaults();
      convert.strings_can_be_null = true;
      auto reader = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), input, read, parse, convert);
      if (!reader.ok()) return WithContext(reader.status(), "reading " + location);
      return std::shared_ptr<arrow::RecordBatchReader>(*reader);
    }
    case Format::kJsonl: {
      if (target) return OpenJsonlReader(std::move(input), location, target, options.batch_rows);
      // Without a table (table create --schema-from, apply creating its target): lakesync's own
      // inference, then the same reader as with a table.
      ARROW_ASSIGN_OR_RAISE(auto inferred, InferJsonlSchema(io, location));
      return OpenJsonlReader(std::move(input), location, std::move(inferred), options.batch_rows);
    }
    case Format::kTable: return InvalidArgument("the table format is for output only");
  }
  return InvalidArgument("unknown input format");
}

}  // namespace lakesync::tabular
