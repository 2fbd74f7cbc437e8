// DeltaTable on the shared corpus: snapshot reads with deletion vectors, the Change Data Feed's
// selection rules and its up-front range validation. Expected counts come from the tables' own log
// (stats.numRecords, deletion-vector cardinalities), not from lakesync's output.
#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "delta_test_util.h"
#include "lakesync/delta/delta_table.h"

namespace lakesync::delta {
namespace {

SnapshotScanOptions At(std::optional<int64_t> version, std::optional<int64_t> limit = std::nullopt) {
  SnapshotScanOptions o;
  o.version = version;
  o.limit = limit;
  return o;
}

ChangeFeedOptions Range(std::optional<int64_t> start, std::optional<int64_t> end = std::nullopt) {
  ChangeFeedOptions o;
  o.start_version = start;
  o.end_version = end;
  return o;
}

ChangeFeedOptions FromTime(int64_t start_ms) {
  ChangeFeedOptions o;
  o.start_timestamp_ms = start_ms;
  return o;
}

using Counts = std::map<std::pair<int64_t, std::string>, int64_t>;  // (version, change type) -> rows

Result<Counts> CountChanges(arrow::RecordBatchReader& reader) {
  Counts counts;
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) break;
    auto type = std::static_pointer_cast<arrow::StringArray>(batch->GetColumnByName("_change_type"));
    auto version = std::static_pointer_cast<arrow::Int64Array>(batch->GetColumnByName("_commit_version"));
    for (int64_t i = 0; i < batch->num_rows(); ++i) counts[{version->Value(i), type->GetString(i)}]++;
  }
  return counts;
}

Result<int64_t> CountRows(arrow::RecordBatchReader& reader) {
  int64_t n = 0;
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) return n;
    n += batch->num_rows();
  }
}

std::shared_ptr<DeltaTable> OpenCorpus(const std::string& name, std::string* root = nullptr) {
  const std::string dir = testing::ExtractCorpus(name);
  if (root) *root = dir;
  auto table = DeltaTable::Open(dir, io::FileIO::Make().ValueOrDie());
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ok() ? *table : nullptr;
}

TEST(DeltaSnapshotTest, DeletionVectorApplied) {
  auto table = OpenCorpus("table-with-dv-small");
  ASSERT_TRUE(table);
  EXPECT_EQ(table->latest_version(), 1);
  // v0 wrote one file with stats.numRecords 10; v1 attached a DV of cardinality 2.
  ASSERT_OK_AND_ASSIGN(auto r0, table->ScanSnapshot(At(0)));
  ASSERT_OK_AND_ASSIGN(auto n0, CountRows(*r0));
  EXPECT_EQ(n0, 10);
  ASSERT_OK_AND_ASSIGN(auto r1, table->ScanSnapshot(At(std::nullopt)));
  ASSERT_OK_AND_ASSIGN(auto n1, CountRows(*r1));
  EXPECT_EQ(n1, 8);
  ASSERT_OK_AND_ASSIGN(auto limited, table->ScanSnapshot(At(std::nullopt, 3)));
  ASSERT_OK_AND_ASSIGN(auto n2, CountRows(*limited));
  EXPECT_EQ(n2, 3);
  EXPECT_EQ(KindOf(table->ScanSnapshot(At(2)).status()), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(table->ScanSnapshot([] { SnapshotScanOptions o; o.select = {"nope"}; return o; }()).status()), ErrorKind::kInvalidArgument);
}

TEST(DeltaChangeFeedTest, DeletionVectorPairsGiveExactRows) {
  auto table = OpenCorpus("cdf-table-with-dv");
  ASSERT_TRUE(table);
  ASSERT_OK_AND_ASSIGN(auto reader, table->ReadChanges(Range(0, 2)));
  ASSERT_OK_AND_ASSIGN(auto counts, CountChanges(*reader));
  // v0 adds a 10-row file; v1 attaches a DV of 2 rows (no DV before); v2 drops it again.
  Counts expected{{{0, "insert"}, 10}, {{1, "delete"}, 2}, {{2, "insert"}, 2}};
  EXPECT_EQ(counts, expected);
  const auto& schema = *reader->schema();
  ASSERT_GE(schema.num_fields(), 3);
  EXPECT_EQ(schema.field(schema.num_fields() - 3)->name(), "_change_type");
  EXPECT_EQ(schema.field(schema.num_fields() - 2)->name(), "_commit_version");
  EXPECT_EQ(schema.field(schema.num_fields() - 1)->name(), "_commit_timestamp");
}

