#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <arrow/json/from_string.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_reader.h>
#include <arrow/compute/api.h>

#include <fstream>
#include <thread>

#include "lakesync/formats/parquet/arrow_literal.h"
#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/formats/parquet/parquet_file_writer.h"
#include "lakesync/formats/parquet/parquet_properties.h"
#include "lakesync/formats/parquet/schema_projection.h"
#include "parquet_test_util.h"

namespace lakesync::parquet_io {
namespace {

using iceberg::Literal;
using iceberg::Type;
using testing::Field;
using testing::OpenIn;
using testing::OpenOut;
using testing::TempDir;

iceberg::SchemaPtr MakeSchema(std::vector<iceberg::NestedField> fields) {
  return std::make_shared<const iceberg::Schema>(0, std::move(fields));
}

std::shared_ptr<arrow::Array> FromJson(const std::shared_ptr<arrow::DataType>& type, const std::string& json) {
  auto r = arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(r.ok()) << r.status().ToString() << " for " << json;
  return r.ValueOrDie();
}

Status WriteWithLakesync(const std::string& path, const iceberg::SchemaPtr& schema,
                         const std::vector<std::string>& column_json, ParquetWriterOptions options = {}) {
  ARROW_ASSIGN_OR_RAISE(auto arrow_schema, iceberg::ToArrowSchema(*schema));
  std::vector<std::shared_ptr<arrow::Array>> cols;
  for (int i = 0; i < arrow_schema->num_fields(); ++i) {
    cols.push_back(FromJson(arrow_schema->field(i)->type(), column_json[static_cast<size_t>(i)]));
  }
  auto batch = arrow::RecordBatch::Make(arrow_schema, cols[0]->length(), cols);
  ARROW_ASSIGN_OR_RAISE(auto w, ParquetFileWriter::Make(OpenOut(path), path, schema, options));
  ARROW_RETURN_NOT_OK(w->Write(*batch));
  return w->Close().status();
}

// Writes a table with Arrow's own Parquet writer (no lakesync involved), as other tools would.
void WriteWithArrow(const std::string& path, const std::shared_ptr<arrow::Table>& table,
                    std::shared_ptr<parquet::ArrowWriterProperties> arrow_props =
                        parquet::default_arrow_writer_properties(),
                    int64_t chunk_size = 1024 * 1024) {
  auto st = parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), OpenOut(path), chunk_size,
                                       parquet::default_writer_properties(), arrow_props);
  ASSERT_TRUE(st.ok()) << st.ToString();
}

