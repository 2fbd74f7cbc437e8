// The Delta change feed split into a plan (which files each commit contributes) and its reading, as
// the sharing server and client use them: the plan's rule, reading a plan equals ReadChanges, ranges
// without the Change Data Feed on request, and actions written back as the log's JSON.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include "delta_test_util.h"
#include "lakesync/delta/deletion_vector.h"
#include "lakesync/delta/delta_table.h"

namespace lakesync::delta {
namespace {

using testing::ExtractCorpus;

FileAction File(FileAction::Kind kind, std::string path, bool data_change = true) {
  FileAction f;
  f.kind = kind;
  f.path = std::move(path);
  f.data_change = data_change;
  f.partition_values = std::map<std::string, std::optional<std::string>>{};
  return f;
}

TEST(SelectChangeFilesTest, CdcFilesWinDataChangeFilters) {
  using K = FileAction::Kind;
  auto paths = [](const std::vector<FileAction>& files) {
    std::vector<std::string> out;
    for (const auto& f : files) out.push_back(f.path);
    return out;
  };
  EXPECT_EQ(paths(SelectChangeFiles({File(K::kAdd, "a"), File(K::kCdc, "c", false), File(K::kRemove, "r")}, {})),
            std::vector<std::string>{"c"});
  EXPECT_EQ(paths(SelectChangeFiles({File(K::kAdd, "a"), File(K::kRemove, "r", false)}, {})),
            std::vector<std::string>{"a"});
  CommitInfo noop;
  noop.operation = "MERGE";
  noop.operation_metrics = {{"numTargetRowsInserted", "0"}, {"numTargetRowsUpdated", "0"}, {"numTargetRowsDeleted", "0"}};
  EXPECT_TRUE(SelectChangeFiles({File(K::kAdd, "a"), File(K::kRemove, "r")}, noop).empty());
}

TEST(ChangePlanTest, ReadingThePlanIsReadChanges) {
  const std::string root = ExtractCorpus("cdf-table-partitioned");
  ASSERT_FALSE(root.empty());
  ASSERT_OK_AND_ASSIGN(auto table, DeltaTable::Open(root, std::map<std::string, std::string>{}));
  ChangeFeedOptions options;
  options.start_version = 0;
  ASSERT_OK_AND_ASSIGN(auto plan, table->PlanChanges(options));
  ASSERT_EQ(plan.commits.size(), 3u);
  // v1 is a MERGE with a cdc file: only that; v2 deletes a partition without one: its removes.
  ASSERT_EQ(plan.commits[1].files.size(), 1u);
  EXPECT_EQ(plan.commits[1].files[0].kind, FileAction::Kind::kCdc);
  ASSERT_FALSE(plan.commits[2].files.empty());
  for (const auto& f : plan.commits[2].files) EXPECT_EQ(f.kind, FileAction::Kind::kRemove);
  EXPECT_LT(plan.commits[0].timestamp_ms, plan.commits[1].timestamp_ms);
  ASSERT_OK_AND_ASSIGN(auto from_plan, ReadChangePlan(table->io(), plan, ChangeReadOptions{}));
  ASSERT_OK_AND_ASSIGN(auto direct, table->ReadChanges(options));
  ASSERT_OK_AND_ASSIGN(auto a, from_plan->ToTable());
  ASSERT_OK_AND_ASSIGN(auto b, direct->ToTable());
  EXPECT_TRUE(a->Equals(*b));
  EXPECT_GT(a->num_rows(), 0);
}

TEST(ChangePlanTest, RangesWithoutTheChangeDataFeedOnRequest) {
  // Column mapping by name; the Change Data Feed is turned on only at version 1.
  const std::string root = ExtractCorpus("cdf-column-mapping-name-mode");
  ASSERT_FALSE(root.empty());
  ASSERT_OK_AND_ASSIGN(auto table, DeltaTable::Open(root, std::map<std::string, std::string>{}));
  ChangeFeedOptions options;
  options.start_version = 0;
  options.end_version = 0;
  EXPECT_EQ(KindOf(table->ReadChanges(options).status()), ErrorKind::kInvalidArgument);
  options.require_change_data_feed = false;
  ASSERT_OK_AND_ASSIGN(auto changes, table->ReadChanges(options));
  ASSERT_OK_AND_ASSIGN(auto rows, changes->ToTable());
  ASSERT_OK_AND_ASSIGN(auto snapshot, table->ScanSnapshot(SnapshotScanOptions{0, {}, {}, {}}));
  ASSERT_OK_AND_ASSIGN(auto v0, snapshot->ToTable());
  EXPECT_EQ(rows->num_rows(), v0->num_rows());  // version 0 wrote the table: every row an insert
  auto types = rows->GetColumnByName("_change_type");
  ASSERT_NE(types, nullptr);
  for (const auto& chunk : types->chunks()) {
    auto strings = std::static_pointer_cast<arrow::StringArray>(chunk);
    for (int64_t i = 0; i < strings->length(); ++i) EXPECT_EQ(strings->GetString(i), "insert");
  }
}

TEST(ChangePlanTest, KeepAllFileActionsKeepsAddsNextToCdcFiles) {
  const std::string root = ExtractCorpus("cdf-table");
  ASSERT_FALSE(root.empty());
  ASSERT_OK_AND_ASSIGN(auto table, DeltaTable::Open(root, std::map<std::string, std::string>{}));
  ChangeFeedOptions options;
  options.start_version = 1;
  options.end_version = 1;
  ASSERT_OK_AND_ASSIGN(auto selected, table->PlanChanges(options));
  options.keep_all_file_actions = true;
  ASSERT_OK_AND_ASSIGN(auto all, table->PlanChanges(options));
  EXPECT_GT(all.commits[0].files.size(), selected.commits[0].files.size());
  bool has_add = false;
  for (const auto& f : all.commits[0].files) has_add |= f.kind == FileAction::Kind::kAdd;
  EXPECT_TRUE(has_add);
}

TEST(ActionJsonTest, ActionsRoundTripThroughTheirJson) {
  FileAction f = File(FileAction::Kind::kAdd, "part=1/x%20y.parquet");
  f.partition_values = std::map<std::string, std::optional<std::string>>{{"part", "1"}, {"n", std::nullopt}};
  f.size = 10;
  f.modification_time = 5;
  f.stats = R"({"numRecords":3})";
  DeletionVectorDescriptor dv;
  dv.storage_type = "p";
  dv.path_or_inline_dv = "https://h/dv?sig=a%2F";
  dv.offset = 1;
  dv.size_in_bytes = 36;
  dv.cardinality = 2;
  f.deletion_vector = dv;
  ASSERT_OK_AND_ASSIGN(auto back, ParseAction(nlohmann::json{{FileActionName(f.kind), FileActionToJson(f)}}, "t"));
  ASSERT_TRUE(back.file);
  EXPECT_EQ(back.file->Key(), f.Key());
  EXPECT_EQ(back.file->partition_values, f.partition_values);
  EXPECT_EQ(back.file->stats, f.stats);
  EXPECT_EQ(back.file->size, 10);
  ASSERT_OK_AND_ASSIGN(auto location, DeletionVectorLocation("file:///t", dv));
  EXPECT_EQ(location, dv.path_or_inline_dv);  // signed URLs are used as given, never decoded
  ASSERT_OK_AND_ASSIGN(auto resolved, ResolveLogPath("file:///t", "https://h/f.parquet?sig=a%2F"));
  EXPECT_EQ(resolved, "https://h/f.parquet?sig=a%2F");
  Metadata m;
  m.id = "id";
  m.schema_string = "{}";
  m.partition_columns = {"p"};
  m.configuration = {{"delta.enableChangeDataFeed", "true"}};
  m.name = "orders";
  ASSERT_OK_AND_ASSIGN(auto md, ParseAction(nlohmann::json{{"metaData", MetadataToJson(m)}}, "t"));
  ASSERT_TRUE(md.metadata);
  EXPECT_EQ(md.metadata->name, "orders");
  EXPECT_EQ(md.metadata->configuration, m.configuration);
  Protocol p;
  p.min_reader_version = 3;
  p.min_writer_version = 7;
  p.reader_features = std::vector<std::string>{"deletionVectors"};
  ASSERT_OK_AND_ASSIGN(auto pr, ParseAction(nlohmann::json{{"protocol", ProtocolToJson(p)}}, "t"));
  EXPECT_EQ(pr.protocol->reader_features, p.reader_features);
}

}  // namespace
}  // namespace lakesync::delta
