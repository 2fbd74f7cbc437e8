#include "lakesync/plan/collapse_kernel_internal.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>
#include <bit>
#include <optional>

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

// The key column's values as words whose unsigned order is the values' order, for the integer-like
// storage types; nullopt for other types (and for keys with nulls, which prepared rows never have).
std::optional<std::vector<uint64_t>> OrderedWords(const arrow::Array& key) {
  if (key.null_count() > 0) return std::nullopt;
  const int64_t n = key.length();
  std::vector<uint64_t> words(static_cast<size_t>(n));
  auto fill = [&](auto tag, bool is_signed) {
    using T = decltype(tag);
    const T* values = key.data()->GetValues<T>(1);
    const uint64_t flip = is_signed ? (uint64_t{1} << 63) : 0;  // signed order as unsigned order
    for (int64_t i = 0; i < n; ++i) {
      words[static_cast<size_t>(i)] = static_cast<uint64_t>(static_cast<int64_t>(values[i])) ^ flip;
    }
  };
  switch (key.type_id()) {
    case arrow::Type::INT8: fill(int8_t{}, true); break;
    case arrow::Type::INT16: fill(int16_t{}, true); break;
    case arrow::Type::INT32: case arrow::Type::DATE32: case arrow::Type::TIME32: fill(int32_t{}, true); break;
    case arrow::Type::INT64: case arrow::Type::DATE64: case arrow::Type::TIME64: case arrow::Type::TIMESTAMP:
    case arrow::Type::DURATION:
      fill(int64_t{}, true);
      break;
    case arrow::Type::UINT8: fill(uint8_t{}, true); break;  // fits int64: its order is kept
    case arrow::Type::UINT16: fill(uint16_t{}, true); break;
    case arrow::Type::UINT32: fill(uint32_t{}, true); break;
    case arrow::Type::UINT64: {
      const uint64_t* values = key.data()->GetValues<uint64_t>(1);
      std::copy(values, values + n, words.begin());
      break;
    }
    default:
      return std::nullopt;
  }
  return words;
}

}  // namespace

// Why a sort of its own: Arrow's SortIndices of a record batch merge-sorts row indexes through a
// comparator that loads each compared row's key from the column (two cache misses per compare),
// and was ~10% of an apply's CPU. A single integer key is the common case (ids); its values are
// radix-sorted here (least significant digit first, 11 bits a pass, only over the bits in which
// the shard's keys differ), which is stable, so each key's changes stay in input order and only
// the runs of a key with several changes are then sorted by (sequence, rank, row). The order is the
// one SortIndices gives; the unit test compares them.
Result<std::vector<uint64_t>> SortChanges(const arrow::RecordBatch& prepared, const std::vector<int>& key_positions,
                                          int sequence_position, int rank_position) {
  const int64_t n = prepared.num_rows();
  std::optional<std::vector<uint64_t>> words;
  if (key_positions.size() == 1) words = OrderedWords(*StorageArray(prepared.column(key_positions[0])));
  if (!words) {
    // Sort keys refer to storage arrays: Arrow's sort kernels do not dispatch on extension types.
    arrow::FieldVector sort_fields;
    arrow::ArrayVector sort_columns;
    std::vector<cp::SortKey> sort_keys;
    for (int position : key_positions) {
      auto storage = StorageArray(prepared.column(position));
      sort_keys.emplace_back(static_cast<int>(sort_fields.size()));
      sort_fields.push_back(arrow::field("k" + std::to_string(sort_fields.size()), storage->type()));
      sort_columns.push_back(storage);
    }
    for (int position : {sequence_position, rank_position}) {
      sort_keys.emplace_back(static_cast<int>(sort_fields.size()));
      sort_fields.push_back(prepared.schema()->field(position));
      sort_columns.push_back(prepared.column(position));
    }
    auto sort_batch = arrow::RecordBatch::Make(arrow::schema(sort_fields), n, sort_columns);
    // sort_indices is stable, so changes with equal (key, sequence, rank) keep their input order.
    ARROW_ASSIGN_OR_RAISE(auto order_array, cp::SortIndices(arrow::Datum(sort_batch), cp::SortOptions(sort_keys)));
    const uint64_t* order = std::static_pointer_cast<arrow::UInt64Array>(order_array)->raw_values();
    return std::vector<uint64_t>(order, order + n);
  }

  struct Entry {
    uint64_t key;  // the word minus the smallest word
    uint64_t row;
  };
  uint64_t lo = ~uint64_t{0}, hi = 0;
  for (uint64_t w : *words) {
    lo = std::min(lo, w);
    hi = std::max(hi, w);
  }
  std::vector<Entry> entries(static_cast<size_t>(n)), scratch(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) entries[static_cast<size_t>(i)] = {(*words)[static_cast<size_t>(i)] - lo,
                                                                     static_cast<uint64_t>(i)};
  words.reset();
  constexpr int kDigitBits = 11;
  constexpr size_t kDigits = size_t{1} << kDigitBits;
  const int bits = n > 0 ? std::bit_width(hi - lo) : 0;
  std::vector<int64_t> starts(kDigits);
  for (int shift = 0; shift < bits; shift += kDigitBits) {
    std::fill(starts.begin(), starts.end(), 0);
    for (const Entry& e : entries) ++starts[(e.key >> shift) & (kDigits - 1)];
    int64_t sum = 0;
    for (auto& s : starts) {
      const int64_t count = s;
      s = sum;
      sum += count;
    }
    for (const Entry& e : entries) scratch[static_cast<size_t>(starts[(e.key >> shift) & (kDigits - 1)]++)] = e;
    entries.swap(scratch);
  }
  scratch = {};

  const int64_t* sequences =
      std::static_pointer_cast<arrow::Int64Array>(prepared.column(sequence_position))->raw_values();
  const int8_t* ranks = std::static_pointer_cast<arrow::Int8Array>(prepared.column(rank_position))->raw_values();
  std::vector<uint64_t> order(static_cast<size_t>(n));
  for (size_t start = 0; start < entries.size();) {
    size_t end = start + 1;
    while (end < entries.size() && entries[end].key == entries[start].key) ++end;
    for (size_t i = start; i < end; ++i) order[i] = entries[i].row;
    if (end - start > 1) {
      std::sort(order.begin() + static_cast<int64_t>(start), order.begin() + static_cast<int64_t>(end),
                [&](uint64_t a, uint64_t b) {
                  if (sequences[a] != sequences[b]) return sequences[a] < sequences[b];
                  if (ranks[a] != ranks[b]) return ranks[a] < ranks[b];
                  return a < b;
                });
    }
    start = end;
  }
  return order;
}