std::shared_ptr<arrow::Table> ReadAll(const std::string& path, const iceberg::SchemaPtr& schema,
                                      ParquetReadOptions options = {}) {
  auto r = ParquetDataReader::Open(OpenIn(path), path, schema, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return nullptr;
  auto t = (*r)->ReadAll();
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : nullptr;
}

std::shared_ptr<arrow::ChunkedArray> Col(const std::shared_ptr<arrow::Table>& t, const std::string& name) {
  return t->GetColumnByName(name);
}

void ExpectColumn(const std::shared_ptr<arrow::Table>& t, const std::string& name, const std::string& json) {
  auto col = Col(t, name);
  ASSERT_TRUE(col) << name;
  auto expected = FromJson(col->type(), json);
  auto actual = arrow::Concatenate(col->chunks()).ValueOrDie();
  EXPECT_TRUE(actual->Equals(*expected)) << name << ": got " << actual->ToString() << "\nexpected "
                                         << expected->ToString();
}

TEST(ParquetReader, ProjectsByFieldIdThroughRenamesAddsDropsAndPromotions) {
  TempDir dir;
  const std::string path = dir.File("evolve.parquet");
  auto v1 = MakeSchema({
      Field(1, "id", Type::Long(), true),
      Field(2, "name", Type::String()),
      Field(3, "score", Type::Float()),
      Field(4, "amount", Type::Decimal(9, 2)),
      Field(5, "cnt", Type::Int()),
      Field(6, "st", Type::Struct({Field(7, "a", Type::Int()), Field(8, "b", Type::String())})),
      Field(9, "tags", Type::List(Field(10, "element", Type::Int()))),
      Field(11, "props", Type::Map(Field(12, "key", Type::String(), true), Field(13, "value", Type::Float()))),
      Field(14, "old", Type::String()),
  });
  LS_ASSERT_OK(WriteWithLakesync(
      path, v1,
      {R"([1, 2, 3])", R"(["a", null, "c"])", R"([1.5, null, -2.25])", R"(["1.25", "-3.10", null])",
       R"([7, null, -9])", R"([{"a": 1, "b": "x"}, null, {"a": null, "b": "z"}])", R"([[1, 2], null, []])",
       R"([[["k", 0.5]], null, [["a", 1.5], ["b", null]]])", R"(["gone", "gone", "gone"])"}));

  iceberg::NestedField with_default = Field(16, "d", Type::Int());
  with_default.initial_default = 42;
  iceberg::NestedField top_default = Field(17, "added_default", Type::String(), true);
  top_default.initial_default = "x";
  auto v2 = MakeSchema({
      top_default,  // a new required column with an initial default, placed first
      Field(1, "id", Type::Long(), true),
      Field(2, "full_name", Type::String()),
      Field(3, "score", Type::Double()),
      Field(4, "amount", Type::Decimal(12, 2)),
      Field(5, "cnt", Type::Long()),
      Field(6, "st", Type::Struct({Field(8, "b_renamed", Type::String()), Field(7, "a", Type::Long()),
                                    Field(15, "c", Type::String()), with_default})),
      Field(9, "tags", Type::List(Field(10, "element", Type::Long()))),
      Field(11, "props", Type::Map(Field(12, "key", Type::String(), true), Field(13, "value", Type::Double()))),
      Field(18, "added_null", Type::Timestamp()),
  });
  auto t = ReadAll(path, v2);
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->schema()->Equals(*iceberg::ToArrowSchema(*v2).ValueOrDie(), true));
  ExpectColumn(t, "added_default", R"(["x", "x", "x"])");
  ExpectColumn(t, "id", "[1, 2, 3]");
  ExpectColumn(t, "full_name", R"(["a", null, "c"])");
  ExpectColumn(t, "score", "[1.5, null, -2.25]");
  ExpectColumn(t, "amount", R"(["1.25", "-3.10", null])");
  ExpectColumn(t, "cnt", "[7, null, -9]");
  ExpectColumn(t, "st",
               R"([{"b_renamed": "x", "a": 1, "c": null, "d": 42}, null, {"b_renamed": "z", "a": null, "c": null, "d": 42}])");
  ExpectColumn(t, "tags", "[[1, 2], null, []]");
  ExpectColumn(t, "props", R"([[["k", 0.5]], null, [["a", 1.5], ["b", null]]])");
  ExpectColumn(t, "added_null", "[null, null, null]");
}

TEST(ParquetReader, RefusesTypeChangesThatAreNotPromotions) {
  TempDir dir;
  const std::string path = dir.File("types.parquet");
  auto v1 = MakeSchema({Field(1, "day", Type::Date()), Field(2, "n", Type::Long()), Field(3, "s", Type::String())});
  LS_ASSERT_OK(WriteWithLakesync(path, v1, {"[1, 2]", "[5, 6]", R"(["a", "b"])"}));
  auto open = [&](iceberg::SchemaPtr schema) { return ParquetDataReader::Open(OpenIn(path), path, schema).status(); };
  // date → timestamp is not a promotion.
  Status st = open(MakeSchema({Field(1, "day", Type::Timestamp())}));
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument);
  EXPECT_NE(st.message().find("'day'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  // long → int narrows; string → binary is the same bytes and allowed.
  EXPECT_FALSE(open(MakeSchema({Field(2, "n", Type::Int())})).ok());
  EXPECT_TRUE(open(MakeSchema({Field(3, "s", Type::Binary())})).ok());
  EXPECT_FALSE(open(MakeSchema({Field(3, "s", Type::Struct({Field(9, "x", Type::Int())}))})).ok());
  // A required column that is missing and has no default.
  st = open(MakeSchema({Field(2, "n", Type::Long()), Field(4, "must", Type::Int(), true)}));
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument);
  EXPECT_NE(st.message().find("must"), std::string::npos) << st.message();
}

