#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/bloom_filter.h>
#include <parquet/bloom_filter_reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>

#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/formats/parquet/parquet_file_writer.h"
#include "parquet_test_util.h"

namespace lakesync::parquet_io {
namespace {

using iceberg::Literal;
using iceberg::Type;
using testing::AllTypesData;
using testing::Field;
using testing::OpenIn;
using testing::OpenOut;
using testing::TempDir;

Result<ParquetFileMetrics> WriteFile(const std::string& path, const iceberg::SchemaPtr& schema,
                                     const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                                     ParquetWriterOptions options = {}) {
  ARROW_ASSIGN_OR_RAISE(auto w, ParquetFileWriter::Make(OpenOut(path), "file://" + path, schema, options));
  for (const auto& b : batches) ARROW_RETURN_NOT_OK(w->Write(*b));
  return w->Close();
}

std::shared_ptr<arrow::Table> ReadBack(const std::string& path, const iceberg::SchemaPtr& schema) {
  auto r = ParquetDataReader::Open(OpenIn(path), path, schema);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  auto t = (*r)->ReadAll();
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

const iceberg::Type& TypeOf(const iceberg::Schema& schema, int32_t id) { return *schema.FindFieldById(id)->type; }

TEST(ParquetWriter, RoundTripsEveryTypeAndReportsExactMetrics) {
  TempDir dir;
  const std::string path = dir.File("all.parquet");
  AllTypesData data = testing::MakeAllTypes(5000, 42);
  ParquetWriterOptions options;
  options.parquet.row_group_size_bytes = 64 * 1024;  // several row groups
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches = {data.batch->Slice(0, 1200), data.batch->Slice(1200, 3000),
                                                              data.batch->Slice(4200)};
  LS_ASSERT_OK_AND_ASSIGN(auto m, WriteFile(path, data.schema, batches, options));

  // Read back: the same rows in the same Arrow schema.
  auto table = ReadBack(path, data.schema);
  ASSERT_EQ(table->num_rows(), 5000);
  auto expected = arrow::Table::FromRecordBatches({data.batch}).ValueOrDie();
  ASSERT_TRUE(table->schema()->Equals(*expected->schema(), /*check_metadata=*/true));
  for (int c = 0; c < expected->num_columns(); ++c) {
    EXPECT_TRUE(table->column(c)->Equals(*expected->column(c), arrow::EqualOptions::Defaults().nans_equal(true)))
        << "column " << expected->field(c)->name() << " changed in the round trip:\n"
        << table->column(c)->ToString().substr(0, 600) << "\nexpected\n" << expected->column(c)->ToString().substr(0, 600);
  }

  EXPECT_EQ(m.record_count, 5000);
  EXPECT_EQ(m.file_size_in_bytes, static_cast<int64_t>(std::filesystem::file_size(path)));
  EXPECT_GT(m.split_offsets.size(), 1u);
  EXPECT_EQ(m.split_offsets.front(), 4);  // right after the "PAR1" magic
  EXPECT_TRUE(std::is_sorted(m.split_offsets.begin(), m.split_offsets.end()));

  for (const auto& [id, e] : data.expect) {
    SCOPED_TRACE("field id " + std::to_string(id));
    EXPECT_EQ(m.value_counts.at(id), e.values);
    EXPECT_EQ(m.null_value_counts.at(id), e.nulls);
    EXPECT_GT(m.column_sizes.at(id), 0);
    const Type& type = TypeOf(*data.schema, id);
    if (type.id() == iceberg::TypeId::kFloat || type.id() == iceberg::TypeId::kDouble) {
      EXPECT_EQ(m.nan_value_counts.at(id), e.nans);
    } else {
      EXPECT_EQ(m.nan_value_counts.count(id), 0u);
    }
    if (!e.bounds) {
      EXPECT_EQ(m.lower_bounds.count(id), 0u);
      EXPECT_EQ(m.upper_bounds.count(id), 0u);
      continue;
    }
    ASSERT_TRUE(e.min.has_value());
    EXPECT_EQ(m.lower_bounds.at(id), e.min->ToBytes(type).ValueOrDie()) << "lower bound";
    EXPECT_EQ(m.upper_bounds.at(id), e.max->ToBytes(type).ValueOrDie()) << "upper bound";
  }
  // Column sizes add up to the data part of the file.
  int64_t total = 0;
  for (const auto& [id, size] : m.column_sizes) total += size;
  EXPECT_LT(total, m.file_size_in_bytes);

  iceberg::DataFile df;
  m.ApplyTo(df);
  EXPECT_EQ(df.record_count, 5000);
  EXPECT_EQ(df.lower_bounds, m.lower_bounds);
}

TEST(ParquetWriter, StoresFieldIdsAndSpecTypeAnnotations) {
  TempDir dir;
  const std::string path = dir.File("ids.parquet");
  AllTypesData data = testing::MakeAllTypes(50, 7);
  LS_ASSERT_OK(WriteFile(path, data.schema, {data.batch}).status());

  auto reader = parquet::ParquetFileReader::OpenFile(path);
  const parquet::SchemaDescriptor* descr = reader->metadata()->schema();
  std::map<std::string, const parquet::ColumnDescriptor*> by_path;
  for (int c = 0; c < descr->num_columns(); ++c) by_path[descr->Column(c)->path()->ToDotString()] = descr->Column(c);
  // Every leaf carries the Iceberg id of its field, at the spec's standard paths.
  const std::map<std::string, int> expected_ids = {
      {"b", 1},          {"i", 2},          {"dec38", 8},  {"u", 15},         {"st.a", 19},
      {"st.x", 21},      {"lst.list.element", 23},          {"m.key_value.key", 25},
      {"m.key_value.value", 26},            {"ls.list.element.f", 29}};
  for (const auto& [p, id] : expected_ids) {
    ASSERT_TRUE(by_path.count(p)) << p;
    EXPECT_EQ(by_path[p]->schema_node()->field_id(), id) << p;
  }
  // Group nodes carry ids too.
  const auto* root = descr->group_node();
  EXPECT_EQ(root->field(root->FieldIndex("st"))->field_id(), 18);
  EXPECT_EQ(root->field(root->FieldIndex("lst"))->field_id(), 22);
  EXPECT_EQ(root->field(root->FieldIndex("m"))->field_id(), 24);
  // Required int is REQUIRED; decimals by precision as INT32/INT64/FIXED; uuid annotated.
  EXPECT_EQ(by_path["i"]->schema_node()->repetition(), parquet::Repetition::REQUIRED);
  EXPECT_EQ(by_path["dec9"]->physical_type(), parquet::Type::INT32);
  EXPECT_EQ(by_path["dec18"]->physical_type(), parquet::Type::INT64);
  EXPECT_EQ(by_path["dec38"]->physical_type(), parquet::Type::FIXED_LEN_BYTE_ARRAY);
  EXPECT_TRUE(by_path["u"]->logical_type()->is_UUID());
  EXPECT_EQ(by_path["fx"]->type_length(), 5);
  EXPECT_TRUE(by_path["s"]->logical_type()->is_string());
  const auto& tstz = static_cast<const parquet::TimestampLogicalType&>(*by_path["tstz"]->logical_type());
  const auto& ts = static_cast<const parquet::TimestampLogicalType&>(*by_path["ts"]->logical_type());
  const auto& tsns = static_cast<const parquet::TimestampLogicalType&>(*by_path["tsns"]->logical_type());
  EXPECT_TRUE(tstz.is_adjusted_to_utc());
  EXPECT_FALSE(ts.is_adjusted_to_utc());
  EXPECT_EQ(ts.time_unit(), parquet::LogicalType::TimeUnit::MICROS);
  EXPECT_EQ(tsns.time_unit(), parquet::LogicalType::TimeUnit::NANOS);
  // The Iceberg schema JSON is in the footer, as Java writes it.
  auto kv = reader->metadata()->key_value_metadata();
  ASSERT_TRUE(kv);
  EXPECT_TRUE(kv->Contains("iceberg.schema"));
  // Default codec is zstd.
  EXPECT_EQ(reader->metadata()->RowGroup(0)->ColumnChunk(0)->compression(), arrow::Compression::ZSTD);
}

TEST(ParquetWriter, CompressionCodecFromTableProperties) {
  for (const auto& [name, codec] : std::vector<std::pair<std::string, arrow::Compression::type>>{
           {"snappy", arrow::Compression::SNAPPY},
           {"GZIP", arrow::Compression::GZIP},
           {"uncompressed", arrow::Compression::UNCOMPRESSED},
           {"zstd", arrow::Compression::ZSTD},
           {"lz4", arrow::Compression::LZ4}}) {
    TempDir dir;
    const std::string path = dir.File("c.parquet");
    AllTypesData data = testing::MakeAllTypes(100, 3);
    ParquetWriterOptions options;
    LS_ASSERT_OK_AND_ASSIGN(options.parquet,
                            ParquetWriteProperties::FromTableProperties(
                                {{"write.parquet.compression-codec", name}, {"write.parquet.compression-level", "3"}}));
    LS_ASSERT_OK(WriteFile(path, data.schema, {data.batch}, options).status());
    auto reader = parquet::ParquetFileReader::OpenFile(path);
    EXPECT_EQ(reader->metadata()->RowGroup(0)->ColumnChunk(0)->compression(), codec) << name;
    EXPECT_EQ(ReadBack(path, data.schema)->num_rows(), 100);
  }
  EXPECT_EQ(KindOf(ParquetWriteProperties::FromTableProperties({{"write.parquet.compression-codec", "lzo2"}}).status()),
            ErrorKind::kInvalidArgument);
  EXPECT_FALSE(ParquetWriteProperties::FromTableProperties({{"write.parquet.row-group-size-bytes", "-5"}}).ok());
  EXPECT_FALSE(ParquetWriteProperties::FromTableProperties({{"write.parquet.page-size-bytes", "12x"}}).ok());
  // Delete files prefer the write.delete.parquet.* variants.
  LS_ASSERT_OK_AND_ASSIGN(auto del, ParquetWriteProperties::FromTableProperties(
                                        {{"write.parquet.compression-codec", "snappy"},
                                         {"write.delete.parquet.compression-codec", "gzip"}},
                                        /*for_delete_files=*/true));
  EXPECT_EQ(del.codec, arrow::Compression::GZIP);
}

// Bloom filters from Iceberg's table properties, read back with Parquet's own bloom filter reader:
// every written value is found, and most values that were not written are not.
TEST(ParquetWriter, BloomFiltersFromTableProperties) {
  TempDir dir;
  const std::string path = dir.File("bloom.parquet");
  auto schema = std::make_shared<const iceberg::Schema>(
      0, std::vector<iceberg::NestedField>{Field(1, "id", Type::Long(), true), Field(2, "name", Type::String())});
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  for (int64_t i = 0; i < 1000; ++i) {
    ASSERT_TRUE(ids.Append(i * 7).ok());
    ASSERT_TRUE(names.Append("n" + std::to_string(i)).ok());
  }
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int64(), false),
                                                       arrow::field("name", arrow::utf8())}),
                                        1000, {ids.Finish().ValueOrDie(), names.Finish().ValueOrDie()});
  ParquetWriterOptions options;
  LS_ASSERT_OK_AND_ASSIGN(options.parquet, ParquetWriteProperties::FromTableProperties(
                                               {{"write.parquet.bloom-filter-enabled.column.id", "true"},
                                                {"write.parquet.bloom-filter-fpp.column.id", "0.01"},
                                                {"write.parquet.bloom-filter-max-bytes", "65536"}}));
  LS_ASSERT_OK(WriteFile(path, schema, {batch}, options).status());
  auto reader = parquet::ParquetFileReader::OpenFile(path);
  auto& blooms = reader->GetBloomFilterReader();
  auto row_group = blooms.RowGroup(0);
  auto id_filter = row_group->GetColumnBloomFilter(0);
  ASSERT_NE(id_filter, nullptr);
  EXPECT_LE(id_filter->GetBitsetSize(), 65536u);
  EXPECT_EQ(row_group->GetColumnBloomFilter(1), nullptr);  // only the column asked for
  int absent_hits = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    EXPECT_TRUE(id_filter->FindHash(id_filter->Hash(i * 7))) << i * 7;
    if (id_filter->FindHash(id_filter->Hash(i * 7 + 3))) ++absent_hits;
  }
  EXPECT_LT(absent_hits, 100);

  // Settings lakesync would not honour are refused, never accepted and ignored.
  EXPECT_EQ(KindOf(ParquetWriteProperties::FromTableProperties({{"write.parquet.bloom-filter-ndv.column.id", "5"}})
                       .status()),
            ErrorKind::kInvalidArgument);
  EXPECT_FALSE(ParquetWriteProperties::FromTableProperties({{"write.parquet.bloom-filter-fpp.column.id", "1.5"}}).ok());
  EXPECT_FALSE(ParquetWriteProperties::FromTableProperties({{"write.parquet.bloom-filter-fpp.column.id", "0.1"}}).ok());
  LS_ASSERT_OK_AND_ASSIGN(auto unknown_column, ParquetWriteProperties::FromTableProperties(
                                                   {{"write.parquet.bloom-filter-enabled.column.nope", "true"}}));
  ParquetWriterOptions bad;
  bad.parquet = unknown_column;
  auto refused = WriteFile(dir.File("bad.parquet"), schema, {batch}, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("nope"), std::string::npos);
}

