// The one commit retry loop (SnapshotUpdate::Commit): conflicts are retried after a refresh within the
// table's budget; what depends on the table state (SetAttemptDeletes) is rebuilt for every attempt;
// "not retryable" and "already applied" travel as flags in the error detail, not in the message.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>

#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/table/append.h"
#include "lakesync/table/row_deletes.h"
#include "lakesync/table/scan.h"
#include "lakesync/table/snapshot_update.h"

#include "scratch_catalog_test_util.h"
#include "status_test_util.h"

namespace lakesync::table {
namespace {

TEST(ErrorFlags, TravelInTheDetailThroughContext) {
  Status st = WithFlag(CommitConflict("data file x was removed"), ErrorFlag::kNotRetryable);
  st = WithContext(WithContext(st, "committing to ns.t"), "applying changes");
  EXPECT_EQ(KindOf(st), ErrorKind::kCommitConflict);
  EXPECT_TRUE(HasFlag(st, ErrorFlag::kNotRetryable));
  EXPECT_FALSE(HasFlag(st, ErrorFlag::kAlreadyApplied));
  EXPECT_FALSE(IsRetryable(st));
  EXPECT_TRUE(IsRetryable(CommitConflict("plain")));
  // Flags add up and keep the kind; a message that merely says so sets nothing.
  Status both = WithFlag(WithFlag(AlreadyExists("position 3"), ErrorFlag::kAlreadyApplied), ErrorFlag::kNotRetryable);
  EXPECT_EQ(KindOf(both), ErrorKind::kAlreadyExists);
  EXPECT_TRUE(HasFlag(both, ErrorFlag::kAlreadyApplied));
  EXPECT_TRUE(HasFlag(both, ErrorFlag::kNotRetryable));
  EXPECT_FALSE(HasFlag(AlreadyExists("already applied (lakesync.not-retryable)"), ErrorFlag::kAlreadyApplied));
  EXPECT_TRUE(WithFlag(Status::OK(), ErrorFlag::kNotRetryable).ok());
  // Statuses from Arrow get a detail with their derived kind.
  Status arrow_error = WithFlag(arrow::Status::IOError("disk"), ErrorFlag::kNotRetryable);
  EXPECT_EQ(KindOf(arrow_error), ErrorKind::kIO);
  EXPECT_TRUE(HasFlag(arrow_error, ErrorFlag::kNotRetryable));
}

class CommitRetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(auto scratch, MakeScratchCatalog("retry-test"));
    dir_ = scratch.dir;
    catalog_ = scratch.catalog;
    catalog::CreateTableRequest req;
    req.identifier = {{"ns"}, "t"};
    req.schema = ValueOrFail(iceberg::SchemaFromJson(nlohmann::json::parse(R"({"type": "struct", "fields": [
        {"id": 1, "name": "id", "required": true, "type": "long"}]})")));
    req.spec = iceberg::PartitionSpec::Unpartitioned();
    req.properties["format-version"] = "3";
    req.properties["commit.retry.min-wait-ms"] = "1";
    req.properties["commit.retry.max-wait-ms"] = "2";
    req.properties["commit.retry.num-retries"] = "3";
    ASSERT_TRUE(catalog_->CreateTable(req).ok());
    table_ = ValueOrFail(Table::Load(catalog_, req.identifier));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<iceberg::DataFile> WriteData(const std::shared_ptr<Table>& table, int64_t from, int64_t to) {
    arrow::Int64Builder ids;
    for (int64_t i = from; i < to; ++i) EXPECT_TRUE(ids.Append(i).ok());
    auto schema = ValueOrFail(iceberg::ToArrowSchema(*table->metadata()->Schema()));
    auto batch = arrow::RecordBatch::Make(schema, to - from, {*ids.Finish()});
    auto writer = ValueOrFail(iceberg::RollingDataWriter::Make(DataWriterOptionsFor(*table)));
    EXPECT_TRUE(writer->Write(batch).ok());
    return ValueOrFail(writer->Close());
  }

  int64_t CountRows() {
    auto scan = ValueOrFail(TableScan::Make(ValueOrFail(Table::Load(catalog_, table_->identifier())), {}));
    auto reader = ValueOrFail(scan->Open());
    int64_t n = 0;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      EXPECT_TRUE(reader->ReadNext(&batch).ok());
      if (!batch) break;
      n += batch->num_rows();
    }
    return n;
  }

  // Commits an append through a second handle: the next commit of table_ then conflicts.
  void ConcurrentAppend(int64_t from, int64_t to) {
    auto other = ValueOrFail(Table::Load(catalog_, table_->identifier()));
    SnapshotUpdate update(other);
    for (auto& f : WriteData(other, from, to)) update.AddDataFile(f);
    ASSERT_TRUE(update.Commit().ok());
  }

  std::filesystem::path dir_;
  std::shared_ptr<catalog::Catalog> catalog_;
  std::shared_ptr<Table> table_;
};