// Delta's overwrite can change a column's type; its change feed still reads the removed files.
TEST(ParquetReader, ConvertsOtherTypesValueByValueOnlyWhenAsked) {
  TempDir dir;
  const std::string path = dir.File("old_types.parquet");
  auto v1 = MakeSchema({Field(1, "qty", Type::Int()), Field(2, "price", Type::Double())});
  LS_ASSERT_OK(WriteWithLakesync(path, v1, {"[1, null, -3]", "[0.5, 2.0, null]"}));
  ParquetReadOptions convert;
  convert.convert_by_value = true;
  // int → double is no Iceberg promotion: refused by default, converted when asked.
  auto as_double = MakeSchema({Field(1, "qty", Type::Double())});
  EXPECT_EQ(KindOf(ParquetDataReader::Open(OpenIn(path), path, as_double).status()), ErrorKind::kInvalidArgument);
  auto t = ReadAll(path, as_double, convert);
  ASSERT_TRUE(t);
  ExpectColumn(t, "qty", "[1.0, null, -3.0]");
  // double → int converts the values that fit; a fraction is an error naming the column and the file.
  auto as_int = MakeSchema({Field(2, "price", Type::Int())});
  auto reader = ParquetDataReader::Open(OpenIn(path), path, as_int, convert);
  LS_ASSERT_OK(reader.status());
  auto read = (*reader)->ReadAll();
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("'price'"), std::string::npos) << read.status().message();
  EXPECT_NE(read.status().message().find(path), std::string::npos) << read.status().message();
  EXPECT_NE(read.status().message().find("double values read as int32"), std::string::npos)
      << read.status().message();
  // Types Arrow cannot convert at all stay refused (a string read as a struct).
  auto path2 = dir.File("strings.parquet");
  LS_ASSERT_OK(WriteWithLakesync(path2, MakeSchema({Field(1, "s", Type::String())}), {R"(["a"])"}));
  EXPECT_FALSE(ParquetDataReader::Open(OpenIn(path2), path2, MakeSchema({Field(1, "s", Type::Struct({}))}), convert).ok());
}

TEST(ParquetReader, FilesWithoutFieldIdsUseTheNameMappingOrColumnNames) {
  TempDir dir;
  const std::string path = dir.File("noids.parquet");
  // Written by plain Arrow without any field id metadata, with Arrow's default nested names.
  auto rec = arrow::struct_({arrow::field("x", arrow::int32()), arrow::field("y", arrow::utf8())});
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("record_id", arrow::int64()), arrow::field("payload", rec),
                     arrow::field("vals", arrow::list(arrow::int32())),
                     arrow::field("kv", arrow::map(arrow::utf8(), arrow::int64()))}),
      {FromJson(arrow::int64(), "[10, 20]"), FromJson(rec, R"([{"x": 1, "y": "p"}, {"x": 2, "y": null}])"),
       FromJson(arrow::list(arrow::int32()), "[[1], [2, 3]]"),
       FromJson(arrow::map(arrow::utf8(), arrow::int64()), R"([[["a", 1]], []])")});
  WriteWithArrow(path, table);

  auto schema = MakeSchema({Field(1, "id", Type::Long()),
                            Field(2, "data", Type::Struct({Field(3, "xx", Type::Long()), Field(4, "y", Type::String())})),
                            Field(5, "values", Type::List(Field(6, "element", Type::Long()))),
                            Field(7, "kv", Type::Map(Field(8, "key", Type::String(), true), Field(9, "value", Type::Long())))});
  LS_ASSERT_OK_AND_ASSIGN(auto mapping, NameMapping::Parse(R"([
      {"field-id": 1, "names": ["id", "record_id"]},
      {"field-id": 2, "names": ["data", "payload"], "fields": [
          {"field-id": 3, "names": ["x"]}, {"field-id": 4, "names": ["y"]}]},
      {"field-id": 5, "names": ["vals"], "fields": [{"field-id": 6, "names": ["element"]}]},
      {"field-id": 7, "names": ["kv"], "fields": [{"field-id": 8, "names": ["key"]}, {"field-id": 9, "names": ["value"]}]}
  ])"));
  ParquetReadOptions options;
  options.name_mapping = std::make_shared<NameMapping>(mapping);
  auto r = ParquetDataReader::Open(OpenIn(path), path, schema, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE((*r)->matched_by_field_id());
  auto t = (*r)->ReadAll().ValueOrDie();
  ExpectColumn(t, "id", "[10, 20]");
  ExpectColumn(t, "data", R"([{"xx": 1, "y": "p"}, {"xx": 2, "y": null}])");
  ExpectColumn(t, "values", "[[1], [2, 3]]");
  ExpectColumn(t, "kv", R"([[["a", 1]], []])");

  // Without a mapping, columns match by the read schema's names: only "kv" has the same name.
  auto by_name = ReadAll(path, schema);
  ASSERT_TRUE(by_name);
  ExpectColumn(by_name, "id", "[null, null]");
  ExpectColumn(by_name, "kv", R"([[["a", 1]], []])");
  auto same_names = MakeSchema({Field(1, "record_id", Type::Long()), Field(2, "payload", Type::Struct({Field(3, "y", Type::String())}))});
  auto t2 = ReadAll(path, same_names);
  ASSERT_TRUE(t2);
  ExpectColumn(t2, "record_id", "[10, 20]");
  ExpectColumn(t2, "payload", R"([{"y": "p"}, {"y": null}])");
}