TEST(ParquetWriter, MetricsModesPerColumn) {
  TempDir dir;
  const std::string path = dir.File("modes.parquet");
  auto schema = std::make_shared<const iceberg::Schema>(
      0, std::vector<iceberg::NestedField>{Field(1, "id", Type::Long()), Field(2, "name", Type::String()),
                                           Field(3, "blob", Type::Binary()), Field(4, "v", Type::Double()),
                                           Field(5, "st", Type::Struct({Field(6, "inner", Type::String())}))});
  const std::string long_name = "abcdefghijklmnopqrstuvwxyz";  // 26 code points
  arrow::Int64Builder id;
  arrow::StringBuilder name;
  arrow::BinaryBuilder blob;
  arrow::DoubleBuilder v;
  for (int k = 0; k < 10; ++k) {
    ASSERT_TRUE(id.Append(k).ok());
    ASSERT_TRUE(name.Append(k == 9 ? long_name : "b" + std::to_string(k)).ok());
    ASSERT_TRUE(blob.Append(std::string(20, static_cast<char>(0x10 + k))).ok());
    ASSERT_TRUE(v.Append(k * 1.5).ok());
  }
  auto arrow_schema = iceberg::ToArrowSchema(*schema).ValueOrDie();
  auto inner = std::make_shared<arrow::StringBuilder>();
  arrow::StructBuilder st(arrow_schema->field(4)->type(), arrow::default_memory_pool(), {inner});
  for (int k = 0; k < 10; ++k) {
    ASSERT_TRUE(st.Append().ok());
    ASSERT_TRUE(inner->Append("zzzz" + long_name).ok());
  }
  auto batch = arrow::RecordBatch::Make(arrow_schema, 10,
                                        {id.Finish().ValueOrDie(), name.Finish().ValueOrDie(),
                                         blob.Finish().ValueOrDie(), v.Finish().ValueOrDie(), st.Finish().ValueOrDie()});
  ParquetWriterOptions options;
  LS_ASSERT_OK_AND_ASSIGN(options.metrics, MetricsConfig::Make({{"write.metadata.metrics.default", "truncate(4)"},
                                                                 {"write.metadata.metrics.column.id", "none"},
                                                                 {"write.metadata.metrics.column.v", "counts"},
                                                                 {"write.metadata.metrics.column.blob", "full"},
                                                                 {"write.metadata.metrics.column.dropped", "full"}},
                                                                *schema));
  LS_ASSERT_OK_AND_ASSIGN(auto m, WriteFile(path, schema, {batch}, options));
  // none: nothing at all for id.
  EXPECT_EQ(m.column_sizes.count(1), 0u);
  EXPECT_EQ(m.value_counts.count(1), 0u);
  EXPECT_EQ(m.lower_bounds.count(1), 0u);
  // counts: counts but no bounds.
  EXPECT_EQ(m.value_counts.at(4), 10);
  EXPECT_EQ(m.nan_value_counts.at(4), 0);
  EXPECT_EQ(m.lower_bounds.count(4), 0u);
  // truncate(4) on strings: min "abcd" (prefix of the alphabet), max "b8" (short, unchanged).
  EXPECT_EQ(m.lower_bounds.at(2), "abcd");
  EXPECT_EQ(m.upper_bounds.at(2), "b8");
  // full on binary: whole 20-byte values.
  EXPECT_EQ(m.lower_bounds.at(3), std::string(20, '\x10'));
  EXPECT_EQ(m.upper_bounds.at(3), std::string(20, '\x19'));
  // Struct fields get bounds (Java does): "zzzzabcd…" → lower "zzzz", upper: "zzzz" cannot be
  // incremented at the last 'z'? It can: 'z' + 1 = '{'.
  EXPECT_EQ(m.lower_bounds.at(6), "zzzz");
  EXPECT_EQ(m.upper_bounds.at(6), "zzz{");
}

