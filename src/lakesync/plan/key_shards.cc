#include "lakesync/plan/key_shards.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lakesync/plan/key_view_internal.h"

namespace lakesync::plan {
Result<std::vector<int32_t>> KeyShards(const arrow::RecordBatch& batch, const std::vector<std::string>& key_columns,
                                       int32_t num_shards) {
  if (num_shards < 1) return InvalidArgument("num_shards must be at least 1, got {}", num_shards);
  if (key_columns.empty()) return InvalidArgument("sharding by key needs at least one key column");
  std::vector<std::shared_ptr<arrow::Array>> columns;
  std::vector<uint8_t> null_row(static_cast<size_t>(batch.num_rows()), 0);
  for (const auto& name : key_columns) {
    auto column = batch.GetColumnByName(name);
    if (!column) return InvalidArgument("the changes have no key column '{}'", name);
    if (column->type_id() == arrow::Type::DICTIONARY) {
      const auto& dict = static_cast<const arrow::DictionaryType&>(*column->type());
      ARROW_ASSIGN_OR_RAISE(auto decoded, arrow::compute::Cast(*column, dict.value_type()));
      column = decoded;
    }
    ARROW_RETURN_NOT_OK(internal::CheckKeyType(name, column->type()));
    column = internal::StorageArray(column);
    if (column->null_count() > 0) {
      for (int64_t i = 0; i < column->length(); ++i) null_row[static_cast<size_t>(i)] |= column->IsNull(i);
    }
    columns.push_back(std::move(column));
  }
  std::vector<int32_t> shards(static_cast<size_t>(batch.num_rows()), 0);
  if (num_shards == 1 || batch.num_rows() == 0) return shards;
  ARROW_ASSIGN_OR_RAISE(auto view, iceberg::KeyColumns::Make(columns));
  const auto hashes = view.HashRows(kKeyShardSeed);
  for (size_t i = 0; i < hashes.size(); ++i) shards[i] = null_row[i] ? 0 : ShardOfHash(hashes[i], num_shards);
  return shards;
}

Result<std::vector<std::pair<int32_t, std::shared_ptr<arrow::RecordBatch>>>> SplitByKeyShard(
    const std::shared_ptr<arrow::RecordBatch>& batch, const std::vector<std::string>& key_columns,
    int32_t num_shards) {
  ARROW_ASSIGN_OR_RAISE(auto shards, KeyShards(*batch, key_columns, num_shards));
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(num_shards));
  for (size_t i = 0; i < shards.size(); ++i) rows[static_cast<size_t>(shards[i])].push_back(static_cast<int64_t>(i));
  std::vector<std::pair<int32_t, std::shared_ptr<arrow::RecordBatch>>> out;
  for (int32_t s = 0; s < num_shards; ++s) {
    const auto& r = rows[static_cast<size_t>(s)];
    if (r.empty()) continue;
    if (static_cast<int64_t>(r.size()) == batch->num_rows()) {
      out.emplace_back(s, batch);
      continue;
    }
    arrow::Int64Builder indices;
    ARROW_RETURN_NOT_OK(indices.AppendValues(r));
    ARROW_ASSIGN_OR_RAISE(auto idx, indices.Finish());
    ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(batch, idx));
    out.emplace_back(s, taken.record_batch());
  }
  return out;
}

}  // namespace lakesync::plan
