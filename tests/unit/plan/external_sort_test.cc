// The external sorter (plan/external_sort.h): rows far beyond a tiny memory limit come out sorted by
// every key's direction and null placement, with the same rows as went in, through spilled runs and
// merge passes; its temporary files are gone once it is destroyed, also after an error. Expected
// orders come from std::sort over the same values, not from Arrow.
#include "lakesync/plan/external_sort.h"
#include "lakesync/plan/spill_store_internal.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <tuple>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

namespace lakesync::plan {
namespace {

namespace cp = arrow::compute;
namespace fs = std::filesystem;

struct Row {
  std::optional<int64_t> a;  // sorted descending, nulls first
  std::optional<std::string> b;  // ascending, nulls last
  int64_t id;  // payload: tells rows apart
};

std::shared_ptr<arrow::Schema> RowSchema() {
  return arrow::schema({arrow::field("a", arrow::int64()), arrow::field("b", arrow::utf8()),
                        arrow::field("id", arrow::int64())});
}

std::vector<Row> RandomRows(int64_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Row> rows;
  for (int64_t i = 0; i < n; ++i) {
    Row r;
    if (rng() % 10 != 0) r.a = static_cast<int64_t>(rng() % 50) - 25;  // many ties
    if (rng() % 8 != 0) r.b = "s" + std::to_string(rng() % 300);
    r.id = i;
    rows.push_back(r);
  }
  return rows;
}

std::shared_ptr<arrow::RecordBatch> ToBatch(const std::vector<Row>& rows, size_t from, size_t to) {
  arrow::Int64Builder a, id;
  arrow::StringBuilder b;
  for (size_t i = from; i < to; ++i) {
    const Row& r = rows[i];
    EXPECT_TRUE((r.a ? a.Append(*r.a) : a.AppendNull()).ok());
    EXPECT_TRUE((r.b ? b.Append(*r.b) : b.AppendNull()).ok());
    EXPECT_TRUE(id.Append(r.id).ok());
  }
  return arrow::RecordBatch::Make(RowSchema(), static_cast<int64_t>(to - from),
                                  {a.Finish().ValueOrDie(), b.Finish().ValueOrDie(), id.Finish().ValueOrDie()});
}

// (a desc nulls first, b asc nulls last) as a std::sort key.
auto SortKey(const Row& r) {
  return std::make_tuple(r.a.has_value(), r.a ? -*r.a : 0, !r.b.has_value(), r.b.value_or(""));
}

ExternalSortOptions Options(int64_t limit, const std::string& dir) {
  ExternalSortOptions o;
  o.keys = {cp::SortKey("a", cp::SortOrder::Descending, cp::NullPlacement::AtStart),
            cp::SortKey("b", cp::SortOrder::Ascending, cp::NullPlacement::AtEnd)};
  o.memory_limit_bytes = limit;
  o.spill_directory = dir;
  o.output_batch_rows = 1000;
  return o;
}

std::vector<Row> Drain(ExternalSorter& sorter) {
  std::vector<Row> out;
  auto st = sorter.Finish([&](const std::shared_ptr<arrow::RecordBatch>& batch) -> Status {
    EXPECT_LE(batch->num_rows(), 1000);
    const auto& a = static_cast<const arrow::Int64Array&>(*batch->column(0));
    const auto& b = static_cast<const arrow::StringArray&>(*batch->column(1));
    const auto& id = static_cast<const arrow::Int64Array&>(*batch->column(2));
    for (int64_t i = 0; i < batch->num_rows(); ++i) {
      Row r;
      if (a.IsValid(i)) r.a = a.Value(i);
      if (b.IsValid(i)) r.b = std::string(b.GetView(i));
      r.id = id.Value(i);
      out.push_back(r);
    }
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

class ExternalSortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("external-sort-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  bool DirEmpty() const { return fs::is_empty(dir_); }

  void SortAndCheck(int64_t n, int64_t limit, int64_t batch_rows, bool expect_spill, bool expect_passes) {
    const auto rows = RandomRows(n, static_cast<uint32_t>(n + limit));
    auto sorter = ExternalSorter::Make(RowSchema(), Options(limit, dir_.string())).ValueOrDie();
    for (size_t i = 0; i < rows.size(); i += static_cast<size_t>(batch_rows)) {
      ASSERT_TRUE(sorter->Add(ToBatch(rows, i, std::min(rows.size(), i + static_cast<size_t>(batch_rows)))).ok());
    }
    if (expect_spill) {
      EXPECT_FALSE(DirEmpty()) << "the runs are on disk before Finish";
    }
    const auto out = Drain(*sorter);
    EXPECT_EQ(sorter->runs_spilled() > 0, expect_spill);
    if (expect_passes) {
      EXPECT_GT(sorter->runs_spilled(), ExternalSorter::kMergeFanIn + 1) << "merge passes ran";
    }
    ASSERT_EQ(out.size(), rows.size());
    // Sorted: the key sequence equals std::sort's.
    std::vector<decltype(SortKey(rows[0]))> expected, got;
    for (const auto& r : rows) expected.push_back(SortKey(r));
    for (const auto& r : out) got.push_back(SortKey(r));
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(got, expected);
    // The same rows: every id once, with its own values.
    std::map<int64_t, const Row*> by_id;
    for (const auto& r : out) by_id[r.id] = &r;
    ASSERT_EQ(by_id.size(), rows.size());
    for (const auto& r : rows) {
      ASSERT_EQ(by_id[r.id]->a, r.a) << r.id;
      ASSERT_EQ(by_id[r.id]->b, r.b) << r.id;
    }
    sorter.reset();
    EXPECT_TRUE(DirEmpty()) << "spill files left behind";
  }

  fs::path dir_;
};

TEST_F(ExternalSortTest, FitsInMemoryWithoutSpilling) { SortAndCheck(5000, 64 << 20, 700, false, false); }

TEST_F(ExternalSortTest, SpillsSortedRunsAndMergesThem) { SortAndCheck(20000, 64 << 10, 1500, true, false); }

TEST_F(ExternalSortTest, ManyRunsAreMergedInPasses) { SortAndCheck(30000, 16 << 10, 500, true, true); }

TEST_F(ExternalSortTest, OneRowBatchesAndAllKeysEqual) {
  std::vector<Row> rows;
  for (int64_t i = 0; i < 3000; ++i) rows.push_back(Row{7, std::string("x"), i});
  auto sorter = ExternalSorter::Make(RowSchema(), Options(4 << 10, dir_.string())).ValueOrDie();
  for (size_t i = 0; i < rows.size(); ++i) ASSERT_TRUE(sorter->Add(ToBatch(rows, i, i + 1)).ok());
  const auto out = Drain(*sorter);
  EXPECT_GT(sorter->runs_spilled(), 0);
  std::set<int64_t> ids;
  for (const auto& r : out) ids.insert(r.id);
  EXPECT_EQ(ids.size(), rows.size());
  sorter.reset();
  EXPECT_TRUE(DirEmpty());
}

TEST_F(ExternalSortTest, AnErrorWhileEmittingLeavesNoFiles) {
  const auto rows = RandomRows(20000, 3);
  auto sorter = ExternalSorter::Make(RowSchema(), Options(32 << 10, dir_.string())).ValueOrDie();
  ASSERT_TRUE(sorter->Add(ToBatch(rows, 0, rows.size())).ok());
  int calls = 0;
  auto st = sorter->Finish([&](const std::shared_ptr<arrow::RecordBatch>&) -> Status {
    return ++calls == 3 ? IOError("disk full (test)") : Status::OK();
  });
  EXPECT_EQ(KindOf(st), ErrorKind::kIO) << st.ToString();
  EXPECT_FALSE(DirEmpty());
  sorter.reset();
  EXPECT_TRUE(DirEmpty()) << "spill files left behind after an error";
}

// A process killed with SIGKILL leaves its spill directory: the next sort in the same parent removes
// it when its owner is gone, and keeps those of live owners, other hosts and unknown owners.
TEST_F(ExternalSortTest, DirectoriesOfKilledProcessesAreRemovedByTheNextSort) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);  // reaped: its pid now names no process
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  auto leave = [&](const std::string& name, const std::string& owner) {
    fs::create_directories(dir_ / name);
    std::ofstream(dir_ / name / "run-000000.arrow") << "spilled";
    if (!owner.empty()) std::ofstream(dir_ / name / "owner") << owner << "\n";
  };
  leave("lakesync-sort-killed", std::to_string(child) + " " + host);
  leave("lakesync-sort-alive", std::to_string(::getpid()) + " " + host);
  leave("lakesync-sort-elsewhere", std::to_string(child) + " another-host");
  leave("lakesync-sort-unowned", "");
  leave("lakesync-collapse-killed", std::to_string(child) + " " + host);  // another prefix

  const auto rows = RandomRows(5000, 9);
  auto sorter = ExternalSorter::Make(RowSchema(), Options(16 << 10, dir_.string())).ValueOrDie();
  ASSERT_TRUE(sorter->Add(ToBatch(rows, 0, rows.size())).ok());
  ASSERT_TRUE(sorter->Finish([](const std::shared_ptr<arrow::RecordBatch>&) { return Status::OK(); }).ok());
  sorter.reset();

  EXPECT_FALSE(fs::exists(dir_ / "lakesync-sort-killed"));
  EXPECT_TRUE(fs::exists(dir_ / "lakesync-sort-alive"));
  EXPECT_TRUE(fs::exists(dir_ / "lakesync-sort-elsewhere"));
  EXPECT_TRUE(fs::exists(dir_ / "lakesync-sort-unowned"));
  EXPECT_TRUE(fs::exists(dir_ / "lakesync-collapse-killed"));
  EXPECT_EQ(internal::RemoveAbandonedSpillDirectories(dir_.string(), "lakesync-collapse"), 1);
  EXPECT_FALSE(fs::exists(dir_ / "lakesync-collapse-killed"));
}

TEST_F(ExternalSortTest, BadOptionsAreRejected) {
  auto no_keys = Options(1 << 20, dir_.string());
  no_keys.keys.clear();
  EXPECT_EQ(KindOf(ExternalSorter::Make(RowSchema(), no_keys).status()), ErrorKind::kInvalidArgument);
  auto missing = Options(1 << 20, dir_.string());
  missing.keys = {cp::SortKey("nope")};
  EXPECT_EQ(KindOf(ExternalSorter::Make(RowSchema(), missing).status()), ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace lakesync::plan