TEST(ParquetWriter, BoundTruncationFollowsTheSpec) {
  // Lower bounds are prefixes of N code points.
  EXPECT_EQ(TruncateUtf8Lower("abcdef", 3), "abc");
  EXPECT_EQ(TruncateUtf8Lower("\xc3\xa9\xc3\xa9\xc3\xa9", 2), "\xc3\xa9\xc3\xa9");  // éé
  EXPECT_EQ(TruncateUtf8Lower("ab", 3), "ab");
  // Upper bounds increment the last kept code point.
  EXPECT_EQ(TruncateUtf8Upper("abcdef", 3), std::optional<std::string>("abd"));
  EXPECT_EQ(TruncateUtf8Upper("ab", 3), std::optional<std::string>("ab"));
  EXPECT_EQ(TruncateUtf8Upper("abc", 3), std::optional<std::string>("abc"));
  // é (U+00E9) + 1 = ê (U+00EA).
  EXPECT_EQ(TruncateUtf8Upper("\xc3\xa9\xc3\xa9x", 2), std::optional<std::string>("\xc3\xa9\xc3\xaa"));
  // U+10FFFF cannot be incremented: the previous code point is, and the rest dropped.
  EXPECT_EQ(TruncateUtf8Upper("a\xf4\x8f\xbf\xbfzz", 2), std::optional<std::string>("b"));
  EXPECT_EQ(TruncateUtf8Upper("\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbfz", 2), std::nullopt);
  // U+D7FF + 1 would be a surrogate: the next code point is U+E000.
  EXPECT_EQ(TruncateUtf8Upper("\xed\x9f\xbfz", 1), std::optional<std::string>("\xee\x80\x80"));
  // Binary: bytes.
  EXPECT_EQ(TruncateBinaryLower(std::string("\x01\x02\x03", 3), 2), std::string("\x01\x02", 2));
  EXPECT_EQ(TruncateBinaryUpper(std::string("\x01\x02\x03", 3), 2), std::optional<std::string>("\x01\x03"));
  EXPECT_EQ(TruncateBinaryUpper(std::string("\x01\xff\x03", 3), 2), std::optional<std::string>("\x02"));
  EXPECT_EQ(TruncateBinaryUpper(std::string("\xff\xff\x03", 3), 2), std::nullopt);
  // Modes.
  EXPECT_EQ(MetricsMode::Parse(" Truncate(8) ").ValueOrDie(), MetricsMode::Truncate(8));
  EXPECT_EQ(MetricsMode::Parse("FULL").ValueOrDie(), MetricsMode::Full());
  EXPECT_FALSE(MetricsMode::Parse("truncate(0)").ok());
  EXPECT_FALSE(MetricsMode::Parse("truncate(x)").ok());
  EXPECT_FALSE(MetricsMode::Parse("some").ok());
}

