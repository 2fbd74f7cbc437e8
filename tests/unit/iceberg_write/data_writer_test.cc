#include <arrow/api.h>
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <chrono>
#include <regex>
#include <set>

#include "../parquet_io/parquet_test_util.h"
#include "lakesync/formats/parquet/arrow_literal.h"
#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/iceberg/write/data_file_writer.h"

namespace lakesync::iceberg {
namespace {

using testing::Field;
using testing::TempDir;

SchemaPtr EventSchema() {
  return std::make_shared<const Schema>(
      0, std::vector<NestedField>{Field(1, "id", Type::Long(), true), Field(2, "cat", Type::String()),
                                  Field(3, "n", Type::Int()), Field(4, "ts", Type::TimestampTz()),
                                  Field(5, "day", Type::Date()), Field(6, "amount", Type::Decimal(10, 2)),
                                  Field(7, "payload", Type::Binary())});
}

// `rows` rows starting at id `first`; ts spans `span_days` from a year before the epoch.
std::shared_ptr<arrow::RecordBatch> Events(int64_t first, int64_t rows, uint64_t seed, int64_t span_days = 3 * 365) {
  std::mt19937_64 rng(seed);
  arrow::Int64Builder id;
  arrow::StringBuilder cat;
  arrow::Int32Builder n;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), arrow::default_memory_pool());
  arrow::Date32Builder day;
  arrow::Decimal128Builder amount(arrow::decimal128(10, 2));
  arrow::BinaryBuilder payload;
  for (int64_t i = 0; i < rows; ++i) {
    EXPECT_TRUE(id.Append(first + i).ok());
    if (rng() % 11 == 0) {
      EXPECT_TRUE(cat.AppendNull().ok());
    } else {
      EXPECT_TRUE(cat.Append(std::vector<std::string>{"red", "green", "blue", "ü"}[rng() % 4]).ok());
    }
    EXPECT_TRUE(n.Append(static_cast<int32_t>(rng() % 200) - 100).ok());
    EXPECT_TRUE(ts.Append(static_cast<int64_t>(rng() % (static_cast<uint64_t>(span_days) * 86400000000ULL)) -
                          365LL * 86400000000LL)
                    .ok());
    EXPECT_TRUE(day.Append(static_cast<int32_t>(rng() % 60) - 30).ok());
    EXPECT_TRUE(amount.Append(testing::ToDecimal128(testing::RandomUnscaled(rng, 6))).ok());
    EXPECT_TRUE(payload.Append(testing::RandomBytes(rng, 24)).ok());
  }
  return arrow::RecordBatch::Make(ToArrowSchema(*EventSchema()).ValueOrDie(), rows,
                                  {id.Finish().ValueOrDie(), cat.Finish().ValueOrDie(), n.Finish().ValueOrDie(),
                                   ts.Finish().ValueOrDie(), day.Finish().ValueOrDie(), amount.Finish().ValueOrDie(),
                                   payload.Finish().ValueOrDie()});
}

std::shared_ptr<arrow::Table> ReadFile(const DataFile& f, const SchemaPtr& schema) {
  auto path = LocalPathOf(f.file_path).ValueOrDie();
  auto r = parquet_io::ParquetDataReader::Open(testing::OpenIn(path), f.file_path, schema).ValueOrDie();
  return r->ReadAll().ValueOrDie();
}

DataWriterOptions BaseOptions(const TempDir& dir) {
  DataWriterOptions o;
  o.schema = EventSchema();
  o.table_location = "file://" + dir.path() + "/warehouse/db/events";
  o.output_factory = MakeLocalOutputFactory();
  o.partition_id = 3;
  o.task_id = 17;
  return o;
}

