// JSON Lines read against a table schema: each line is parsed on its own with nlohmann-json and its
// values appended to Arrow builders by the column types, so the reader accepts exactly the JSON Lines
// contract (tabular.h) and can say which line and column a bad value is in.
#include <arrow/builder.h>
#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include <algorithm>

#include "lakesync/formats/tabular/readers_internal.h"
#include "lakesync/formats/tabular/value_converters_internal.h"

namespace lakesync::tabular {
namespace {

constexpr int64_t kChunkBytes = 1 << 20;
// A batch ends after this much JSON text even when it has fewer than batch_rows rows, which bounds
// memory for wide rows.
constexpr size_t kBatchTextBytes = 16 << 20;

bool IsBlank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

class JsonlReader : public arrow::RecordBatchReader {
 public:
  JsonlReader(std::shared_ptr<arrow::io::InputStream> input, std::string location,
              std::shared_ptr<arrow::Schema> target, int64_t batch_rows, std::unique_ptr<ColumnBuilders> columns)
      : input_(std::move(input)), location_(std::move(location)), target_(std::move(target)),
        batch_rows_(std::max<int64_t>(1, batch_rows)), columns_(std::move(columns)),
        fields_(columns_->TakeConverters(), /*columns=*/true) {}

  std::shared_ptr<arrow::Schema> schema() const override { return target_; }

  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    ARROW_RETURN_NOT_OK(error_);
    int64_t rows = 0;
    size_t text_bytes = 0;
    std::string_view line;
    while (rows < batch_rows_ && text_bytes < kBatchTextBytes) {
      bool have_line = false;
      error_ = NextLine(&line, &have_line);
      ARROW_RETURN_NOT_OK(error_);
      if (!have_line) break;
      if (IsBlank(line)) continue;
      ++row_number_;
      error_ = AppendRow(line);
      ARROW_RETURN_NOT_OK(error_);
      ++rows;
      text_bytes += line.size();
    }
    if (rows == 0) return Status::OK();
    ARROW_ASSIGN_OR_RAISE(*out, columns_->Finish(rows));
    return Status::OK();
  }

 private:
  // The next line without its line break; `*have_line` false at the end of the input.
  Status NextLine(std::string_view* line, bool* have_line) {
    while (true) {
      const size_t newline = buffer_.find('\n', start_);
      if (newline != std::string::npos || (eof_ && start_ < buffer_.size())) {
        const size_t end = newline == std::string::npos ? buffer_.size() : newline;
        *line = std::string_view(buffer_).substr(start_, end - start_);
        if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
        start_ = newline == std::string::npos ? buffer_.size() : newline + 1;
        ++line_number_;
        if (line_number_ == 1 && line->substr(0, 3) == "\xEF\xBB\xBF") line->remove_prefix(3);  // UTF-8 BOM
        *have_line = true;
        return Status::OK();
      }
      if (eof_) {
        *have_line = false;
        return Status::OK();
      }
      // Keep the unfinished line and read the next chunk after it.
      buffer_.erase(0, start_);
      start_ = 0;
      const size_t kept = buffer_.size();
      buffer_.resize(kept + kChunkBytes);
      auto n = input_->Read(kChunkBytes, buffer_.data() + kept);
      if (!n.ok()) return WithContext(n.status(), "reading " + location_);
      buffer_.resize(kept + static_cast<size_t>(*n));
      if (*n == 0) eof_ = true;
    }
  }

  Status AppendRow(std::string_view line) {
    Status st = ParseJson(line, &row_);
    if (st.ok() && row_.kind != JsonNode::Kind::kObject) {
      st = InvalidArgument("expected a JSON object (one row per line), got {}", JsonSnippet(row_));
    }
    if (!st.ok()) {
      return MakeError(KindOf(st), fmt::format("{}: line {} (row {}): {}", location_, line_number_, row_number_,
                                               st.message()));
    }
    st = fields_.Append(row_, nullptr);
    if (!st.ok()) {
      return MakeError(KindOf(st), fmt::format("{}: line {} (row {}), {}", location_, line_number_, row_number_,
                                               st.message()));
    }
    return Status::OK();
  }

  std::shared_ptr<arrow::io::InputStream> input_;
  std::string location_;
  std::shared_ptr<arrow::Schema> target_;
  int64_t batch_rows_;
  std::unique_ptr<ColumnBuilders> columns_;
  ObjectFields fields_;
  JsonNode row_;
  std::string buffer_;
  size_t start_ = 0;
  bool eof_ = false;
  int64_t line_number_ = 0;
  int64_t row_number_ = 0;
  Status error_;  // once a read fails, every later read fails the same way
};

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenJsonlReader(std::shared_ptr<arrow::io::InputStream> input,
                                                                  std::string location,
                                                                  std::shared_ptr<arrow::Schema> target,
                                                                  int64_t batch_rows) {
  LS_ASSIGN_OR_RAISE_CTX(auto columns, ColumnBuilders::Make(target), "reading {}", location);
  return std::make_shared<JsonlReader>(std::move(input), std::move(location), std::move(target), batch_rows,
                                       std::move(columns));
}

}  // namespace lakesync::tabular