TEST(ParquetWriter, WideTablesInferMetricsForTheFirstColumnsOnly) {
  std::vector<iceberg::NestedField> fields;
  for (int k = 1; k <= 5; ++k) fields.push_back(Field(k, "c" + std::to_string(k), Type::Int()));
  iceberg::Schema schema(0, fields);
  LS_ASSERT_OK_AND_ASSIGN(auto config,
                          MetricsConfig::Make({{"write.metadata.metrics.max-inferred-column-defaults", "3"}}, schema));
  EXPECT_EQ(config.ModeFor(3), MetricsMode::Truncate(16));
  EXPECT_EQ(config.ModeFor(4), MetricsMode::None());
  LS_ASSERT_OK_AND_ASSIGN(auto explicit_default,
                          MetricsConfig::Make({{"write.metadata.metrics.max-inferred-column-defaults", "3"},
                                               {"write.metadata.metrics.default", "counts"}},
                                              schema));
  EXPECT_EQ(explicit_default.ModeFor(5), MetricsMode::Counts());
  EXPECT_FALSE(MetricsConfig::Make({{"write.metadata.metrics.default", "everything"}}, schema).ok());
}

TEST(ParquetWriter, FloatBoundsIgnoreNaNAndOrderSignedZeros) {
  TempDir dir;
  const std::string path = dir.File("nan.parquet");
  auto schema = std::make_shared<const iceberg::Schema>(
      0, std::vector<iceberg::NestedField>{Field(1, "f", Type::Float()), Field(2, "d", Type::Double()),
                                           Field(3, "all_nan", Type::Double())});
  arrow::FloatBuilder f;
  arrow::DoubleBuilder d, n;
  ASSERT_TRUE(f.AppendValues({0.0f, -0.0f, std::nanf(""), 2.5f}).ok());
  ASSERT_TRUE(d.AppendValues({std::nan(""), 1.0, -0.0, 0.0}).ok());
  ASSERT_TRUE(n.AppendValues({std::nan(""), std::nan(""), std::nan(""), std::nan("")}).ok());
  auto batch = arrow::RecordBatch::Make(iceberg::ToArrowSchema(*schema).ValueOrDie(), 4,
                                        {f.Finish().ValueOrDie(), d.Finish().ValueOrDie(), n.Finish().ValueOrDie()});
  LS_ASSERT_OK_AND_ASSIGN(auto m, WriteFile(path, schema, {batch}));
  EXPECT_EQ(m.nan_value_counts.at(1), 1);
  EXPECT_EQ(m.nan_value_counts.at(2), 1);
  EXPECT_EQ(m.nan_value_counts.at(3), 4);
  EXPECT_EQ(m.lower_bounds.at(1), Literal(-0.0f).ToBytes(*Type::Float()).ValueOrDie());
  EXPECT_EQ(m.upper_bounds.at(1), Literal(2.5f).ToBytes(*Type::Float()).ValueOrDie());
  EXPECT_EQ(m.lower_bounds.at(2), Literal(-0.0).ToBytes(*Type::Double()).ValueOrDie());
  EXPECT_EQ(m.upper_bounds.at(2), Literal(1.0).ToBytes(*Type::Double()).ValueOrDie());
  // A column of NaNs only has no bounds.
  EXPECT_EQ(m.lower_bounds.count(3), 0u);
  EXPECT_EQ(m.upper_bounds.count(3), 0u);
  EXPECT_EQ(m.null_value_counts.at(3), 0);
}

