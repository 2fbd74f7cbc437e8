// Pending-files records: what an attempt records before writing, and what a later writer deletes when
// the attempt is over (its process gone) — everything the table does not reference, nothing it does.
#include <gtest/gtest.h>

#include <arrow/api.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/table/append.h"
#include "lakesync/table/pending_files.h"
#include "lakesync/table/snapshot_update.h"
#include "status_test_util.h"

namespace lakesync::table {
namespace {

// A pid that is certainly not running: a child that has exited and been reaped.
int64_t DeadPid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

std::string LocalPath(const std::string& location) { return ValueOrFail(io::ParseLocation(location)).path; }

class PendingFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / fmt::format("lakesync-pending-test-{:08x}", rd());
    std::filesystem::create_directories(dir_);
    io_ = ValueOrFail(io::FileIO::Make());
    catalog::SqlCatalogOptions options{"t", (dir_ / "c.db").string(), "file://" + (dir_ / "wh").string(), io_};
    catalog_ = ValueOrFail(catalog::SqlCatalog::Make(options));
    ASSERT_OK(catalog_->CreateNamespace({"ns"}, {}));
    catalog::CreateTableRequest req;
    req.identifier = {{"ns"}, "t"};
    req.schema = ValueOrFail(iceberg::SchemaFromJson(nlohmann::json::parse(
        R"({"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]})")));
    ASSERT_OK(catalog_->CreateTable(req).status());
    table_ = ValueOrFail(Table::Load(catalog_, req.identifier));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<iceberg::DataFile> WriteData(int64_t rows) {
    arrow::Int64Builder ids;
    for (int64_t i = 0; i < rows; ++i) EXPECT_TRUE(ids.Append(i).ok());
    auto schema = ValueOrFail(iceberg::ToArrowSchema(*table_->metadata()->Schema()));
    auto writer = ValueOrFail(iceberg::RollingDataWriter::Make(DataWriterOptionsFor(*table_)));
    EXPECT_TRUE(writer->Write(arrow::RecordBatch::Make(schema, rows, {*ids.Finish()})).ok());
    return ValueOrFail(writer->Close());
  }

  std::string Touch(const std::string& name) {
    const std::string location = "file://" + (dir_ / "wh" / "ns" / "t" / "data" / name).string();
    std::filesystem::create_directories(std::filesystem::path(LocalPath(location)).parent_path());
    std::ofstream(LocalPath(location)) << "x";
    return location;
  }

  int Records() {
    int n = 0;
    const auto dir = std::filesystem::path(LocalPath(PendingFilesDirectory(*table_->metadata())));
    if (!std::filesystem::exists(dir)) return 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
    return n;
  }

  // Whether the record as stored names `location`: listed in "files", or lying directly in one of its
  // "directories" with its "token" in the name (pending_files.h); read back from storage, not from
  // the writer's memory, and spelled out here rather than through the code under test.
  bool StoredRecordNames(const std::string& record, const std::string& location) {
    auto j = nlohmann::json::parse(ValueOrFail(io_->ReadAll(record)));
    for (const auto& f : j["files"]) {
      if (f.get<std::string>() == location) return true;
    }
    const auto slash = location.rfind('/');
    const std::string parent = location.substr(0, slash), name = location.substr(slash + 1);
    const std::string token = j.value("token", "");
    if (token.empty() || name.find(token) == std::string::npos) return false;
    for (const auto& d : j.value("directories", nlohmann::json::array())) {
      if (d.get<std::string>() == parent) return true;
    }
    return false;
  }

  std::set<std::string> TableFiles() {
    std::set<std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ / "wh")) {
      if (e.is_regular_file()) out.insert(e.path().string());
    }
    return out;
  }

  AbandonedFilesCleanup Clean() {
    return ValueOrFail(CleanAbandonedFiles(*io_, *table_->metadata(), table_->metadata_location()));
  }

  std::filesystem::path dir_;
  std::shared_ptr<io::FileIO> io_;
  std::shared_ptr<catalog::SqlCatalog> catalog_;
  std::shared_ptr<Table> table_;
};

TEST_F(PendingFilesTest, FilesAreRecordedBeforeTheyAreWrittenAndTheRecordGoesWithTheAttempt) {
  ASSERT_OK(BeginWriteAttempt(*table_));
  auto pending = table_->pending_files();
  ASSERT_NE(pending, nullptr);
  auto files = WriteData(10);
  ASSERT_EQ(files.size(), 1u);
  // In the data location of an unpartitioned table the token names it: no record write was needed.
  EXPECT_TRUE(pending->files().empty());
  EXPECT_TRUE(StoredRecordNames(pending->location(), files[0].file_path));
  // Anywhere else the location itself is recorded before the file is created.
  const std::string elsewhere = "file://" + (dir_ / "wh" / "ns" / "t" / "data" / "p=1" / "x.parquet").string();
  ASSERT_FALSE(StoredRecordNames(pending->location(), elsewhere));
  ASSERT_OK(table_->WriteFile(elsewhere, "x"));
  EXPECT_EQ(pending->files(), std::vector<std::string>{elsewhere});
  EXPECT_TRUE(StoredRecordNames(pending->location(), elsewhere));
  EXPECT_EQ(Records(), 1);
  // A running attempt is never cleaned, even though its pid is ours.
  auto cleaned = Clean();
  EXPECT_EQ(cleaned.records_left, 1);
  EXPECT_TRUE(std::filesystem::exists(LocalPath(files[0].file_path)));
  EndWriteAttempt(*table_, Status::OK());
  EXPECT_EQ(Records(), 0);
}

