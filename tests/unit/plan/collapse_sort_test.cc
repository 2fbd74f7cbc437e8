// The collapse order of a single integer key (plan/collapse_kernel.cc sorts it itself) is the order
// Arrow's stable SortIndices gives by (key, sequence, rank): checked on random changes of every
// integer-like key type, with negative and extreme values, repeated keys, tied sequences and slices.
#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>

#include <limits>
#include <random>

#include "lakesync/plan/collapse_kernel_internal.h"
#include "test_support.h"

namespace lakesync::plan::internal {
namespace {

using lakesync::plan::testing::Batch;

std::vector<uint64_t> ArrowOrder(const arrow::RecordBatch& batch) {
  namespace cp = arrow::compute;
  cp::SortOptions options({cp::SortKey(0), cp::SortKey(1), cp::SortKey(2)});
  auto indices = cp::SortIndices(arrow::Datum(batch), options)
                     .ValueOrDie();
  auto values = std::static_pointer_cast<arrow::UInt64Array>(indices);
  return std::vector<uint64_t>(values->raw_values(), values->raw_values() + values->length());
}

// `keys` cast from int64 values to `type`; sequences from a small range so that keys tie on them.
std::shared_ptr<arrow::RecordBatch> Changes(const std::shared_ptr<arrow::DataType>& type,
                                            const std::vector<int64_t>& keys, std::mt19937_64& rng) {
  arrow::Int64Builder key_builder, seq;
  arrow::Int8Builder rank;
  for (int64_t k : keys) {
    EXPECT_TRUE(key_builder.Append(k).ok());
    EXPECT_TRUE(seq.Append(static_cast<int64_t>(rng() % 4)).ok());
    EXPECT_TRUE(rank.Append(static_cast<int8_t>(rng() % 4)).ok());
  }
  // Dates and timestamps are their integers viewed as the type (a cast would check ranges).
  const auto integer = type->id() == arrow::Type::DATE32      ? arrow::int32()
                       : type->id() == arrow::Type::TIMESTAMP ? arrow::int64()
                                                              : type;
  auto key = arrow::compute::Cast(*key_builder.Finish().ValueOrDie(), integer, arrow::compute::CastOptions::Unsafe())
                 .ValueOrDie()
                 ->View(type)
                 .ValueOrDie();
  auto schema = arrow::schema({arrow::field("k", type), arrow::field("_seq", arrow::int64()),
                               arrow::field("_rank", arrow::int8())});
  return arrow::RecordBatch::Make(schema, static_cast<int64_t>(keys.size()),
                                  {key, seq.Finish().ValueOrDie(), rank.Finish().ValueOrDie()});
}

TEST(CollapseSortTest, SingleIntegerKeysSortAsArrowSortsThem) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());  // Arrow's kernels, the oracle
  std::mt19937_64 rng(7);
  const std::vector<std::shared_ptr<arrow::DataType>> types = {
      arrow::int8(),  arrow::int16(), arrow::int32(), arrow::int64(), arrow::uint8(),
      arrow::uint16(), arrow::uint32(), arrow::uint64(), arrow::date32(), arrow::timestamp(arrow::TimeUnit::MICRO)};
  for (const auto& type : types) {
    for (int64_t spread : {int64_t{3}, int64_t{1000}, int64_t{1} << 40, std::numeric_limits<int64_t>::max()}) {
      SCOPED_TRACE(type->ToString() + " spread " + std::to_string(spread));
      std::vector<int64_t> keys;
      for (int i = 0; i < 5000; ++i) {
        int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(spread));
        keys.push_back(rng() % 2 ? k : -k);
      }
      keys.push_back(std::numeric_limits<int64_t>::min());
      keys.push_back(std::numeric_limits<int64_t>::max());
      auto batch = Changes(type, keys, rng);
      EXPECT_EQ(SortChanges(*batch, {0}, 1, 2).ValueOrDie(), ArrowOrder(*batch));
      auto slice = batch->Slice(17, 3000);  // offsets into the buffers
      EXPECT_EQ(SortChanges(*slice, {0}, 1, 2).ValueOrDie(), ArrowOrder(*slice));
    }
  }
  // Other keys take Arrow's sort: the same order by definition, checked once.
  auto strings = Batch(arrow::schema({arrow::field("k", arrow::utf8()), arrow::field("_seq", arrow::int64()),
                                               arrow::field("_rank", arrow::int8())}),
                                {R"(["b", "a", "b"])", "[2, 1, 1]", "[0, 3, 0]"});
  EXPECT_EQ(SortChanges(*strings, {0}, 1, 2).ValueOrDie(), (std::vector<uint64_t>{1, 2, 0}));
}

}  // namespace
}  // namespace lakesync::plan::internal