TEST(ParquetWriter, RejectsMismatchedBatchesAndNullsInRequiredColumns) {
  TempDir dir;
  auto schema = std::make_shared<const iceberg::Schema>(
      0, std::vector<iceberg::NestedField>{Field(1, "id", Type::Long(), true), Field(2, "s", Type::String())});
  LS_ASSERT_OK_AND_ASSIGN(auto w, ParquetFileWriter::Make(OpenOut(dir.File("x.parquet")), "x.parquet", schema));
  arrow::Int64Builder id;
  ASSERT_TRUE(id.AppendValues({1, 2}).ok());
  ASSERT_TRUE(id.AppendNull().ok());
  arrow::StringBuilder s;
  ASSERT_TRUE(s.AppendValues({"a", "b", "c"}).ok());
  auto with_null = arrow::RecordBatch::Make(w->arrow_schema(), 3, {id.Finish().ValueOrDie(), s.Finish().ValueOrDie()});
  auto st = w->Write(*with_null);
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument);
  EXPECT_NE(st.message().find("required column 'id'"), std::string::npos) << st.message();
  // An int32 column is cast to the table's long; a string where a long belongs is refused.
  arrow::Int32Builder small;
  ASSERT_TRUE(small.AppendValues({7, 8}).ok());
  arrow::StringBuilder s2;
  ASSERT_TRUE(s2.AppendValues({"x", "y"}).ok());
  auto narrow = arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int32()), arrow::field("s", arrow::utf8())}),
                                         2, {small.Finish().ValueOrDie(), s2.Finish().ValueOrDie()});
  LS_ASSERT_OK(w->Write(*narrow));
  arrow::StringBuilder s3, s4;
  ASSERT_TRUE(s3.AppendValues({"x"}).ok());
  ASSERT_TRUE(s4.AppendValues({"y"}).ok());
  auto wrong = arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::utf8()), arrow::field("s", arrow::utf8())}),
                                        1, {s3.Finish().ValueOrDie(), s4.Finish().ValueOrDie()});
  EXPECT_FALSE(w->Write(*wrong).ok());
  LS_ASSERT_OK_AND_ASSIGN(auto m, w->Close());
  EXPECT_EQ(m.record_count, 2);
  EXPECT_EQ(m.lower_bounds.at(1), Literal(int64_t{7}).ToBytes(*Type::Long()).ValueOrDie());
  EXPECT_FALSE(w->Close().ok());
}