TEST(RollingDataWriter, UnpartitionedRollsAtTheTargetSize) {
  TempDir dir;
  DataWriterOptions o = BaseOptions(dir);
  o.properties = {{"write.target-file-size-bytes", "200000"}, {"write.parquet.row-group-size-bytes", "65536"}};
  o.sort_order_id = 1;
  auto w = RollingDataWriter::Make(o).ValueOrDie();
  std::vector<std::shared_ptr<arrow::RecordBatch>> input;
  for (int b = 0; b < 6; ++b) input.push_back(Events(b * 10000, 10000, 100 + b));
  for (const auto& b : input) LS_ASSERT_OK(w->Write(b));
  LS_ASSERT_OK_AND_ASSIGN(auto files, w->Close());
  ASSERT_GT(files.size(), 3u) << "60,000 rows of ~50 bytes should roll several 200 kB files";

  const std::regex name(R"(file://.*/warehouse/db/events/data/00003-17-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-(\d{5})\.parquet)");
  int64_t total = 0, next_id = 0;
  std::set<std::string> operation_ids;
  for (size_t k = 0; k < files.size(); ++k) {
    const DataFile& f = files[k];
    std::smatch m;
    ASSERT_TRUE(std::regex_match(f.file_path, m, name)) << f.file_path;
    EXPECT_EQ(std::stoi(m[1]), static_cast<int>(k + 1));
    operation_ids.insert(f.file_path.substr(f.file_path.find("-17-") + 4, 36));
    EXPECT_EQ(f.content, FileContent::kData);
    EXPECT_EQ(f.file_format, FileFormat::kParquet);
    EXPECT_EQ(f.spec_id, 0);
    EXPECT_TRUE(f.partition.empty());
    EXPECT_EQ(f.sort_order_id, std::optional<int32_t>(1));
    EXPECT_EQ(f.file_size_in_bytes, static_cast<int64_t>(std::filesystem::file_size(LocalPathOf(f.file_path).ValueOrDie())));
    // Rolled files end near the target: never far above it.
    EXPECT_LT(f.file_size_in_bytes, 2 * 200000) << f.file_path;
    auto t = ReadFile(f, o.schema);
    EXPECT_EQ(t->num_rows(), f.record_count);
    // Unpartitioned rows keep their order across files.
    auto ids = arrow::Concatenate(t->GetColumnByName("id")->chunks()).ValueOrDie();
    const auto& id_arr = static_cast<const arrow::Int64Array&>(*ids);
    for (int64_t r = 0; r < id_arr.length(); ++r) ASSERT_EQ(id_arr.Value(r), next_id++);
    EXPECT_EQ(f.lower_bounds.at(1), Literal(id_arr.Value(0)).ToBytes(*Type::Long()).ValueOrDie());
    total += f.record_count;
  }
  EXPECT_EQ(total, 60000);
  EXPECT_EQ(operation_ids.size(), 1u);
}

struct TransformCase {
  std::string name;
  int32_t source_id;
  Transform transform;
  int64_t span_days = 3 * 365;  // of the ts column
};

class PartitionedWrite : public ::testing::TestWithParam<TransformCase> {};