TEST(DeltaChangeFeedTest, DataChangeFalseGivesNothing) {
  auto table = OpenCorpus("cdf-table-data-change");
  ASSERT_TRUE(table);
  ASSERT_OK_AND_ASSIGN(auto reader, table->ReadChanges(Range(1, 1)));
  ASSERT_OK_AND_ASSIGN(auto counts, CountChanges(*reader));
  EXPECT_TRUE(counts.empty());
}

TEST(DeltaChangeFeedTest, MetadataColumnsInTheOrderGiven) {
  auto table = OpenCorpus("cdf-table-simple");
  ASSERT_TRUE(table);
  ChangeFeedOptions o;
  o.start_version = 0;
  o.metadata_columns = {"_commit_version", "_change_type"};
  ASSERT_OK_AND_ASSIGN(auto reader, table->ReadChanges(o));
  const auto& s = *reader->schema();
  EXPECT_EQ(s.field(s.num_fields() - 2)->name(), "_commit_version");
  EXPECT_EQ(s.field(s.num_fields() - 1)->name(), "_change_type");
  EXPECT_EQ(s.GetFieldIndex("_commit_timestamp"), -1);
  o.metadata_columns = {"_bogus"};
  EXPECT_EQ(KindOf(table->ReadChanges(o).status()), ErrorKind::kInvalidArgument);
}

TEST(DeltaChangeFeedTest, RangeErrors) {
  std::string root;
  auto table = OpenCorpus("cdf-table-simple", &root);
  ASSERT_TRUE(table);
  const int64_t latest = table->latest_version();
  EXPECT_EQ(KindOf(table->ReadChanges(Range(2, 1)).status()), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(table->ReadChanges(Range(latest + 1)).status()), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(table->ReadChanges(Range(0, latest + 1)).status()),
            ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(table->ReadChanges(Range(std::nullopt)).status()), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(table->ReadChanges([] { auto o = Range(0); o.start_timestamp_ms = 0; return o; }()).status()),
            ErrorKind::kInvalidArgument);
  // A vacuumed data file fails before the reader exists, naming the file and the version.
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    if (e.path().extension() == ".parquet") {  // every data file of this table is referenced
      std::filesystem::remove(e.path());
      break;
    }
  }
  auto st = table->ReadChanges(Range(0)).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kNotFound) << st.ToString();
  EXPECT_NE(st.ToString().find("version"), std::string::npos) << st.ToString();
  // A missing commit in the range.
  std::filesystem::remove(root + "/_delta_log/00000000000000000001.json");
  ASSERT_OK(table->Refresh());
  st = table->ReadChanges(Range(0)).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kNotFound) << st.ToString();
  EXPECT_NE(st.ToString().find("00000000000000000001.json"), std::string::npos) << st.ToString();
}

TEST(DeltaChangeFeedTest, CdfMustBeEnabledAtTheStart) {
  // CDF is enabled at v1 of this table (README of the corpus).
  auto table = OpenCorpus("cdf-column-mapping-name-mode");
  ASSERT_TRUE(table);
  auto st = table->ReadChanges(Range(0)).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.ToString().find("version 0"), std::string::npos) << st.ToString();
  ASSERT_OK_AND_ASSIGN(auto reader, table->ReadChanges(Range(1)));
  ASSERT_OK_AND_ASSIGN(auto counts, CountChanges(*reader));
  EXPECT_FALSE(counts.empty());
}

TEST(DeltaChangeFeedTest, TimestampsResolveToVersions) {
  auto table = OpenCorpus("cdf-table-with-dv");
  ASSERT_TRUE(table);
  // Commit timestamps are strictly increasing (monotonic rule), and each one resolves to itself.
  int64_t prev = INT64_MIN;
  for (int64_t v = 0; v <= table->latest_version(); ++v) {
    ASSERT_OK_AND_ASSIGN(auto ts, table->CommitTimestamp(v));
    EXPECT_GT(ts, prev);
    prev = ts;
    ASSERT_OK_AND_ASSIGN(auto after, table->VersionAtOrAfter(ts));
    EXPECT_EQ(after, v);
    ASSERT_OK_AND_ASSIGN(auto before, table->VersionAtOrBefore(ts));
    EXPECT_EQ(before, v);
  }
  EXPECT_EQ(KindOf(table->VersionAtOrAfter(prev + 1).status()), ErrorKind::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(auto first, table->CommitTimestamp(0));
  EXPECT_EQ(KindOf(table->VersionAtOrBefore(first - 1).status()), ErrorKind::kInvalidArgument);
  // Start after the last commit is an error; two bounds between the same two commits are empty.
  EXPECT_EQ(KindOf(table->ReadChanges(FromTime(prev + 1)).status()), ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace lakesync::delta
