#include "lakesync/common/constant_column.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace lakesync {
namespace {

std::shared_ptr<arrow::Array> Expected(const arrow::Scalar& value, int64_t rows) {
  auto made = arrow::MakeArrayFromScalar(value, rows);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return *made;
}

TEST(ConstantColumnTest, EveryLengthHoldsTheValueFromOffsetZero) {
  const auto value = std::make_shared<arrow::StringScalar>("insert");
  ConstantColumn column(value, 8);
  for (int64_t rows : {8, 3, 0, 8, 20, 5, 20}) {
    auto got = column.Get(rows);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ((*got)->length(), rows);
    EXPECT_EQ((*got)->offset(), 0);
    EXPECT_TRUE((*got)->Equals(*Expected(*value, rows))) << (*got)->ToString();
    ASSERT_TRUE((*got)->ValidateFull().ok());
  }
}

TEST(ConstantColumnTest, NullsTimestampsAndNestedNullsKeepTheirType) {
  const auto ts = std::make_shared<arrow::TimestampScalar>(1'700'000'000'000'000, arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"));
  const auto null_int = arrow::MakeNullScalar(arrow::int64());
  const auto null_struct = arrow::MakeNullScalar(arrow::struct_({arrow::field("a", arrow::int32())}));
  for (const auto& value : {std::shared_ptr<arrow::Scalar>(ts), null_int, null_struct}) {
    ConstantColumn column(value);
    auto got = column.Get(5);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE((*got)->type()->Equals(*value->type));
    EXPECT_TRUE((*got)->Equals(*Expected(*value, 5))) << (*got)->ToString();
  }
}

// Readers assemble the batches of one file on several pool threads at once.
TEST(ConstantColumnTest, ConcurrentCallersAllSeeTheValue) {
  const auto value = std::make_shared<arrow::Int64Scalar>(42);
  ConstantColumn column(value);
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t rows = 1; rows < 400; rows += 1 + t) {
        auto got = column.Get(rows);
        if (!got.ok() || (*got)->length() != rows || !(*got)->Equals(*Expected(*value, rows))) ++wrong[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace lakesync
