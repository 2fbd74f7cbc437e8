// The one data-file reader: the spec's column-projection rules (identity partition values for
// columns a file does not hold, the table's name mapping for files without field ids,
// initial-default, then null; type promotion) and the task's deletes, applied or as live masks.
// Files are written here with plain Arrow, the way a Hive table or a migration tool writes them.
#include "lakesync/iceberg/scan/data_file_reader.h"

#include <gtest/gtest.h>

#include <functional>

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <arrow/util/bit_util.h>
#include <parquet/arrow/writer.h>

#include "../parquet_io/parquet_test_util.h"
#include "lakesync/formats/puffin/deletion_vector_file.h"
#include "lakesync/iceberg/expr/binder.h"
#include "lakesync/iceberg/model/arrow_schema.h"

namespace lakesync::iceberg {
namespace {

using lakesync::testing::Field;
using lakesync::testing::Json;
using lakesync::testing::TempDir;


void WriteParquet(const std::string& path, const std::shared_ptr<arrow::Table>& table) {
  auto out = arrow::io::FileOutputStream::Open(path).ValueOrDie();
  auto st = parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out, 1024 * 1024);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(out->Close().ok());
}

int64_t FileSize(const std::string& path) { return static_cast<int64_t>(std::filesystem::file_size(path)); }

DataFilePtr DataFileAt(const std::string& path, int32_t spec_id, std::vector<Literal> partition, int64_t rows) {
  auto f = std::make_shared<DataFile>();
  f->file_path = path;
  f->spec_id = spec_id;
  f->partition = std::move(partition);
  f->record_count = rows;
  f->file_size_in_bytes = FileSize(path);
  return f;
}

// A table schema, partitioned by identity on region, day and shard and by bucket on id: a Hive
// table registered into Iceberg, whose files hold only id and v (under its old name).
class HiveStyleTable : public ::testing::Test {
 protected:
  void SetUp() override {
    NestedField added = Field(7, "added", Type::String());
    added.initial_default = nlohmann::json("fresh");
    schema_ = std::make_shared<const Schema>(
        0, std::vector<NestedField>{Field(1, "id", Type::Long(), true), Field(2, "label", Type::String()),
                                    Field(3, "region", Type::String(), true), Field(4, "day", Type::Date()),
                                    Field(5, "shard", Type::Long()), Field(6, "note", Type::String()), added});
    spec_ = std::make_shared<const PartitionSpec>(
        1, std::vector<PartitionField>{{3, 1000, "region", Transform::Identity()},
                                       {4, 1001, "day", Transform::Identity()},
                                       {5, 1002, "shard", Transform::Identity()},
                                       {1, 1003, "id_bucket", Transform::Bucket(4)}});
    metadata_.format_version = 2;
    metadata_.schemas = {schema_};
    metadata_.partition_specs = {PartitionSpec::Unpartitioned(), spec_};
    // The file calls column 2 "v"; the mapping knows it under that name too.
    metadata_.properties["schema.name-mapping.default"] =
        R"([{"field-id": 1, "names": ["id"]}, {"field-id": 2, "names": ["label", "v"]}])";
    path_ = dir_.File("region=eu/day=2024-03-01/part-0.parquet");
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
    auto table = arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64()), arrow::field("v", arrow::utf8())}),
                                    {Json(arrow::int64(), "[10, 11, 12, 13, 14]"),
                                     Json(arrow::utf8(), R"(["a", "b", null, "d", "e"])")});
    WriteParquet(path_, table);
    // shard was an int column when the file was registered (a later int -> long promotion).
    file_ = DataFileAt(path_, 1, {Literal(std::string("eu")), Literal(int32_t{19783}), Literal(int32_t{7}),
                                  Literal(int32_t{2})}, 5);
  }

  std::shared_ptr<const ScanContext> Context() {
    auto io = io::FileIO::Make().ValueOrDie();
    auto context = ScanContext::Make(io, metadata_, schema_);
    EXPECT_TRUE(context.ok()) << context.status().ToString();
    return *context;
  }

  std::shared_ptr<arrow::Table> ReadAll(const FileScanTask& task, DataFileReadOptions options = {}) {
    auto reader = DataFileReader::Open(Context(), task, options);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return nullptr;
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    while (true) {
      auto next = (*reader)->Next();
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok() || !*next) break;
      batches.push_back((*next)->batch);
    }
    return arrow::Table::FromRecordBatches((*reader)->schema(), batches).ValueOrDie();
  }

  TempDir dir_;
  SchemaPtr schema_;
  PartitionSpecPtr spec_;
  TableMetadata metadata_;
  std::string path_;
  DataFilePtr file_;
};