TEST(ParquetWriter, RowGroupsFollowTheByteBudget) {
  TempDir dir;
  const std::string path = dir.File("rg.parquet");
  auto schema = std::make_shared<const iceberg::Schema>(
      0, std::vector<iceberg::NestedField>{Field(1, "id", Type::Long(), true), Field(2, "s", Type::String())});
  std::mt19937_64 rng(5);
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (int b = 0; b < 10; ++b) {
    arrow::Int64Builder id;
    arrow::StringBuilder s;
    for (int k = 0; k < 20000; ++k) {
      ASSERT_TRUE(id.Append(static_cast<int64_t>(rng())).ok());
      ASSERT_TRUE(s.Append(testing::RandomBytes(rng, 8)).ok());
    }
    batches.push_back(arrow::RecordBatch::Make(iceberg::ToArrowSchema(*schema).ValueOrDie(), 20000,
                                               {id.Finish().ValueOrDie(), s.Finish().ValueOrDie()}));
  }
  ParquetWriterOptions options;
  options.parquet.row_group_size_bytes = 512 * 1024;
  LS_ASSERT_OK_AND_ASSIGN(auto w, ParquetFileWriter::Make(OpenOut(path), path, schema, options));
  int64_t last_estimate = 0;
  for (const auto& b : batches) {
    LS_ASSERT_OK(w->Write(*b));
    EXPECT_GT(w->EstimatedSize(), last_estimate);
    last_estimate = w->EstimatedSize();
  }
  LS_ASSERT_OK_AND_ASSIGN(auto m, w->Close());
  const int64_t size = m.file_size_in_bytes;
  // Random data barely compresses: about size / 512 KiB row groups, none far above the budget.
  auto reader = parquet::ParquetFileReader::OpenFile(path);
  const int groups = reader->metadata()->num_row_groups();
  EXPECT_GE(groups, static_cast<int>(size / (512 * 1024)) - 1);
  EXPECT_EQ(static_cast<int>(m.split_offsets.size()), groups);
  for (int g = 0; g + 1 < groups; ++g) {
    EXPECT_LT(reader->metadata()->RowGroup(g)->total_compressed_size(), 2 * 512 * 1024);
  }
  // The estimate was within 25% of the real size before the footer.
  EXPECT_NEAR(static_cast<double>(last_estimate), static_cast<double>(size), 0.25 * static_cast<double>(size));
}

}  // namespace
}  // namespace lakesync::parquet_io