// Dictionary-encoded strings with few distinct values are decoded as Arrow dictionaries and cast back
// (SmallDictionaryColumns); what the reader returns must be the same values and plain types, whether
// a column qualifies or not, across row groups and for a subset of them.
TEST(ParquetReader, SmallDictionaryColumnsReadAsPlainValues) {
  TempDir dir;
  const std::string path = dir.File("dictionaries.parquet");
  const int64_t rows = 6000;
  arrow::StringBuilder few, unique, medium, view_values;
  arrow::BinaryBuilder few_binary;
  const char* words[] = {"alpha", "update_postimage", "x"};
  for (int64_t i = 0; i < rows; ++i) {
    if (i % 7 == 3) {
      ASSERT_TRUE(few.AppendNull().ok());
    } else {
      ASSERT_TRUE(few.Append(words[i % 3]).ok());
    }
    ASSERT_TRUE(unique.Append("unique-value-" + std::to_string(i)).ok());
    ASSERT_TRUE(few_binary.Append(std::string(1, static_cast<char>(i % 2))).ok());
    ASSERT_TRUE(view_values.Append(words[(i / 5) % 3]).ok());
    ASSERT_TRUE(medium.Append("medium-sized-value-" + std::to_string(i % 300)).ok());
  }
  auto few_array = few.Finish().ValueOrDie();
  auto unique_array = unique.Finish().ValueOrDie();
  auto binary_array = few_binary.Finish().ValueOrDie();
  auto view_strings = view_values.Finish().ValueOrDie();
  auto medium_array = medium.Finish().ValueOrDie();
  // deltalake stores its strings as string_view (and says so in the stored Arrow schema).
  auto view_array = arrow::compute::Cast(*view_strings, arrow::utf8_view()).ValueOrDie();
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("few", arrow::utf8()), arrow::field("unique", arrow::utf8()),
                     arrow::field("few_binary", arrow::binary()), arrow::field("view", arrow::utf8_view()),
                     arrow::field("medium", arrow::utf8())}),
      {few_array, unique_array, binary_array, view_array, medium_array});
  // Two row groups of 3,000 rows; the unique column's dictionary outgrows 16 kB and falls back to
  // plain pages; the medium column stays dictionary-encoded but its ~7 kB of dictionary is more than
  // half a byte per row; the others have a few bytes of dictionary.
  auto props = parquet::WriterProperties::Builder().dictionary_pagesize_limit(16 << 10)->build();
  auto arrow_props = parquet::ArrowWriterProperties::Builder().store_schema()->build();
  ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), OpenOut(path), 3000, props, arrow_props)
                  .ok());

  auto metadata = parquet::ReadMetaData(OpenIn(path));
  ASSERT_EQ(metadata->num_row_groups(), 2);
  EXPECT_EQ(SmallDictionaryColumns(*metadata, {0, 1}), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(SmallDictionaryColumns(*metadata, {1}), (std::vector<int>{0, 2, 3}));
  EXPECT_TRUE(SmallDictionaryColumns(*metadata, {}).empty());

  auto schema = MakeSchema({Field(1, "few", Type::String()), Field(2, "unique", Type::String()),
                            Field(3, "few_binary", Type::Binary()), Field(4, "view", Type::String()),
                            Field(5, "medium", Type::String())});
  auto expect_rows = [&](const std::shared_ptr<arrow::Table>& t, int64_t offset, int64_t length) {
    ASSERT_TRUE(t);
    ASSERT_EQ(t->num_rows(), length);
    const std::shared_ptr<arrow::Array> want[] = {few_array, unique_array, binary_array, view_strings, medium_array};
    for (int c = 0; c < 5; ++c) {
      auto got = arrow::Concatenate(t->column(c)->chunks()).ValueOrDie();
      EXPECT_TRUE(got->type()->Equals(*want[c]->type())) << c << ": " << got->type()->ToString();
      EXPECT_TRUE(got->Equals(*want[c]->Slice(offset, length))) << "column " << c;
    }
  };
  ParquetReadOptions small_batches;
  small_batches.batch_size = 1000;
  expect_rows(ReadAll(path, schema, small_batches), 0, rows);
  ParquetReadOptions second_group = small_batches;
  second_group.row_groups = std::vector<int>{1};
  expect_rows(ReadAll(path, schema, second_group), 3000, 3000);
}

