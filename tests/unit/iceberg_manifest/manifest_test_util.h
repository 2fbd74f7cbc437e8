// Helpers shared by the manifest unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "lakesync/common/status.h"

#define LS_TEST_CONCAT_INNER(a, b) a##b
#define LS_TEST_CONCAT(a, b) LS_TEST_CONCAT_INNER(a, b)
#define LS_ASSERT_OK_AND_ASSIGN_IMPL(res, lhs, rexpr)                    \
  auto res = (rexpr);                                                   \
  ASSERT_TRUE(res.ok()) << #rexpr << ": " << res.status().ToString();   \
  lhs = std::move(res).ValueUnsafe();
// Asserts that a Result is OK and moves its value into lhs.
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  LS_ASSERT_OK_AND_ASSIGN_IMPL(LS_TEST_CONCAT(_ls_test_res_, __COUNTER__), lhs, rexpr)
#define ASSERT_OK(expr)                                                         \
  do {                                                                          \
    ::lakesync::Status _ls_test_st = (expr);                                    \
    ASSERT_TRUE(_ls_test_st.ok()) << #expr << ": " << _ls_test_st.ToString();   \
  } while (0)

#include <memory>
#include <optional>
#include <vector>

#include "lakesync/iceberg/manifest/manifest_list.h"
#include "lakesync/iceberg/manifest/manifest_reader.h"
#include "lakesync/iceberg/manifest/manifest_writer.h"
#include "lakesync/iceberg/model/partition_spec.h"
#include "lakesync/iceberg/model/schema.h"

