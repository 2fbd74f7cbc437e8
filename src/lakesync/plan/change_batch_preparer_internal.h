// Turns input change batches into the collapser's working form: valid rows only, the table's columns
// in table order followed by the sequence number (int64) and the kind rank (int8). Invalid rows are
// reported by row number or set aside as dead letters.
#pragma once

#include <arrow/type_fwd.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/plan/change_collapser.h"

namespace lakesync::plan::internal {

// Where the collapser finds its columns in the input, and the schemas it produces.
struct CollapseLayout {
  std::shared_ptr<arrow::Schema> input_schema;
  std::vector<int> output_input_indices;  // input position of each output column
  std::vector<int> key_input_indices;     // input position of each key column
  std::vector<int> key_output_positions;  // position of each key column among the output columns
  int sequence_index = -1;
  int change_type_index = -1;             // -1: every row is an INSERT
  std::shared_ptr<arrow::Schema> output_schema;       // dictionary columns decoded
  std::shared_ptr<arrow::Schema> prepared_schema;     // output columns + sequence + rank
  std::shared_ptr<arrow::Schema> dead_letter_schema;  // input columns + "_error"
  // Delete images (CollapseOptions::delete_image_columns): the output columns they keep, ascending
  // (every output column without that option), and the position of each output column among them
  // (-1: dropped, null in delete images). UPDATE_BEFORE and DELETE rows narrowed to those columns have
  // `narrow_schema`: the kept columns, then sequence and rank; the keys sit at `narrow_key_positions`.
  std::vector<int> image_output_positions;
  std::vector<int> image_position_of_output;
  std::shared_ptr<arrow::Schema> narrow_schema;
  std::vector<int> narrow_key_positions;

  int sequence_position() const { return static_cast<int>(output_input_indices.size()); }
  int rank_position() const { return sequence_position() + 1; }
  // Whether delete images drop columns, i.e. whether narrowing saves memory.
  bool narrows() const { return image_output_positions.size() < output_input_indices.size(); }
};

// Errors: InvalidArgument naming the offending column or option.
Result<CollapseLayout> ResolveLayout(const std::shared_ptr<arrow::Schema>& input_schema,
                                     const CollapseOptions& options);

// The columns of prepared rows (`layout.prepared_schema`) that delete images keep, with sequence and
// rank: the rows as `layout.narrow_schema`, zero-copy.
std::shared_ptr<arrow::RecordBatch> ImageView(const std::shared_ptr<arrow::RecordBatch>& prepared,
                                              const CollapseLayout& layout);

struct PreparedBatch {
  std::shared_ptr<arrow::RecordBatch> rows;  // prepared_schema; never null, maybe empty
  std::shared_ptr<arrow::RecordBatch> dead;  // dead_letter_schema; null when every row was valid
  std::array<int64_t, 4> rank_counts{};      // valid rows per kind rank (UPDATE_BEFORE 0 .. INSERT 3)
  int64_t dropped_before_images = 0;         // upsert: valid UPDATE_BEFORE rows left out of `rows`
};

class ChangePreparer {
 public:
  ChangePreparer(CollapseLayout layout, const CollapseOptions& options);

  // `rows_before`: input rows of earlier batches, so that messages carry the row number across the
  // whole input. Errors: InvalidArgument naming the first invalid row (without dead letters) or a
  // sequence value that does not fit int64.
  Result<PreparedBatch> Prepare(const std::shared_ptr<arrow::RecordBatch>& batch, int64_t rows_before);

  const CollapseLayout& layout() const { return layout_; }

 private:
  static constexpr int8_t kNullCode = -1;
  static constexpr int8_t kUnknownCode = -2;

  int8_t RankOf(std::string_view code);
  Result<std::vector<int8_t>> Ranks(const arrow::RecordBatch& batch);
  std::string Reason(const arrow::RecordBatch& batch, const arrow::Array& sequence,
                     const std::vector<int8_t>& ranks, int64_t row) const;

  CollapseLayout layout_;
  CollapseOptions options_;
  std::string source_;
  std::vector<std::pair<std::string, int8_t>> rank_cache_;  // change code -> rank (or kUnknownCode)
};

}  // namespace lakesync::plan::internal