namespace lakesync::parquet_io {
namespace {

TEST(ParquetWriter, LeavesV3UnknownColumnsOutOfTheFile) {
  testing::TempDir dir;
  const std::string path = dir.File("unknown.parquet");
  auto schema = std::make_shared<const iceberg::Schema>(
      0, std::vector<iceberg::NestedField>{testing::Field(1, "id", iceberg::Type::Long()),
                                           testing::Field(2, "later", iceberg::Type::Unknown())});
  arrow::Int64Builder id;
  ASSERT_TRUE(id.AppendValues({1, 2, 3}).ok());
  auto batch = arrow::RecordBatch::Make(iceberg::ToArrowSchema(*schema).ValueOrDie(), 3,
                                        {id.Finish().ValueOrDie(), arrow::MakeArrayOfNull(arrow::null(), 3).ValueOrDie()});
  auto w = ParquetFileWriter::Make(testing::OpenOut(path), path, schema).ValueOrDie();
  ASSERT_TRUE(w->Write(*batch).ok());
  auto m = w->Close().ValueOrDie();
  EXPECT_EQ(m.value_counts.count(2), 0u);
  auto reader = parquet::ParquetFileReader::OpenFile(path);
  EXPECT_EQ(reader->metadata()->num_columns(), 1);
  // Read back, the column is there again, all null.
  auto r = ParquetDataReader::Open(testing::OpenIn(path), path, schema).ValueOrDie();
  auto t = r->ReadAll().ValueOrDie();
  EXPECT_EQ(t->num_rows(), 3);
  EXPECT_EQ(t->GetColumnByName("later")->null_count(), 3);
}

}  // namespace
}  // namespace lakesync::parquet_io