namespace lakesync::iceberg::testing {

inline NestedField Optional(int32_t id, std::string name, TypePtr type) {
  return NestedField{id, std::move(name), false, std::move(type), "", std::nullopt, std::nullopt};
}

// A table schema with a column of every primitive type a partition can be derived from.
inline SchemaPtr AllTypesSchema() {
  return std::make_shared<const Schema>(
      3, std::vector<NestedField>{
             Optional(1, "b", Type::Boolean()),          Optional(2, "i", Type::Int()),
             Optional(3, "l", Type::Long()),             Optional(4, "f", Type::Float()),
             Optional(5, "d", Type::Double()),           Optional(6, "dec", Type::Decimal(9, 2)),
             Optional(7, "dt", Type::Date()),            Optional(8, "t", Type::Time()),
             Optional(9, "ts", Type::Timestamp()),       Optional(10, "tstz", Type::TimestampTz()),
             Optional(11, "s", Type::String()),          Optional(12, "u", Type::Uuid()),
             Optional(13, "fx", Type::Fixed(3)),         Optional(14, "bin", Type::Binary()),
             Optional(15, "dec38", Type::Decimal(38, 10)), Optional(16, "tsns", Type::TimestampNs()),
         });
}

inline PartitionField PField(int32_t source, int32_t id, std::string name, std::string_view transform) {
  return PartitionField{source, id, std::move(name), *Transform::Parse(transform)};
}

// Identity on every column plus every other transform: every partition result type.
inline PartitionSpecPtr AllTransformsSpec() {
  return std::make_shared<const PartitionSpec>(
      7, std::vector<PartitionField>{
             PField(1, 1000, "b", "identity"),          PField(2, 1001, "i", "identity"),
             PField(3, 1002, "l", "identity"),          PField(4, 1003, "f", "identity"),
             PField(5, 1004, "d", "identity"),          PField(6, 1005, "dec", "identity"),
             PField(7, 1006, "dt", "identity"),         PField(8, 1007, "t", "identity"),
             PField(9, 1008, "ts", "identity"),         PField(10, 1009, "tstz", "identity"),
             PField(11, 1010, "s", "identity"),         PField(12, 1011, "u", "identity"),
             PField(13, 1012, "fx", "identity"),        PField(14, 1013, "bin", "identity"),
             PField(15, 1014, "dec38", "identity"),     PField(16, 1015, "tsns", "identity"),
             PField(9, 1016, "ts_day", "day"),          PField(9, 1017, "ts_month", "month"),
             PField(10, 1018, "tstz_hour", "hour"),     PField(7, 1019, "dt_year", "year"),
             PField(11, 1020, "s_bucket", "bucket[16]"), PField(11, 1021, "s_trunc", "truncate[2]"),
             PField(3, 1022, "l_void", "void"),         PField(6, 1023, "dec-trunc", "truncate[10]"),
         });
}

// Partition values for AllTransformsSpec; `i` varies them, every 4th tuple has nulls.
inline std::vector<Literal> AllTransformsValues(int64_t i) {
  const auto n = static_cast<int32_t>(i);
  std::vector<Literal> v = {
      Literal(i % 2 == 0),
      Literal(n - 5),
      Literal(int64_t{1} << 40 | i),
      Literal(static_cast<float>(i) * -0.5f),
      Literal(static_cast<double>(i) / 3.0),
      Literal(Decimal{-12345 + i}),
      Literal(int32_t{19000} + n),
      Literal(int64_t{3600000000} + i),
      Literal(int64_t{1700000000000000} + i),
      Literal(int64_t{-1} - i),
      Literal(std::string("str-") + std::to_string(i)),
      Literal(Bytes{std::string("\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee", 15) +
                    static_cast<char>(i)}),
      Literal(Bytes{std::string("\x01\x02", 2) + static_cast<char>(i)}),
      Literal(Bytes{std::string("\0bin", 4) + std::to_string(i)}),
      Literal(Decimal{static_cast<__int128>(-1) * (static_cast<__int128>(1) << 100) + i}),
      Literal(int64_t{1700000000000000123} + i),
      Literal(int32_t{19700} + n),
      Literal(int32_t{647} + n),
      Literal(int32_t{472222} + n),
      Literal(int32_t{52} + n),
      Literal(n % 16),
      Literal(std::string("st")),
      Literal::Null(),
      Literal(Decimal{-12340 + 10 * i}),
  };
  if (i % 4 == 3) {
    for (size_t k = 0; k < v.size(); k += 3) v[k] = Literal::Null();
  }
  return v;
}

// A data file with every optional field set.
inline std::shared_ptr<DataFile> FullDataFile(int64_t i, std::vector<Literal> partition) {
  auto f = std::make_shared<DataFile>();
  f->content = FileContent::kData;
  f->file_path = "s3://bucket/table/data/part-" + std::to_string(i) + ".parquet";
  f->file_format = FileFormat::kParquet;
  f->partition = std::move(partition);
  f->record_count = 100 + i;
  f->file_size_in_bytes = 4096 + i;
  f->column_sizes = {{1, 10 + i}, {2, 20}};
  f->value_counts = {{1, 100 + i}, {2, 100}};
  f->null_value_counts = {{1, 0}, {2, i}};
  f->nan_value_counts = {{4, 1}};
  f->lower_bounds = {{1, std::string("\x01", 1)}, {11, "a\0b" + std::to_string(i)}};
  f->upper_bounds = {{1, std::string("\x01", 1)}, {11, "zz"}};
  f->key_metadata = std::string("\xde\xad\xbe\xef", 4);
  f->split_offsets = {4, 1000 + i, 2000 + i};
  f->sort_order_id = 1;
  return f;
}

// A data file with only the required fields.
inline std::shared_ptr<DataFile> MinimalDataFile(int64_t i, std::vector<Literal> partition = {}) {
  auto f = std::make_shared<DataFile>();
  f->file_path = "file:///tmp/t/data/" + std::to_string(i) + ".parquet";
  f->partition = std::move(partition);
  f->record_count = i;
  f->file_size_in_bytes = 10 * i;
  return f;
}

inline ManifestEntry Entry(ManifestEntryStatus status, std::shared_ptr<const DataFile> file,
                           std::optional<int64_t> snapshot_id = std::nullopt, std::optional<int64_t> seq = std::nullopt,
                           std::optional<int64_t> file_seq = std::nullopt) {
  ManifestEntry e;
  e.status = status;
  e.snapshot_id = snapshot_id;
  e.sequence_number = seq;
  e.file_sequence_number = file_seq;
  e.data_file = std::move(file);
  return e;
}

struct WrittenManifest {
  std::string bytes;
  ManifestFile manifest;
};

// Writes entries and returns the bytes and list entry, with the list-assigned values a commit at
// `sequence_number` by `snapshot_id` would give.
inline Result<WrittenManifest> WriteManifest(ManifestWriterOptions options, const std::vector<ManifestEntry>& entries,
                                             int64_t sequence_number = 5) {
  if (options.location.empty()) options.location = "s3://bucket/table/metadata/m0.avro";
  const std::string location = options.location;
  ARROW_ASSIGN_OR_RAISE(auto writer, ManifestWriter::Make(options));
  for (const auto& e : entries) RETURN_NOT_OK(writer->Add(e));
  WrittenManifest out;
  ARROW_ASSIGN_OR_RAISE(out.bytes, writer->Finish());
  ARROW_ASSIGN_OR_RAISE(out.manifest, writer->ToManifestFile(location, static_cast<int64_t>(out.bytes.size())));
  if (out.manifest.sequence_number == kUnassignedSequenceNumber) out.manifest.sequence_number = sequence_number;
  if (out.manifest.min_sequence_number == kUnassignedSequenceNumber) out.manifest.min_sequence_number = sequence_number;
  return out;
}

inline void ExpectSameFile(const DataFile& a, const DataFile& b) {
  EXPECT_EQ(a.content, b.content);
  EXPECT_EQ(a.file_path, b.file_path);
  EXPECT_EQ(a.file_format, b.file_format);
  ASSERT_EQ(a.partition.size(), b.partition.size());
  for (size_t i = 0; i < a.partition.size(); ++i) {
    EXPECT_TRUE(a.partition[i] == b.partition[i]) << "partition value " << i;
  }
  EXPECT_EQ(a.record_count, b.record_count);
  EXPECT_EQ(a.file_size_in_bytes, b.file_size_in_bytes);
  EXPECT_EQ(a.column_sizes, b.column_sizes);
  EXPECT_EQ(a.value_counts, b.value_counts);
  EXPECT_EQ(a.null_value_counts, b.null_value_counts);
  EXPECT_EQ(a.nan_value_counts, b.nan_value_counts);
  EXPECT_EQ(a.lower_bounds, b.lower_bounds);
  EXPECT_EQ(a.upper_bounds, b.upper_bounds);
  EXPECT_EQ(a.key_metadata, b.key_metadata);
  EXPECT_EQ(a.split_offsets, b.split_offsets);
  EXPECT_EQ(a.equality_ids, b.equality_ids);
  EXPECT_EQ(a.sort_order_id, b.sort_order_id);
  EXPECT_EQ(a.first_row_id, b.first_row_id);
  EXPECT_EQ(a.referenced_data_file, b.referenced_data_file);
  EXPECT_EQ(a.content_offset, b.content_offset);
  EXPECT_EQ(a.content_size_in_bytes, b.content_size_in_bytes);
}

inline void ExpectSameManifest(const ManifestFile& a, const ManifestFile& b) {
  EXPECT_EQ(a.manifest_path, b.manifest_path);
  EXPECT_EQ(a.manifest_length, b.manifest_length);
  EXPECT_EQ(a.partition_spec_id, b.partition_spec_id);
  EXPECT_EQ(a.content, b.content);
  EXPECT_EQ(a.sequence_number, b.sequence_number);
  EXPECT_EQ(a.min_sequence_number, b.min_sequence_number);
  EXPECT_EQ(a.added_snapshot_id, b.added_snapshot_id);
  EXPECT_EQ(a.added_files_count, b.added_files_count);
  EXPECT_EQ(a.existing_files_count, b.existing_files_count);
  EXPECT_EQ(a.deleted_files_count, b.deleted_files_count);
  EXPECT_EQ(a.added_rows_count, b.added_rows_count);
  EXPECT_EQ(a.existing_rows_count, b.existing_rows_count);
  EXPECT_EQ(a.deleted_rows_count, b.deleted_rows_count);
  ASSERT_EQ(a.partitions.size(), b.partitions.size());
  for (size_t i = 0; i < a.partitions.size(); ++i) {
    EXPECT_EQ(a.partitions[i].contains_null, b.partitions[i].contains_null) << "summary " << i;
    EXPECT_EQ(a.partitions[i].contains_nan, b.partitions[i].contains_nan) << "summary " << i;
    EXPECT_EQ(a.partitions[i].lower_bound, b.partitions[i].lower_bound) << "summary " << i;
    EXPECT_EQ(a.partitions[i].upper_bound, b.partitions[i].upper_bound) << "summary " << i;
  }
  EXPECT_EQ(a.key_metadata, b.key_metadata);
  EXPECT_EQ(a.first_row_id, b.first_row_id);
  EXPECT_EQ(a.counts_unknown, b.counts_unknown);
}

}  // namespace lakesync::iceberg::testing