TEST_F(CommitRetryTest, ACatalogConflictIsRetriedOnTheRefreshedTable) {
  SnapshotUpdate update(table_);
  for (auto& f : WriteData(table_, 0, 10)) update.AddDataFile(f);
  int validations = 0;
  update.AddValidation([&](const CommitBase&) -> Status {
    // The first attempt loses the race to another writer (after its checks passed).
    if (validations++ == 0) ConcurrentAppend(100, 105);
    return Status::OK();
  });
  auto committed = update.Commit();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(committed->attempts, 2);
  EXPECT_EQ(validations, 2);
  EXPECT_EQ(CountRows(), 15);
}

TEST_F(CommitRetryTest, AConflictTheValidationsFindIsFinalForFixedContent) {
  SnapshotUpdate update(table_);
  for (auto& f : WriteData(table_, 0, 10)) update.AddDataFile(f);
  int validations = 0;
  update.AddValidation([&](const CommitBase&) -> Status {
    ++validations;
    return CommitConflict("the state says no");
  });
  auto committed = update.Commit();
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(KindOf(committed.status()), ErrorKind::kCommitConflict);
  EXPECT_TRUE(HasFlag(committed.status(), ErrorFlag::kNotRetryable));
  EXPECT_EQ(committed.status().message().find("not-retryable"), std::string::npos) << committed.status().message();
  EXPECT_EQ(validations, 1);
  EXPECT_EQ(CountRows(), 0);
}

TEST_F(CommitRetryTest, AttemptDeletesAreRebuiltForEveryAttemptAndTheFailedOnesRemoved) {
  // Rows 0..9, then a deletion vector for row 3 that a validation rejects once: the second attempt
  // builds its vector again on the refreshed state.
  {
    SnapshotUpdate first(table_);
    for (auto& f : WriteData(table_, 0, 10)) first.AddDataFile(f);
    ASSERT_TRUE(first.Commit().ok());
  }
  auto tasks = ValueOrFail(ValueOrFail(TableScan::Make(table_, {}))->PlanFiles());
  ASSERT_EQ(tasks.size(), 1u);
  SnapshotUpdate update(table_);
  std::vector<std::vector<std::string>> built;
  update.SetAttemptDeletes([&](AttemptDeletes& deletes) -> Status {
    PositionDeletes positions(table_);
    ARROW_RETURN_NOT_OK(positions.Add(tasks[0].file, tasks[0].deletion_vector, 3));
    ARROW_RETURN_NOT_OK(positions.WriteTo(deletes));
    built.push_back(deletes.written);
    return Status::OK();
  });
  update.AddValidation([&](const CommitBase&) -> Status {
    return built.size() == 1 ? CommitConflict("a concurrent commit moved our rows") : Status::OK();
  });
  auto committed = update.Commit();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(committed->attempts, 2);
  ASSERT_EQ(built.size(), 2u);
  ASSERT_EQ(built[0].size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(built[0][0].substr(std::string("file://").size())))
      << "the failed attempt's deletion vector was left behind";
  EXPECT_TRUE(std::filesystem::exists(built[1][0].substr(std::string("file://").size())));
  EXPECT_EQ(CountRows(), 9);
}

TEST_F(CommitRetryTest, TheBudgetEndsTheLoopAndFlagsPassThrough) {
  SnapshotUpdate update(table_);
  for (auto& f : WriteData(table_, 0, 10)) update.AddDataFile(f);
  int attempts = 0;
  update.SetAttemptDeletes([&](AttemptDeletes&) -> Status {
    ++attempts;
    return Status::OK();
  });
  update.AddValidation([&](const CommitBase&) -> Status { return CommitConflict("never clears"); });
  auto committed = update.Commit();
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(attempts, 4);  // commit.retry.num-retries = 3: one attempt and three retries, no more
  EXPECT_EQ(KindOf(committed.status()), ErrorKind::kCommitConflict);
  EXPECT_NE(committed.status().message().find("gave up after 4 attempts"), std::string::npos)
      << committed.status().message();

  SnapshotUpdate applied(table_);
  applied.AddValidation([&](const CommitBase&) -> Status {
    return WithFlag(AlreadyExists("position 7 was committed by another writer"), ErrorFlag::kAlreadyApplied);
  });
  auto result = applied.Commit();
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(HasFlag(result.status(), ErrorFlag::kAlreadyApplied));
  EXPECT_EQ(KindOf(result.status()), ErrorKind::kAlreadyExists);
}

TEST_F(CommitRetryTest, SkipIfEmptyCommitsNothing) {
  SnapshotUpdate update(table_);
  update.SkipIfEmpty();
  update.SetAttemptDeletes([](AttemptDeletes&) { return Status::OK(); });
  auto committed = update.Commit();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_TRUE(committed->skipped);
  EXPECT_FALSE(table_->metadata()->CurrentSnapshot());
}

}  // namespace
}  // namespace lakesync::table