TEST_P(PartitionedWrite, RoutesEveryRowToItsPartitionsFiles) {
  const TransformCase& c = GetParam();
  TempDir dir;
  DataWriterOptions o = BaseOptions(dir);
  o.spec = std::make_shared<const PartitionSpec>(
      5, std::vector<PartitionField>{{c.source_id, 1000, "p", c.transform}});
  o.properties = {{"write.data.path", "file://" + dir.path() + "/elsewhere"}};
  o.max_open_files = 64;
  auto w = RollingDataWriter::Make(o).ValueOrDie();
  for (int b = 0; b < 3; ++b) LS_ASSERT_OK(w->Write(Events(b * 1000, 1000, 7 + b, c.span_days)));
  LS_ASSERT_OK_AND_ASSIGN(auto files, w->Close());
  const Type& source = *o.schema->FindFieldById(c.source_id)->type;
  const TypePtr result = c.transform.ResultType(o.schema->FindFieldById(c.source_id)->type).ValueOrDie();
  std::set<std::string> partitions;
  for (const auto& f : files) partitions.insert(PartitionKey(f.partition, {result}));
  // With no more partitions than open files, each partition is one file; otherwise files of the
  // least recently used partitions were closed and reopened.
  if (partitions.size() <= 64) {
    EXPECT_EQ(partitions.size(), files.size());
  }
  int64_t total = 0;
  for (const auto& f : files) {
    ASSERT_EQ(f.partition.size(), 1u);
    EXPECT_EQ(f.spec_id, 5);
    const std::string expected_dir =
        "file://" + dir.path() + "/elsewhere/" + o.spec->PartitionPath(*o.schema, f.partition) + "/";
    EXPECT_EQ(f.file_path.rfind(expected_dir, 0), 0u) << f.file_path << " vs " << expected_dir;
    auto t = ReadFile(f, o.schema);
    auto col = arrow::Concatenate(t->GetColumnByName(o.schema->FindColumnName(c.source_id))->chunks()).ValueOrDie();
    for (int64_t r = 0; r < col->length(); ++r) {
      auto v = parquet_io::LiteralFromArray(*col, r, source).ValueOrDie();
      ASSERT_EQ(c.transform.Apply(source, v).ValueOrDie(), f.partition[0]) << f.file_path << " row " << r;
    }
    total += t->num_rows();
  }
  EXPECT_EQ(total, 3000);
  EXPECT_GT(files.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Transforms, PartitionedWrite,
    ::testing::Values(TransformCase{"identity_string", 2, Transform::Identity()},
                      TransformCase{"identity_date", 5, Transform::Identity()},
                      TransformCase{"bucket_long", 1, Transform::Bucket(4)},
                      TransformCase{"bucket_binary", 7, Transform::Bucket(3)},
                      TransformCase{"truncate_int", 3, Transform::Truncate(50)},
                      TransformCase{"truncate_decimal", 6, Transform::Truncate(300000)},
                      TransformCase{"year", 4, Transform(Transform::Kind::kYear)},
                      TransformCase{"month", 4, Transform(Transform::Kind::kMonth)},
                      TransformCase{"day_of_date", 5, Transform(Transform::Kind::kDay)},
                      TransformCase{"day", 4, Transform(Transform::Kind::kDay), 40},
                      TransformCase{"hour", 4, Transform(Transform::Kind::kHour), 2}),
    [](const ::testing::TestParamInfo<TransformCase>& info) { return info.param.name; });

TEST(RollingDataWriter, BoundsOpenFilesAndAbortsCleanly) {
  TempDir dir;
  DataWriterOptions o = BaseOptions(dir);
  o.spec = std::make_shared<const PartitionSpec>(
      0, std::vector<PartitionField>{{3, 1000, "n_bucket", Transform::Bucket(6)}});
  o.max_open_files = 2;
  auto w = RollingDataWriter::Make(o).ValueOrDie();
  // Small batches interleave the six buckets, so files get closed and reopened.
  for (int b = 0; b < 20; ++b) LS_ASSERT_OK(w->Write(Events(b * 50, 50, 300 + b)));
  LS_ASSERT_OK_AND_ASSIGN(auto files, w->Close());
  int64_t total = 0;
  std::set<int32_t> buckets;
  for (const auto& f : files) {
    total += f.record_count;
    buckets.insert(f.partition[0].get<int32_t>());
  }
  EXPECT_EQ(total, 1000);
  EXPECT_EQ(buckets.size(), 6u);
  EXPECT_GT(files.size(), 6u);

  auto w2 = RollingDataWriter::Make(o).ValueOrDie();
  LS_ASSERT_OK(w2->Write(Events(0, 100, 1)));
  auto started = w2->Abort();
  EXPECT_FALSE(started.empty());
  for (const auto& loc : started) EXPECT_TRUE(std::filesystem::exists(LocalPathOf(loc).ValueOrDie())) << loc;
}

TEST(RollingDataWriter, RefusesBadSettings) {
  TempDir dir;
  DataWriterOptions o = BaseOptions(dir);
  o.properties = {{"write.target-file-size-bytes", "lots"}};
  EXPECT_EQ(KindOf(RollingDataWriter::Make(o).status()), ErrorKind::kInvalidArgument);
  o.properties = {{"write.object-storage.enabled", "true"}};
  EXPECT_EQ(KindOf(RollingDataWriter::Make(o).status()), ErrorKind::kUnsupported);
  o.properties = {{"write.format.default", "orc"}};
  EXPECT_EQ(KindOf(RollingDataWriter::Make(o).status()), ErrorKind::kUnsupported);
  o.properties = {{"write.metadata.metrics.column.cat", "truncate(-1)"}};
  EXPECT_EQ(KindOf(RollingDataWriter::Make(o).status()), ErrorKind::kInvalidArgument);
  o.properties = {};
  o.output_factory = nullptr;
  EXPECT_FALSE(RollingDataWriter::Make(o).ok());
  o = BaseOptions(dir);
  o.spec = std::make_shared<const PartitionSpec>(
      0, std::vector<PartitionField>{{2, 1000, "bad", Transform(Transform::Kind::kHour)}});
  EXPECT_FALSE(RollingDataWriter::Make(o).ok());
  EXPECT_EQ(DataLocation("s3://b/t/", {}), "s3://b/t/data");
  EXPECT_EQ(DataLocation("s3://b/t", {{"write.data.path", "s3://other/x/"}}), "s3://other/x");
}

// Throughput on 10M rows x 8 columns; run with --gtest_also_run_disabled_tests.
TEST(RollingDataWriter, DISABLED_Throughput10MRows) {
  TempDir dir;
  auto schema = std::make_shared<const Schema>(
      0, std::vector<NestedField>{Field(1, "id", Type::Long(), true), Field(2, "a", Type::Long()),
                                  Field(3, "b", Type::Int()), Field(4, "c", Type::Double()),
                                  Field(5, "d", Type::String()), Field(6, "ts", Type::TimestampTz()),
                                  Field(7, "day", Type::Date()), Field(8, "flag", Type::Boolean())});
  const int64_t total = 10'000'000, per_batch = 65536;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  std::mt19937_64 rng(1);
  for (int64_t first = 0; first < total; first += per_batch) {
    const int64_t n = std::min(per_batch, total - first);
    arrow::Int64Builder id, a;
    arrow::Int32Builder b;
    arrow::DoubleBuilder c;
    arrow::StringBuilder d;
    arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), arrow::default_memory_pool());
    arrow::Date32Builder day;
    arrow::BooleanBuilder flag;
    for (int64_t i = 0; i < n; ++i) {
      (void)id.Append(first + i);
      (void)a.Append(static_cast<int64_t>(rng() % 1000000));
      (void)b.Append(static_cast<int32_t>(rng() % 1000));
      (void)c.Append(static_cast<double>(rng() % 100000) / 100.0);
      (void)d.Append("customer-" + std::to_string(rng() % 50000));
      (void)ts.Append(1700000000000000LL + (first + i) * 1000);
      (void)day.Append(19000 + static_cast<int32_t>((first + i) / 500000));
      (void)flag.Append(rng() % 2 == 1);
    }
    batches.push_back(arrow::RecordBatch::Make(
        ToArrowSchema(*schema).ValueOrDie(), n,
        {id.Finish().ValueOrDie(), a.Finish().ValueOrDie(), b.Finish().ValueOrDie(), c.Finish().ValueOrDie(),
         d.Finish().ValueOrDie(), ts.Finish().ValueOrDie(), day.Finish().ValueOrDie(), flag.Finish().ValueOrDie()}));
  }
  auto cpu_seconds = [] {
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  auto run = [&](PartitionSpecPtr spec, const std::string& label) {
    DataWriterOptions o;
    o.schema = schema;
    o.spec = spec;
    o.table_location = "file://" + dir.path() + "/" + label;
    o.output_factory = MakeLocalOutputFactory();
    auto w = RollingDataWriter::Make(o).ValueOrDie();
    auto start = std::chrono::steady_clock::now();
    double cpu = cpu_seconds();
    for (const auto& b : batches) ASSERT_TRUE(w->Write(b).ok());
    auto files = w->Close().ValueOrDie();
    const double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double write_cpu = cpu_seconds() - cpu;
    start = std::chrono::steady_clock::now();
    cpu = cpu_seconds();
    int64_t rows = 0;
    for (const auto& f : files) {
      auto r = parquet_io::ParquetDataReader::Open(testing::OpenIn(LocalPathOf(f.file_path).ValueOrDie()), f.file_path,
                                                   schema)
                   .ValueOrDie();
      while (auto next = r->Next().ValueOrDie()) rows += next->batch->num_rows();
    }
    const double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double read_cpu = cpu_seconds() - cpu;
    ASSERT_EQ(rows, total);
    int64_t bytes = 0;
    for (const auto& f : files) bytes += f.file_size_in_bytes;
    std::printf("%s: %zu files, %.1f MB; write %.2f s wall / %.2f s CPU (%.0f rows per CPU s), read %.2f s wall / "
                "%.2f s CPU (%.0f rows per CPU s)\n",
                label.c_str(), files.size(), static_cast<double>(bytes) / 1e6, write_s, write_cpu, total / write_cpu,
                read_s, read_cpu, total / read_cpu);
  };
  run(PartitionSpec::Unpartitioned(), "unpartitioned");
  run(std::make_shared<const PartitionSpec>(
          1, std::vector<PartitionField>{{7, 1000, "day", Transform::Identity()}, {2, 1001, "a_bucket", Transform::Bucket(8)}}),
      "day_identity_bucket8");
}

}  // namespace
}  // namespace lakesync::iceberg
