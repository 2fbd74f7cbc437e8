// Prints how long collapsing 1M changes takes (8 columns, int64 key, ~300k distinct keys). A report,
// not an assertion: timings vary with the machine and its load.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <random>

#include "lakesync/plan/change_collapser.h"

namespace lakesync::plan {
namespace {

std::shared_ptr<arrow::RecordBatch> MillionChanges(std::shared_ptr<arrow::Schema> schema) {
  constexpr int64_t kRows = 1'000'000;
  std::mt19937_64 rng(7);
  arrow::Int64Builder id, amount, seq;
  arrow::DoubleBuilder price;
  arrow::StringBuilder note, op;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO), arrow::default_memory_pool());
  arrow::BooleanBuilder flag;
  static const char* kOps[] = {"INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"};
  for (int64_t i = 0; i < kRows; ++i) {
    (void)id.Append(static_cast<int64_t>(rng() % 300'000));
    (void)amount.Append(static_cast<int64_t>(rng() % 1000));
    (void)price.Append(static_cast<double>(rng() % 10000) / 100.0);
    (void)note.Append("note-" + std::to_string(rng() % 100000));
    (void)ts.Append(1'700'000'000'000'000LL + i);
    (void)flag.Append(rng() % 2 == 0);
    (void)seq.Append(i / 1000);
    (void)op.Append(kOps[rng() % 4]);
  }
  return arrow::RecordBatch::Make(schema, kRows,
                                  {id.Finish().ValueOrDie(), amount.Finish().ValueOrDie(),
                                   price.Finish().ValueOrDie(), note.Finish().ValueOrDie(),
                                   ts.Finish().ValueOrDie(), flag.Finish().ValueOrDie(), seq.Finish().ValueOrDie(),
                                   op.Finish().ValueOrDie()});
}

double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

TEST(CollapseTiming, MillionChanges) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("amount", arrow::int64()),
                               arrow::field("price", arrow::float64()), arrow::field("note", arrow::utf8()),
                               arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
                               arrow::field("flag", arrow::boolean()), arrow::field("seq", arrow::int64()),
                               arrow::field("op", arrow::utf8())});
  auto batch = MillionChanges(schema);
  for (int64_t limit : {int64_t{1} << 30, int64_t{8} << 20}) {
    CollapseOptions options;
    options.key_columns = {"id"};
    options.sequence_column = "seq";
    options.change_type_column = "op";
    options.output_columns = {"id", "amount", "price", "note", "ts", "flag"};
    options.memory_limit_bytes = limit;
    const auto wall_start = std::chrono::steady_clock::now();
    const double cpu_start = CpuSeconds();
    auto collapser = ChangeCollapser::Make(schema, options).ValueOrDie();
    // Ten batches of 100k, the way a reader would deliver them.
    for (int64_t offset = 0; offset < batch->num_rows(); offset += 100'000) {
      ASSERT_TRUE(collapser->Add(batch->Slice(offset, 100'000)).ok());
    }
    int64_t rows = 0;
    int parts = 0;
    while (auto part = collapser->NextPart().ValueOrDie()) {
      rows += (*part).rows->num_rows();
      ++parts;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    const double cpu = CpuSeconds() - cpu_start;
    const auto& stats = collapser->stats();
    std::printf("[timing] 1M changes, limit %lld MiB: %.3f s wall, %.3f s CPU; %lld keys, %lld rows, %lld deletes, "
                "%d parts, %lld bytes spilled\n",
                static_cast<long long>(limit >> 20), wall, cpu, static_cast<long long>(stats.keys),
                static_cast<long long>(rows), static_cast<long long>(stats.keys_to_delete), parts,
                static_cast<long long>(stats.spilled_bytes));
    EXPECT_EQ(stats.changes, 1'000'000);
    EXPECT_EQ(stats.rows_to_write, rows);
  }
}

}  // namespace
}  // namespace lakesync::plan
