#include "lakesync/plan/collapse_kernel_internal.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lakesync/plan/key_view_internal.h"

namespace lakesync::plan::internal {
namespace {

namespace cp = arrow::compute;

constexpr int8_t kRankUpdateBefore = 0;
constexpr int8_t kRankDelete = 1;
constexpr int8_t kRankInsert = 3;

Result<std::shared_ptr<arrow::Table>> TakeRows(const std::shared_ptr<arrow::RecordBatch>& columns,
                                               std::vector<uint64_t> indices) {
  const auto n = static_cast<int64_t>(indices.size());
  auto index_array = std::make_shared<arrow::UInt64Array>(n, arrow::Buffer::FromVector(std::move(indices)));
  ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(columns, index_array));
  return arrow::Table::FromRecordBatches(columns->schema(), {taken.record_batch()});
}

}  // namespace

Result<KernelResult> CollapseInMemory(const std::shared_ptr<arrow::RecordBatch>& prepared,
                                      const std::vector<int>& key_positions,
                                      const std::shared_ptr<arrow::Schema>& output_schema, bool upsert) {
  const int64_t n = prepared->num_rows();
  const int num_outputs = output_schema->num_fields();
  const int sequence_position = num_outputs;
  const int rank_position = num_outputs + 1;

  // Sort keys refer to storage arrays: Arrow's sort kernels do not dispatch on extension types.
  arrow::FieldVector sort_fields;
  arrow::ArrayVector sort_columns;
  std::vector<cp::SortKey> sort_keys;
  std::vector<std::shared_ptr<arrow::Array>> key_arrays;
  for (int position : key_positions) {
    auto storage = StorageArray(prepared->column(position));
    sort_keys.emplace_back(static_cast<int>(sort_fields.size()));
    sort_fields.push_back(arrow::field("k" + std::to_string(sort_fields.size()), storage->type()));
    sort_columns.push_back(storage);
    key_arrays.push_back(storage);
  }
  for (int position : {sequence_position, rank_position}) {
    sort_keys.emplace_back(static_cast<int>(sort_fields.size()));
    sort_fields.push_back(prepared->schema()->field(position));
    sort_columns.push_back(prepared->column(position));
  }
  auto sort_batch = arrow::RecordBatch::Make(arrow::schema(sort_fields), n, sort_columns);
  // sort_indices is stable, so changes with equal (key, sequence, rank) keep their input order.
  ARROW_ASSIGN_OR_RAISE(auto order_array, cp::SortIndices(arrow::Datum(sort_batch), cp::SortOptions(sort_keys)));
  const uint64_t* order = std::static_pointer_cast<arrow::UInt64Array>(order_array)->raw_values();
  const int8_t* ranks = std::static_pointer_cast<arrow::Int8Array>(prepared->column(rank_position))->raw_values();
  ARROW_ASSIGN_OR_RAISE(auto keys, iceberg::KeyColumns::Make(key_arrays));

  KernelResult result;
  std::vector<uint64_t> write_rows;
  std::vector<uint64_t> delete_rows;
  int64_t start = 0;
  while (start < n) {
    int64_t end = start + 1;
    while (end < n && keys.Equal(static_cast<int64_t>(order[end]), static_cast<int64_t>(order[start]))) ++end;
    const uint64_t first = order[start];
    const uint64_t last = order[end - 1];
    const int8_t first_rank = ranks[first];
    const int8_t last_rank = ranks[last];
    ++result.keys;
    if (last_rank > kRankDelete) write_rows.push_back(last);  // INSERT or UPDATE_AFTER survives
    if (upsert || first_rank != kRankInsert) {
      const bool old_image = first_rank == kRankUpdateBefore || first_rank == kRankDelete;
      delete_rows.push_back(old_image ? first : last);
      result.part.delete_is_old_image.push_back(old_image);
    }
    start = end;
  }

  arrow::ArrayVector outputs(prepared->columns().begin(), prepared->columns().begin() + num_outputs);
  auto output_columns = arrow::RecordBatch::Make(output_schema, n, std::move(outputs));
  ARROW_ASSIGN_OR_RAISE(result.part.rows, TakeRows(output_columns, std::move(write_rows)));
  ARROW_ASSIGN_OR_RAISE(result.part.deletes, TakeRows(output_columns, std::move(delete_rows)));
  return result;
}

}  // namespace lakesync::plan::internal