// The image columns of `full` (layout.narrow_schema), then the narrow rows: what sorting, the walk
// over each key's changes and the delete images read. Zero-copy without narrow rows.
Result<std::shared_ptr<arrow::RecordBatch>> ImageRows(const std::shared_ptr<arrow::RecordBatch>& full,
                                                      const std::shared_ptr<arrow::RecordBatch>& narrow,
                                                      const CollapseLayout& layout) {
  auto projected = ImageView(full, layout);
  if (!narrow || narrow->num_rows() == 0) return projected;
  return arrow::ConcatenateRecordBatches({projected, narrow});
}

Result<KernelResult> CollapseInMemory(const std::shared_ptr<arrow::RecordBatch>& full,
                                      const std::shared_ptr<arrow::RecordBatch>& narrow, const CollapseLayout& layout,
                                      bool upsert) {
  const auto& output_schema = layout.output_schema;
  const int num_outputs = output_schema->num_fields();
  const int num_images = static_cast<int>(layout.image_output_positions.size());
  ARROW_ASSIGN_OR_RAISE(auto images, ImageRows(full, narrow, layout));
  const int64_t n = images->num_rows();

  std::vector<std::shared_ptr<arrow::Array>> key_arrays;
  for (int position : layout.narrow_key_positions) key_arrays.push_back(StorageArray(images->column(position)));
  ARROW_ASSIGN_OR_RAISE(const std::vector<uint64_t> order,
                        SortChanges(*images, layout.narrow_key_positions, num_images, num_images + 1));
  const int8_t* ranks = std::static_pointer_cast<arrow::Int8Array>(images->column(num_images + 1))->raw_values();
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
    if (last_rank > kRankDelete) write_rows.push_back(last);  // INSERT or UPDATE_AFTER (a full row) survives
    if (upsert || first_rank != kRankInsert) {
      const bool old_image = first_rank == kRankUpdateBefore || first_rank == kRankDelete;
      delete_rows.push_back(old_image ? first : last);
      result.part.delete_is_old_image.push_back(old_image);
    }
    start = end;
  }

  arrow::ArrayVector outputs(full->columns().begin(), full->columns().begin() + num_outputs);
  auto output_columns = arrow::RecordBatch::Make(output_schema, full->num_rows(), std::move(outputs));
  ARROW_ASSIGN_OR_RAISE(result.part.rows, TakeRows(output_columns, std::move(write_rows)));
  // Delete images: the kept columns taken from the image rows, nulls in the dropped ones.
  const auto deletes = static_cast<int64_t>(delete_rows.size());
  arrow::ArrayVector kept(images->columns().begin(), images->columns().begin() + num_images);
  arrow::FieldVector kept_fields(images->schema()->fields().begin(), images->schema()->fields().begin() + num_images);
  ARROW_ASSIGN_OR_RAISE(auto taken, TakeRows(arrow::RecordBatch::Make(arrow::schema(kept_fields), n, std::move(kept)),
                                             std::move(delete_rows)));
  ARROW_ASSIGN_OR_RAISE(auto taken_batch, taken->CombineChunksToBatch());
  arrow::ArrayVector delete_columns;
  for (int c = 0; c < num_outputs; ++c) {
    const int p = layout.image_position_of_output[static_cast<size_t>(c)];
    if (p >= 0) {
      delete_columns.push_back(taken_batch->column(p));
    } else {
      ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(output_schema->field(c)->type(), deletes));
      delete_columns.push_back(std::move(nulls));
    }
  }
  result.part.deletes = arrow::Table::Make(output_schema, delete_columns, deletes);
  return result;
}

}  // namespace lakesync::plan::internal