TEST_F(PendingFilesTest, AnAttemptWhoseProcessIsGoneIsCleaned) {
  const std::string a = Touch("a.parquet"), b = Touch("b.parquet");
  nlohmann::json record = {{"host", ""}, {"boot-id", ""}, {"pid", DeadPid()}, {"started-ms", 0},
                           {"files", {a, b}}};
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  record["host"] = host;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  std::getline(boot, boot_id);
  record["boot-id"] = boot_id;
  const std::string location = io::JoinLocation(PendingFilesDirectory(*table_->metadata()), "dead.json");
  ASSERT_OK(io_->WriteAll(location, record.dump()));
  // A record from another machine that is recent: it may still be running there.
  nlohmann::json remote = record;
  remote["host"] = "some-other-host";
  remote["started-ms"] = iceberg::NowMs();
  const std::string c = Touch("c.parquet");
  remote["files"] = {c};
  ASSERT_OK(io_->WriteAll(io::JoinLocation(PendingFilesDirectory(*table_->metadata()), "remote.json"), remote.dump()));

  auto cleaned = Clean();
  EXPECT_EQ(cleaned.records, 1);
  EXPECT_EQ(cleaned.files_deleted, 2);
  EXPECT_EQ(cleaned.records_left, 1);
  EXPECT_FALSE(std::filesystem::exists(LocalPath(a)));
  EXPECT_FALSE(std::filesystem::exists(LocalPath(b)));
  EXPECT_TRUE(std::filesystem::exists(LocalPath(c)));
  EXPECT_EQ(Records(), 1);
  // Past the grace period the remote attempt is over too.
  CleanupOptions options;
  options.grace_ms = -1;
  auto later = ValueOrFail(CleanAbandonedFiles(*io_, *table_->metadata(), table_->metadata_location(), options));
  EXPECT_EQ(later.files_deleted, 1);
  EXPECT_FALSE(std::filesystem::exists(LocalPath(c)));
  EXPECT_EQ(Records(), 0);
}

// Killed after its commit landed, before it could drop its record: the committed files stay, the rest
// of what it recorded (a file it wrote but did not commit) goes.
TEST_F(PendingFilesTest, ACommittedAttemptKeepsWhatTheTableReferences) {
  ASSERT_OK(BeginWriteAttempt(*table_));
  auto files = WriteData(5);
  auto stray = WriteData(3);
  SnapshotUpdate update(table_);
  for (const auto& f : files) update.AddDataFile(f);
  ASSERT_OK(update.Commit().status());
  const std::string record = table_->pending_files()->location();
  // The metadata file the catalog named is recorded by location; the data files, the manifest and the
  // manifest list by the token.
  auto recorded = table_->pending_files()->files();
  EXPECT_EQ(recorded, std::vector<std::string>{table_->metadata_location()});
  auto snapshot = table_->metadata()->CurrentSnapshot();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_TRUE(StoredRecordNames(record, snapshot->manifest_list));
  table_->set_pending_files(nullptr);  // "killed": the record stays, and its process is no longer writing
  auto cleaned = Clean();
  EXPECT_EQ(cleaned.records, 1);
  EXPECT_EQ(cleaned.files_deleted, 1);
  // The metadata file, the manifest list, its manifest and the committed data file.
  EXPECT_EQ(cleaned.files_kept, 4);
  EXPECT_TRUE(std::filesystem::exists(LocalPath(files[0].file_path)));
  EXPECT_FALSE(std::filesystem::exists(LocalPath(stray[0].file_path)));
  EXPECT_FALSE(io_->Exists(record).ValueOrDie());
}

// Killed after every file of its commit was written, the catalog's row not yet switched: a writer that
// reads the table as it was finds each file the attempt created through its record, and deletes them
// all. Also: a stem drawn from the record names files in the metadata directory and data location only.
TEST_F(PendingFilesTest, AnAttemptKilledBeforeItsCommitLeavesNoFile) {
  const auto before = TableFiles();
  const auto base = table_->metadata();
  const std::string base_location = table_->metadata_location();
  ASSERT_OK(BeginWriteAttempt(*table_));
  auto pending = table_->pending_files();
  auto files = WriteData(5);
  SnapshotUpdate update(table_);
  for (const auto& f : files) update.AddDataFile(f);
  ASSERT_OK(update.Commit().status());
  const std::string record = pending->location();
  // Every file the attempt created is named by the record as stored.
  std::set<std::string> created;
  for (const auto& path : TableFiles()) {
    if (before.count(path) || path.find("/lakesync-pending/") != std::string::npos) continue;
    created.insert(path);
    EXPECT_TRUE(StoredRecordNames(record, "file://" + path)) << path;
  }
  EXPECT_GE(created.size(), 4u);  // data file, manifest, manifest list, metadata file
  const std::string stem = pending->NewStem();
  EXPECT_FALSE(pending->Covers("file://" + (dir_ / "wh" / "ns" / "t" / stem).string()));
  EXPECT_FALSE(pending->Covers("file://" + (dir_ / "wh" / "ns" / "t" / "data" / "p=1" / stem).string()));
  pending.reset();
  table_->set_pending_files(nullptr);  // "killed": its process no longer writes to the record
  auto cleaned = ValueOrFail(CleanAbandonedFiles(*io_, *base, base_location));
  EXPECT_EQ(cleaned.records, 1);
  EXPECT_EQ(cleaned.files_deleted, static_cast<int64_t>(created.size()));
  EXPECT_EQ(cleaned.files_kept, 0);
  EXPECT_EQ(TableFiles(), before);
}

}  // namespace
}  // namespace lakesync::table