// Files whose stored Arrow schema says dictionary (pandas categoricals) or large_string: Arrow
// restores those types when it reads; the reader returns plain strings either way.
TEST(ParquetReader, StoredDictionaryAndLargeStringColumnsReadAsStrings) {
  TempDir dir;
  const std::string path = dir.File("stored_types.parquet");
  auto values = FromJson(arrow::utf8(), R"(["eu", "us", null, "eu", "ap", "us"])");
  auto categorical = arrow::compute::Cast(*values, arrow::dictionary(arrow::int8(), arrow::utf8())).ValueOrDie();
  auto large = arrow::compute::Cast(*values, arrow::large_utf8()).ValueOrDie();
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("categorical", categorical->type()), arrow::field("large", large->type())}),
      {categorical, large});
  WriteWithArrow(path, table, parquet::ArrowWriterProperties::Builder().store_schema()->build());
  auto schema = MakeSchema({Field(1, "categorical", Type::String()), Field(2, "large", Type::String())});
  auto t = ReadAll(path, schema);
  ASSERT_TRUE(t);
  for (const char* name : {"categorical", "large"}) {
    auto got = arrow::Concatenate(Col(t, name)->chunks()).ValueOrDie();
    EXPECT_TRUE(got->Equals(*values)) << name << ": " << got->ToString();
  }
}

TEST(ParquetReader, ConvertsTimestampUnitsAndInt96) {
  TempDir dir;
  auto id_meta = [](int id) { return arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)}); };
  // -1 ms before the epoch, the epoch, and 2017-11-16T22:31:08.123.
  auto ms = FromJson(arrow::timestamp(arrow::TimeUnit::MILLI), "[-1, 0, 1510871468123]");
  auto ns = FromJson(arrow::timestamp(arrow::TimeUnit::NANO, "UTC"), "[-1500, 0, 1510871468123456789]");
  auto table = arrow::Table::Make(arrow::schema({arrow::field("a", ms->type(), true, id_meta(1)),
                                                 arrow::field("b", ns->type(), true, id_meta(2))}),
                                  {ms, ns});
  const std::string units = dir.File("units.parquet");
  WriteWithArrow(units, table);
  auto schema = MakeSchema({Field(1, "a", Type::Timestamp()), Field(2, "b", Type::TimestampTz())});
  auto t = ReadAll(units, schema);
  ASSERT_TRUE(t);
  ExpectColumn(t, "a", "[-1000, 0, 1510871468123000]");
  // ns → µs keeps whole microseconds (the truncated digits are below the Iceberg unit).
  auto b = arrow::Concatenate(Col(t, "b")->chunks()).ValueOrDie();
  const auto& bt = static_cast<const arrow::TimestampArray&>(*b);
  EXPECT_EQ(bt.Value(1), 0);
  EXPECT_EQ(bt.Value(2), 1510871468123456);
  EXPECT_TRUE(std::abs(bt.Value(0) + 1) <= 1);

  // INT96, as Spark and Hive used to write timestamps.
  const std::string int96 = dir.File("int96.parquet");
  auto us = FromJson(arrow::timestamp(arrow::TimeUnit::MICRO), "[-86400000001, 0, 1510871468123456]");
  WriteWithArrow(int96, arrow::Table::Make(arrow::schema({arrow::field("t", us->type(), true, id_meta(1))}), {us}),
                 parquet::ArrowWriterProperties::Builder().enable_deprecated_int96_timestamps()->build());
  auto t96 = ReadAll(int96, MakeSchema({Field(1, "t", Type::Timestamp())}));
  ASSERT_TRUE(t96);
  ExpectColumn(t96, "t", "[-86400000001, 0, 1510871468123456]");
  auto t96ns = ReadAll(int96, MakeSchema({Field(1, "t", Type::TimestampNs())}));
  ASSERT_TRUE(t96ns);
  ExpectColumn(t96ns, "t", "[-86400000001000, 0, 1510871468123456000]");
}

class PositionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("pos.parquet");
    schema_ = MakeSchema({Field(1, "pos_copy", Type::Long(), true), Field(2, "s", Type::String())});
    ParquetWriterOptions options;
    options.parquet.row_group_size_bytes = 16 * 1024;
    auto w = ParquetFileWriter::Make(OpenOut(path_), path_, schema_, options).ValueOrDie();
    std::mt19937_64 rng(11);
    for (int b = 0; b < 10; ++b) {
      arrow::Int64Builder p;
      arrow::StringBuilder s;
      for (int k = 0; k < 2000; ++k) {
        ASSERT_TRUE(p.Append(b * 2000 + k).ok());
        ASSERT_TRUE(s.Append(testing::RandomBytes(rng, 6)).ok());
      }
      auto batch = arrow::RecordBatch::Make(w->arrow_schema(), 2000, {p.Finish().ValueOrDie(), s.Finish().ValueOrDie()});
      ASSERT_TRUE(w->Write(*batch).ok());
    }
    metrics_ = w->Close().ValueOrDie();
  }

  // Checks that every batch's rows carry their own file positions.
  int64_t CheckPositions(ParquetDataReader& r) {
    int64_t rows = 0;
    while (true) {
      auto next = r.Next();
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok() || !*next) break;
      const auto& pb = **next;
      EXPECT_LE(pb.batch->num_rows(), 700);
      const auto& ids = static_cast<const arrow::Int64Array&>(*pb.batch->column(0));
      for (int64_t k = 0; k < ids.length(); ++k) EXPECT_EQ(ids.Value(k), pb.first_row_position + k);
      const auto& info = r.row_groups()[static_cast<size_t>(pb.row_group)];
      EXPECT_GE(pb.first_row_position, info.first_row);
      EXPECT_LE(pb.first_row_position + pb.batch->num_rows(), info.first_row + info.num_rows);
      rows += pb.batch->num_rows();
    }
    return rows;
  }

  TempDir dir_;
  std::string path_;
  iceberg::SchemaPtr schema_;
  ParquetFileMetrics metrics_;
};

TEST_F(PositionsTest, BatchesCarryFilePositions) {
  ParquetReadOptions options;
  options.batch_size = 700;
  auto r = ParquetDataReader::Open(OpenIn(path_), path_, schema_, options).ValueOrDie();
  ASSERT_GT(r->row_groups().size(), 3u);
  EXPECT_EQ(r->num_rows(), 20000);
  for (size_t g = 0; g < r->row_groups().size(); ++g) {
    EXPECT_EQ(r->row_groups()[g].start_offset, metrics_.split_offsets[g]);
  }
  EXPECT_EQ(CheckPositions(*r), 20000);
  // Splits cut at the split offsets select each row group once.
  const auto& offsets = metrics_.split_offsets;
  std::vector<int> seen;
  for (size_t k = 0; k < offsets.size(); ++k) {
    const int64_t end = k + 1 < offsets.size() ? offsets[k + 1] : metrics_.file_size_in_bytes;
    auto groups = ParquetDataReader::RowGroupsInRange(r->row_groups(), offsets[k], end - offsets[k]);
    EXPECT_EQ(groups, std::vector<int>{static_cast<int>(k)});
    seen.insert(seen.end(), groups.begin(), groups.end());
  }
  EXPECT_EQ(seen.size(), r->row_groups().size());
  EXPECT_EQ(ParquetDataReader::RowGroupsInRange(r->row_groups(), 0, metrics_.file_size_in_bytes).size(),
            r->row_groups().size());
}

TEST_F(PositionsTest, SubsetOfRowGroupsAndStatisticsFilter) {
  ParquetReadOptions options;
  options.batch_size = 700;
  options.row_groups = std::vector<int>{1, 3};
  auto r = ParquetDataReader::Open(OpenIn(path_), path_, schema_, options).ValueOrDie();
  const int64_t expected = r->row_groups()[1].num_rows + r->row_groups()[3].num_rows;
  EXPECT_EQ(CheckPositions(*r), expected);

  // Keep row groups that may hold positions >= 15000, by their statistics on pos_copy.
  ParquetReadOptions filtered;
  filtered.batch_size = 700;
  std::vector<RowGroupStats> seen;
  filtered.row_group_filter = [&](const RowGroupStats& stats) {
    seen.push_back(stats);
    const auto& c = stats.columns.at(1);
    return c.upper && c.upper->get<int64_t>() >= 15000;
  };
  auto rf = ParquetDataReader::Open(OpenIn(path_), path_, schema_, filtered).ValueOrDie();
  int64_t kept_rows = 0;
  for (int g : rf->selected_row_groups()) {
    const auto& info = rf->row_groups()[static_cast<size_t>(g)];
    EXPECT_GE(info.first_row + info.num_rows - 1, 15000);
    kept_rows += info.num_rows;
  }
  EXPECT_LT(rf->selected_row_groups().size(), rf->row_groups().size());
  EXPECT_EQ(CheckPositions(*rf), kept_rows);
  ASSERT_EQ(seen.size(), rf->row_groups().size());
  for (const auto& s : seen) {
    const auto& info = rf->row_groups()[static_cast<size_t>(s.index)];
    EXPECT_EQ(s.columns.at(1).lower->get<int64_t>(), info.first_row);
    EXPECT_EQ(s.columns.at(1).upper->get<int64_t>(), info.first_row + info.num_rows - 1);
    EXPECT_EQ(s.columns.at(1).null_count, 0);
  }
  ParquetReadOptions missing;
  missing.row_groups = std::vector<int>{99};
  EXPECT_FALSE(ParquetDataReader::Open(OpenIn(path_), path_, schema_, missing).ok());
}