namespace lakesync::parquet_io {
namespace {

using iceberg::Type;
using testing::Field;
using testing::OpenOut;

// parquet-mr's fallback rule, decided on the first batch: mostly-unique columns are written plain,
// repetitive ones keep their dictionary, and the values read back the same either way.
TEST(ParquetWriter, WritesColumnsWithoutADictionaryWhenItWouldNotShrinkThem) {
  testing::TempDir dir;
  auto schema = std::make_shared<const iceberg::Schema>(
      0, std::vector<iceberg::NestedField>{Field(1, "id", Type::Long(), true), Field(2, "name", Type::String()),
                                           Field(3, "day", Type::Date()), Field(4, "status", Type::String()),
                                           Field(5, "amount", Type::Decimal(18, 2)), Field(6, "half", Type::Long())});
  auto arrow_schema = iceberg::ToArrowSchema(*schema).ValueOrDie();
  auto make = [&](int64_t rows) {
    arrow::Int64Builder id, half;
    arrow::StringBuilder name, status;
    arrow::Date32Builder day;
    arrow::Decimal128Builder amount(arrow::decimal128(18, 2));
    std::mt19937_64 rng(11);
    for (int64_t k = 0; k < rows; ++k) {
      EXPECT_TRUE(id.Append(k * 7).ok());
      EXPECT_TRUE(name.Append("name-" + std::to_string(rng() % 1000000000)).ok());
      EXPECT_TRUE(day.Append(static_cast<int32_t>(19000 + k % 30)).ok());
      EXPECT_TRUE(status.Append(k % 3 == 0 ? "open" : "closed").ok());
      EXPECT_TRUE(amount.Append(arrow::Decimal128(static_cast<int64_t>(rng() % 100000000))).ok());
      EXPECT_TRUE(half.Append(k / 2).ok());  // each value twice: a dictionary still shrinks it
    }
    return arrow::RecordBatch::Make(arrow_schema, rows,
                                    {id.Finish().ValueOrDie(), name.Finish().ValueOrDie(), day.Finish().ValueOrDie(),
                                     status.Finish().ValueOrDie(), amount.Finish().ValueOrDie(),
                                     half.Finish().ValueOrDie()});
  };
  auto dictionary_columns = [](const std::string& path) {
    std::set<std::string> out;
    auto reader = parquet::ParquetFileReader::OpenFile(path);
    auto group = reader->metadata()->RowGroup(0);
    for (int c = 0; c < group->num_columns(); ++c) {
      if (group->ColumnChunk(c)->has_dictionary_page()) out.insert(group->ColumnChunk(c)->path_in_schema()->ToDotString());
    }
    return out;
  };

  const auto big = make(30000);
  EXPECT_EQ(ColumnsWithoutDictionaryGain(*big, 20000), (std::vector<std::string>{"id", "name", "amount"}));
  const std::string path = dir.File("plain.parquet");
  LS_ASSERT_OK(WriteFile(path, schema, {big->Slice(0, 25000), big->Slice(25000)}).status());
  EXPECT_EQ(dictionary_columns(path), (std::set<std::string>{"day", "status", "half"}));
  auto back = ReadBack(path, schema);
  ASSERT_EQ(back->num_rows(), 30000);
  for (int c = 0; c < big->num_columns(); ++c) {
    EXPECT_TRUE(back->column(c)->Equals(arrow::ChunkedArray(big->column(c)))) << big->schema()->field(c)->name();
  }

  // A first batch below kMinDictionarySampleRows decides nothing: every column keeps its dictionary.
  const auto small = make(kMinDictionarySampleRows - 1);
  EXPECT_TRUE(ColumnsWithoutDictionaryGain(*small, 20000).empty());
  const std::string small_path = dir.File("small.parquet");
  LS_ASSERT_OK(WriteFile(small_path, schema, {small}).status());
  EXPECT_EQ(dictionary_columns(small_path).size(), 6u);
  // The sample is the first sample_rows rows only.
  EXPECT_TRUE(ColumnsWithoutDictionaryGain(*big, kMinDictionarySampleRows - 1).empty());
}

}  // namespace
}  // namespace lakesync::parquet_io