TEST_F(HiveStyleTable, ColumnsAbsentFromTheFileReadAsPartitionValuesDefaultsOrNull) {
  FileScanTask task{file_};
  auto table = ReadAll(task);
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->num_rows(), 5);
  auto column = [&](const char* name) { return table->GetColumnByName(name)->chunk(0); };
  EXPECT_TRUE(column("id")->Equals(*Json(arrow::int64(), "[10, 11, 12, 13, 14]")));
  // Found through the name mapping although the file has no field ids and a different name.
  EXPECT_TRUE(column("label")->Equals(*Json(arrow::utf8(), R"(["a", "b", null, "d", "e"])")));
  // Identity partition values, promoted to the current type where the column was widened.
  EXPECT_TRUE(column("region")->Equals(*Json(arrow::utf8(), R"(["eu", "eu", "eu", "eu", "eu"])")));
  EXPECT_TRUE(column("day")->Equals(*Json(arrow::date32(), "[19783, 19783, 19783, 19783, 19783]")));
  EXPECT_TRUE(column("shard")->Equals(*Json(arrow::int64(), "[7, 7, 7, 7, 7]")));
  // No partition value: initial-default, else null.
  EXPECT_TRUE(column("note")->Equals(*Json(arrow::utf8(), "[null, null, null, null, null]")));
  EXPECT_TRUE(column("added")->Equals(*Json(arrow::utf8(), R"(["fresh", "fresh", "fresh", "fresh", "fresh"])")));
}

TEST_F(HiveStyleTable, FiltersAndProjectionSeePartitionValues) {
  FileScanTask task{file_};
  DataFileReadOptions options;
  options.columns = {2, 3};
  options.filter = ParseAndBind("region = 'eu' AND shard = 7 AND id > 11", *schema_).ValueOrDie();
  auto table = ReadAll(task, options);
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->num_columns(), 2);
  EXPECT_EQ(table->schema()->field(0)->name(), "label");
  EXPECT_EQ(table->num_rows(), 3);
  options.filter = ParseAndBind("region = 'us'", *schema_).ValueOrDie();
  table = ReadAll(task, options);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->num_rows(), 0);
}

TEST_F(HiveStyleTable, ARequiredColumnWithoutAnyValueIsAnErrorNamingFileAndColumn) {
  // The same file registered without its partition tuple (an unpartitioned spec).
  FileScanTask task{DataFileAt(path_, 0, {}, 5)};
  auto reader = DataFileReader::Open(Context(), task, {});
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(KindOf(reader.status()), ErrorKind::kInvalidArgument);
  EXPECT_NE(reader.status().message().find(path_), std::string::npos) << reader.status().message();
  EXPECT_NE(reader.status().message().find("'region'"), std::string::npos) << reader.status().message();
}