TEST_F(PositionsTest, KeyColumnReaderAndDefaultsOnlyProjection) {
  auto r = OpenKeyColumnReader(OpenIn(path_), path_, *schema_, {1}).ValueOrDie();
  EXPECT_EQ(r->schema()->num_fields(), 1);
  int64_t rows = 0;
  while (true) {
    auto next = r->Next().ValueOrDie();
    if (!next) break;
    const auto& ids = static_cast<const arrow::Int64Array&>(*next->batch->column(0));
    for (int64_t k = 0; k < ids.length(); ++k) ASSERT_EQ(ids.Value(k), next->first_row_position + k);
    rows += next->batch->num_rows();
  }
  EXPECT_EQ(rows, 20000);
  EXPECT_FALSE(OpenKeyColumnReader(OpenIn(path_), path_, *schema_, {77}).ok());

  // A read schema with no column of the file still yields every row, with defaults.
  iceberg::NestedField added = Field(5, "flag", Type::Boolean(), true);
  added.initial_default = true;
  auto t = ReadAll(path_, MakeSchema({added}));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->num_rows(), 20000);
  auto flags = arrow::Concatenate(Col(t, "flag")->chunks()).ValueOrDie();
  EXPECT_EQ(flags->null_count(), 0);
  EXPECT_TRUE(static_cast<const arrow::BooleanArray&>(*flags).Value(12345));
}

// NextDecoded() + Convert() is Next() in two halves, and a decoded batch converts after its reader is
// gone, on another thread (what the Delta reader's stream does on the pool): same batches, same
// positions, with the columns in another order than the file's and one the file lacks.
TEST_F(PositionsTest, DecodedBatchesConvertLaterOnAnyThread) {
  iceberg::NestedField added = Field(7, "flag", Type::Boolean(), true);
  added.initial_default = true;
  auto schema = MakeSchema({Field(2, "s", Type::String()), Field(1, "pos_copy", Type::Long(), true), added});
  ParquetReadOptions options;
  options.batch_size = 700;
  std::vector<PositionedBatch> expected;
  auto whole = ParquetDataReader::Open(OpenIn(path_), path_, schema, options).ValueOrDie();
  while (auto next = whole->Next().ValueOrDie()) expected.push_back(*next);
  ASSERT_GT(expected.size(), 20u);

  std::vector<DecodedBatch> decoded;
  {
    auto r = ParquetDataReader::Open(OpenIn(path_), path_, schema, options).ValueOrDie();
    while (auto next = r->NextDecoded().ValueOrDie()) decoded.push_back(*next);
  }  // the reader is gone
  ASSERT_EQ(decoded.size(), expected.size());
  std::vector<Result<PositionedBatch>> converted(decoded.size(), Status::UnknownError("not converted"));
  std::thread other([&] {
    for (size_t i = decoded.size(); i-- > 0;) converted[i] = decoded[i].Convert();  // out of order, too
  });
  other.join();
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(converted[i].ok()) << converted[i].status().ToString();
    const PositionedBatch& got = *converted[i];
    EXPECT_EQ(got.first_row_position, expected[i].first_row_position) << i;
    EXPECT_EQ(got.row_group, expected[i].row_group) << i;
    EXPECT_TRUE(got.batch->Equals(*expected[i].batch)) << i;
    EXPECT_TRUE(got.batch->schema()->Equals(*whole->schema())) << i;
    EXPECT_EQ(got.batch->column(2)->null_count(), 0) << "the absent column takes its default";
  }

  // A read of no file column (defaults only) splits the same way.
  auto defaults = ParquetDataReader::Open(OpenIn(path_), path_, MakeSchema({added}), options).ValueOrDie();
  int64_t rows = 0;
  while (auto next = defaults->NextDecoded().ValueOrDie()) {
    EXPECT_EQ(next->file_batch, nullptr);
    auto batch = next->Convert().ValueOrDie();
    EXPECT_EQ(batch.first_row_position, rows);
    rows += batch.batch->num_rows();
  }
  EXPECT_EQ(rows, 20000);
}