TEST_F(HiveStyleTable, DeletesAreAppliedOrReportedAsLiveMasks) {
  // A deletion vector for positions 0 and 3, and an equality delete of label 'e'.
  const std::string dv_path = dir_.File("dv.puffin");
  DataFilePtr dv_, eq_;
  {
    auto out = arrow::io::FileOutputStream::Open(dv_path).ValueOrDie();
    auto writer = puffin::DeletionVectorWriter::Make(out, {}).ValueOrDie();
    auto positions = puffin::PositionBitmap::FromPositions(std::vector<int64_t>{0, 3}).ValueOrDie();
    ASSERT_TRUE(writer->Add(path_, positions).ok());
    auto written = writer->Finish().ValueOrDie();
    ASSERT_TRUE(out->Close().ok());
    auto dv = std::make_shared<DataFile>();
    dv->content = FileContent::kPositionDeletes;
    dv->file_format = FileFormat::kPuffin;
    dv->file_path = dv_path;
    dv->spec_id = 1;
    dv->record_count = 2;
    dv->file_size_in_bytes = written.file_size_in_bytes;
    dv->referenced_data_file = path_;
    dv->content_offset = written.vectors[0].content_offset;
    dv->content_size_in_bytes = written.vectors[0].content_size_in_bytes;
    dv_ = dv;
  }
  const std::string eq_path = dir_.File("eq.parquet");
  {
    Schema eq_schema(0, {Field(2, "label", Type::String())});
    auto arrow_schema = ToArrowSchema(eq_schema).ValueOrDie();  // carries the field id
    WriteParquet(eq_path, arrow::Table::Make(arrow_schema, {Json(arrow::utf8(), R"(["e", "zzz"])")}));
    auto eq = DataFileAt(eq_path, 1, file_->partition, 2);
    auto mutable_eq = std::const_pointer_cast<DataFile>(eq);
    mutable_eq->content = FileContent::kEqualityDeletes;
    mutable_eq->equality_ids = {2};
    eq_ = eq;
  }
  FileScanTask task{file_, 1, dv_, {}, {eq_}, nullptr};  // no planned index: its own files
  DataFileReadOptions options;
  options.columns = {1};
  options.with_file_and_pos = true;
  auto applied = ReadAll(task, options);
  ASSERT_NE(applied, nullptr);
  EXPECT_TRUE(applied->GetColumnByName("id")->chunk(0)->Equals(*Json(arrow::int64(), "[11, 12]")));
  EXPECT_TRUE(applied->GetColumnByName("_pos")->chunk(0)->Equals(*Json(arrow::int64(), "[1, 2]")));

  // Two states, as the changelog reads a file: none deleted before, the task's deletes after.
  auto context = Context();
  options.deletes = DataFileReadOptions::Deletes::kMask;
  options.delete_states = {DeleteFilter::None(), DeleteFilter::Make(*context->deletes, task).ValueOrDie()};
  auto reader = DataFileReader::Open(context, task, options).ValueOrDie();
  auto batch = reader->Next().ValueOrDie();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->batch->num_rows(), 5);
  ASSERT_EQ(batch->live.size(), 2u);
  EXPECT_EQ(batch->live[0], nullptr);  // all live
  ASSERT_NE(batch->live[1], nullptr);
  std::vector<bool> after;
  for (int i = 0; i < 5; ++i) after.push_back(arrow::bit_util::GetBit(batch->live[1]->data(), i));
  EXPECT_EQ(after, (std::vector<bool>{false, true, true, false, false}));
}

TEST_F(HiveStyleTable, DateColumnsReadAsTimestampsOnlyInV3) {
  const std::string path = dir_.File("dates.parquet");
  Schema old_schema(0, {Field(1, "id", Type::Long(), true), Field(8, "at", Type::Date())});
  WriteParquet(path, arrow::Table::Make(ToArrowSchema(old_schema).ValueOrDie(),
                                        {Json(arrow::int64(), "[1, 2]"), Json(arrow::date32(), "[0, 19783]")}));
  schema_ = std::make_shared<const Schema>(
      1, std::vector<NestedField>{Field(1, "id", Type::Long(), true), Field(8, "at", Type::Timestamp())});
  metadata_.schemas = {schema_};
  metadata_.partition_specs = {PartitionSpec::Unpartitioned()};
  FileScanTask task{DataFileAt(path, 0, {}, 2)};
  metadata_.format_version = 2;
  EXPECT_FALSE(DataFileReader::Open(Context(), task, {}).ok());
  metadata_.format_version = 3;
  auto table = ReadAll(task);
  ASSERT_NE(table, nullptr);
  EXPECT_TRUE(table->GetColumnByName("at")->chunk(0)->Equals(
      *Json(arrow::timestamp(arrow::TimeUnit::MICRO), "[0, 1709251200000000]")));
}

// SelectRows picks a copy per column (runs, Take or Filter, by type and run length); every choice must
// give the rows a row-by-row reference gives: each kept row sliced out and the slices concatenated.
TEST(SelectRows, EveryColumnTypeKeepsExactlyTheKeptRowsAtEveryDeleteDensity) {
  const int64_t n = 5003;  // not a multiple of 8: the last rows of a bitmap are a partial byte
  arrow::Int64Builder longs;
  arrow::Int32Builder ints;
  arrow::DoubleBuilder doubles;
  arrow::Decimal128Builder decimals(arrow::decimal128(18, 2));
  arrow::StringBuilder strings;
  arrow::BooleanBuilder bools;
  arrow::FixedSizeBinaryBuilder uuids(arrow::fixed_size_binary(16));
  arrow::ListBuilder lists(arrow::default_memory_pool(), std::make_shared<arrow::Int32Builder>());
  auto& list_values = static_cast<arrow::Int32Builder&>(*lists.value_builder());
  for (int64_t i = 0; i < n; ++i) {
    const bool null = i % 13 == 5;  // nulls in every column but the first
    ASSERT_TRUE(longs.Append(i * 7).ok());
    ASSERT_TRUE((null ? ints.AppendNull() : ints.Append(static_cast<int32_t>(i))).ok());
    ASSERT_TRUE((null ? doubles.AppendNull() : doubles.Append(static_cast<double>(i) / 4)).ok());
    ASSERT_TRUE((null ? decimals.AppendNull() : decimals.Append(arrow::Decimal128(i * 100 - 77))).ok());
    ASSERT_TRUE((null ? strings.AppendNull() : strings.Append(std::string(static_cast<size_t>(i % 9), 'a' + i % 26))).ok());
    ASSERT_TRUE((null ? bools.AppendNull() : bools.Append(i % 3 == 0)).ok());
    const std::string uuid(16, static_cast<char>(i % 251));
    ASSERT_TRUE((null ? uuids.AppendNull() : uuids.Append(uuid)).ok());
    if (null) {
      ASSERT_TRUE(lists.AppendNull().ok());
    } else {
      ASSERT_TRUE(lists.Append().ok());
      for (int64_t k = 0; k < i % 4; ++k) ASSERT_TRUE(list_values.Append(static_cast<int32_t>(i + k)).ok());
    }
  }
  arrow::ArrayVector columns = {*longs.Finish(), *ints.Finish(),  *doubles.Finish(), *decimals.Finish(),
                                *strings.Finish(), *bools.Finish(), *uuids.Finish(),   *lists.Finish()};
  arrow::FieldVector fields;
  for (size_t c = 0; c < columns.size(); ++c) fields.push_back(arrow::field("c" + std::to_string(c), columns[c]->type()));
  // An offset batch too: Arrow hands out slices.
  const auto whole = arrow::RecordBatch::Make(arrow::schema(fields), n, columns);
  for (const auto& batch : {whole, whole->Slice(3, n - 10)}) {
    const int64_t rows = batch->num_rows();
    // Deleted: none, every row, every 10th (short runs), every 100th (long runs), a block, all but one.
    const std::vector<std::function<bool(int64_t)>> deleted = {
        [](int64_t) { return false; },          [](int64_t) { return true; },
        [](int64_t i) { return i % 10 == 3; },  [](int64_t i) { return i % 100 == 42; },
        [](int64_t i) { return i >= 700 && i < 2900; }, [](int64_t i) { return i != 17; }};
    for (size_t d = 0; d < deleted.size(); ++d) {
      auto keep = arrow::AllocateEmptyBitmap(rows).ValueOrDie();
      std::vector<std::shared_ptr<arrow::RecordBatch>> expected;
      for (int64_t i = 0; i < rows; ++i) {
        if (deleted[d](i)) continue;
        arrow::bit_util::SetBit(keep->mutable_data(), i);
        expected.push_back(batch->Slice(i, 1));
      }
      for (bool threads : {false, true}) {
        auto got = SelectRows(*batch, *keep, threads);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        auto want = arrow::Table::FromRecordBatches(batch->schema(), expected).ValueOrDie();
        auto got_table = arrow::Table::FromRecordBatches(batch->schema(), {*got}).ValueOrDie();
        EXPECT_TRUE(got_table->Equals(*want)) << "deletes " << d << ", offset " << batch->column(0)->offset();
        EXPECT_TRUE((*got)->ValidateFull().ok()) << "deletes " << d;
      }
    }
  }
}

}  // namespace
}  // namespace lakesync::iceberg