TEST(ParquetReader, CorruptAndTruncatedFilesAreCleanErrors) {
  TempDir dir;
  const std::string good = dir.File("good.parquet");
  auto schema = MakeSchema({Field(1, "id", Type::Long()), Field(2, "s", Type::String())});
  std::string ids = "[", strs = "[";
  for (int k = 0; k < 3000; ++k) {
    ids += (k ? "," : "") + std::to_string(k * 7919 % 1000003);
    strs += std::string(k ? "," : "") + "\"value-" + std::to_string(k * 31) + "\"";
  }
  ParquetWriterOptions options;
  LS_ASSERT_OK_AND_ASSIGN(options.parquet, ParquetWriteProperties::FromTableProperties(
                                               {{"write.parquet.compression-codec", "uncompressed"}}));
  LS_ASSERT_OK(WriteWithLakesync(good, schema, {ids + "]", strs + "]"}, options));
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& name, const std::string& content) {
    const std::string p = dir.File(name);
    std::ofstream(p, std::ios::binary) << content;
    return p;
  };
  auto read_status = [&](const std::string& p) -> Status {
    auto r = ParquetDataReader::Open(OpenIn(p), "s3://bucket/" + p, schema);
    if (!r.ok()) return r.status();
    return (*r)->ReadAll().status();
  };
  for (const auto& [name, content] : std::vector<std::pair<std::string, std::string>>{
           {"empty.parquet", ""},
           {"garbage.parquet", std::string(5000, 'x')},
           {"truncated.parquet", bytes.substr(0, bytes.size() - 10)},
           {"headless.parquet", bytes.substr(100)},
           {"half.parquet", bytes.substr(0, bytes.size() / 2)}}) {
    const std::string p = write(name, content);
    Status st = read_status(p);
    EXPECT_EQ(KindOf(st), ErrorKind::kCorrupt) << name << ": " << st.ToString();
    EXPECT_NE(st.message().find("s3://bucket/" + p), std::string::npos) << name << ": " << st.message();
  }
  // Damage to the first page header (the footer stays valid) fails when the pages are decoded.
  std::string damaged = bytes;
  for (size_t k = 4; k < 40; ++k) damaged[k] = static_cast<char>(0xff);
  const std::string p = write("pages.parquet", damaged);
  Status st = read_status(p);
  EXPECT_EQ(KindOf(st), ErrorKind::kCorrupt) << st.ToString();
  EXPECT_NE(st.message().find("s3://bucket/" + p), std::string::npos) << st.message();
}

TEST(ParquetReader, LiteralConversions) {
  auto dec = FromJson(arrow::decimal128(10, 2), R"(["-12.34", null])");
  EXPECT_EQ(LiteralFromArray(*dec, 0, *Type::Decimal(10, 2)).ValueOrDie(), Literal(iceberg::Decimal{-1234}));
  EXPECT_TRUE(LiteralFromArray(*dec, 1, *Type::Decimal(10, 2)).ValueOrDie().is_null());
  EXPECT_FALSE(LiteralFromArray(*dec, 0, *Type::Decimal(10, 3)).ok());
  auto ns = FromJson(arrow::timestamp(arrow::TimeUnit::NANO), "[-1]");
  EXPECT_EQ(LiteralFromArray(*ns, 0, *Type::Timestamp()).ValueOrDie(), Literal(int64_t{-1}));  // floored
  EXPECT_EQ(LiteralFromArray(*ns, 0, *Type::TimestampNs()).ValueOrDie(), Literal(int64_t{-1}));
  auto s = LiteralToScalar(Literal(std::string("hi")), *Type::String()).ValueOrDie();
  EXPECT_EQ(s->ToString(), "hi");
  EXPECT_FALSE(LiteralToScalar(Literal(int32_t{1}), *Type::String()).ok());
  auto fixed = LiteralToScalar(Literal(iceberg::Bytes{"abc"}), *Type::Fixed(4));
  EXPECT_FALSE(fixed.ok());
}

TEST(ParquetReader, SelectFieldsKeepsParentsOfNestedSelections) {
  auto schema = MakeSchema({Field(1, "id", Type::Long(), true),
                            Field(2, "st", Type::Struct({Field(3, "a", Type::Int()), Field(4, "b", Type::Int())})),
                            Field(5, "l", Type::List(Field(6, "element", Type::Int())))});
  auto sel = SelectFields(*schema, {4, 1}).ValueOrDie();
  ASSERT_EQ(sel->fields().size(), 2u);
  EXPECT_EQ(sel->fields()[0].id, 1);
  ASSERT_EQ(sel->fields()[1].type->fields().size(), 1u);
  EXPECT_EQ(sel->fields()[1].type->fields()[0].id, 4);
  EXPECT_FALSE(SelectFields(*schema, {6}).ok());
  EXPECT_FALSE(SelectFields(*schema, {99}).ok());
}

}  // namespace
}  // namespace lakesync::parquet_io
