// parquet_io::RowGroupUnits, the row-group units the Iceberg, Delta and input-file readers share: the
// order of the results whatever the thread count, the read-ahead bound, and errors that name the
// file and the row group.
#include "lakesync/formats/parquet/row_group_units.h"

#include <arrow/api.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/metadata.h>

#include <atomic>
#include <fstream>
#include <map>
#include <numeric>

#include "parquet_test_util.h"

namespace lakesync::parquet_io {
namespace {

using testing::OpenIn;
using testing::OpenOut;
using testing::TempDir;

constexpr int64_t kGroupRows = 100;

// A file of one int64 column holding first, first + 1, ..., in row groups of kGroupRows rows.
std::string WriteFile(const TempDir& dir, const std::string& name, int64_t first, int64_t rows) {
  arrow::Int64Builder builder;
  for (int64_t i = 0; i < rows; ++i) EXPECT_TRUE(builder.Append(first + i).ok());
  auto table = arrow::Table::Make(arrow::schema({arrow::field("v", arrow::int64())}), {builder.Finish().ValueOrDie()});
  const std::string path = dir.File(name);
  EXPECT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), OpenOut(path), kGroupRows).ok());
  return path;
}

struct TestFile {
  std::string path;
  std::shared_ptr<arrow::io::RandomAccessFile> input;
  std::shared_ptr<parquet::FileMetaData> metadata;
};

Result<std::unique_ptr<parquet::arrow::FileReader>> OpenReader(const std::string& path) {
  return parquet::arrow::OpenFile(OpenIn(path), arrow::default_memory_pool());
}

using Values = std::vector<int64_t>;
using Units = RowGroupUnits<TestFile, parquet::arrow::FileReader, Values>;

// Values of a whole file or of one row group.
Result<Values> ReadValues(parquet::arrow::FileReader& reader, int row_group) {
  std::shared_ptr<arrow::Table> table;
  if (row_group < 0) {
    ARROW_ASSIGN_OR_RAISE(table, reader.ReadTable());
  } else {
    ARROW_ASSIGN_OR_RAISE(table, reader.ReadRowGroup(row_group));
  }
  Values out;
  for (const auto& chunk : table->column(0)->chunks()) {
    const auto& a = static_cast<const arrow::Int64Array&>(*chunk);
    for (int64_t i = 0; i < a.length(); ++i) out.push_back(a.Value(i));
  }
  return out;
}

// Hooks over `paths`; `read` (when given) replaces ReadValues.
Units::Hooks MakeHooks(std::vector<std::string> paths, std::function<Result<Values>(const TestFile&, int)> before = {}) {
  Units::Hooks hooks;
  hooks.plan = [paths](size_t index) -> Result<std::optional<Units::Planned>> {
    Units::Planned planned;
    auto file = std::make_shared<TestFile>();
    file->path = paths[index];
    file->input = OpenIn(paths[index]);
    ARROW_ASSIGN_OR_RAISE(planned.reader, OpenReader(paths[index]));
    file->metadata = planned.reader->parquet_reader()->metadata();
    for (int g = 0; g < file->metadata->num_row_groups(); ++g) planned.row_groups.push_back(g);
    planned.file = std::move(file);
    return std::optional<Units::Planned>(std::move(planned));
  };
  hooks.open_row_group = [](const TestFile& file, int) { return OpenReader(file.path); };
  hooks.read = [before](const TestFile& file, int row_group, parquet::arrow::FileReader& reader) -> Result<Values> {
    if (before) ARROW_RETURN_NOT_OK(before(file, row_group).status());
    return ReadValues(reader, row_group);
  };
  hooks.describe = [](const TestFile& file) { return "test file " + file.path; };
  return hooks;
}

// Every unit's values, in the order they come back.
Result<std::vector<Values>> Drain(Units& units) {
  std::vector<Values> out;
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto next, units.Next());
    if (!next) return out;
    out.push_back(std::move(*next));
  }
}

class RowGroupUnitsTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = ThreadCount(); }
  void TearDown() override { ASSERT_TRUE(ConfigureThreads(saved_).ok()); }
  int saved_ = 1;
  TempDir dir_;
};

TEST_F(RowGroupUnitsTest, ResultsComeInFileAndRowGroupOrderForEveryThreadCount) {
  const std::vector<std::string> paths = {WriteFile(dir_, "a.parquet", 0, 5 * kGroupRows),
                                          WriteFile(dir_, "b.parquet", 5 * kGroupRows, kGroupRows),
                                          WriteFile(dir_, "c.parquet", 6 * kGroupRows, 4 * kGroupRows)};
  for (int threads : {1, 4}) {
    ASSERT_TRUE(ConfigureThreads(threads).ok());
    Units units(paths.size(), MakeHooks(paths));
    ASSERT_EQ(*units.RowGroupsOfFirstFile(), 5u);
    units.Start(/*split=*/true, /*column_threads=*/false);
    auto got = Drain(units);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    // One unit per row group; b, of a single row group, is one unit too.
    ASSERT_EQ(got->size(), 10u) << threads;
    Values all;
    for (const auto& unit : *got) {
      EXPECT_EQ(unit.size(), static_cast<size_t>(kGroupRows));
      all.insert(all.end(), unit.begin(), unit.end());
    }
    Values expected(10 * kGroupRows);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(all, expected) << threads << " threads";

    // Unsplit: one unit per file, streamed through NextFile on this thread.
    Units whole(paths.size(), MakeHooks(paths));
    whole.Start(/*split=*/false, /*column_threads=*/true);
    Values streamed;
    for (size_t i = 0; i < paths.size(); ++i) {
      auto next = whole.NextFile();
      ASSERT_TRUE(next.ok() && next->reader) << i;
      EXPECT_EQ(next->file->path, paths[i]);
      auto values = ReadValues(*next->reader, -1);
      streamed.insert(streamed.end(), values->begin(), values->end());
    }
    EXPECT_FALSE(whole.NextFile()->reader);
    EXPECT_EQ(streamed, expected);
  }
}

// StreamBatches: file after file, a "batch" (here a row group) decoded on this thread and finished on
// the pool after its reader has moved on; results in order whatever the thread count; a file that
// cannot be planned fails in its place, with the caller's context, after the batches before it.
TEST_F(RowGroupUnitsTest, StreamedBatchesFinishOnThePoolInOrder) {
  const std::vector<std::string> paths = {WriteFile(dir_, "a.parquet", 0, 5 * kGroupRows),
                                          WriteFile(dir_, "b.parquet", 5 * kGroupRows, kGroupRows),
                                          WriteFile(dir_, "c.parquet", 6 * kGroupRows, 4 * kGroupRows)};
  using Unit = Units::BatchUnit<Values>;
  auto stream_of = [](Units& units, std::map<std::string, int>& next_group) {
    return units.StreamBatches<Values>(
        [&next_group](const std::shared_ptr<const TestFile>& file,
                      parquet::arrow::FileReader& reader) -> Result<std::optional<Unit>> {
          int& group = next_group[file->path];
          if (group >= reader.num_row_groups()) return std::nullopt;
          ARROW_ASSIGN_OR_RAISE(auto decoded, ReadValues(reader, group++));
          // Finishing: values doubled, from the decoded batch the unit owns.
          return std::optional<Unit>([decoded = std::move(decoded)]() -> Result<Values> {
            Values out;
            for (int64_t v : decoded) out.push_back(2 * v);
            return out;
          });
        },
        "streaming the test files");
  };
  Values expected(10 * kGroupRows);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = 2 * static_cast<int64_t>(i);
  for (int threads : {1, 2, 4}) {
    ASSERT_TRUE(ConfigureThreads(threads).ok());
    Units units(paths.size(), MakeHooks(paths));
    units.Start(/*split=*/false, /*column_threads=*/true);
    std::map<std::string, int> next_group;
    auto stream = stream_of(units, next_group);
    Values all;
    size_t batches = 0;
    while (true) {
      auto next = stream->Next();
      ASSERT_TRUE(next.ok()) << next.status().ToString();
      if (!*next) break;
      all.insert(all.end(), (*next)->begin(), (*next)->end());
      ++batches;
    }
    EXPECT_EQ(batches, 10u) << threads;
    EXPECT_EQ(all, expected) << threads << " threads";
  }

  // A second file that is not Parquet: the first file's batches, then the error (as the plan hook
  // reports it; the readers' hooks name the file), with the caller's context.
  ASSERT_TRUE(ConfigureThreads(2).ok());
  const std::string garbage = dir_.File("garbage.parquet");
  std::ofstream(garbage) << "not a parquet file, but long enough to have a footer to read";
  const std::vector<std::string> broken = {paths[0], garbage, paths[2]};
  Units units(broken.size(), MakeHooks(broken));
  units.Start(/*split=*/false, /*column_threads=*/true);
  std::map<std::string, int> next_group;
  auto stream = stream_of(units, next_group);
  for (int i = 0; i < 5; ++i) {
    auto next = stream->Next();
    ASSERT_TRUE(next.ok() && *next) << i << ": " << next.status().ToString();
  }
  auto failed = stream->Next();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("streaming the test files"), std::string::npos) << failed.status().ToString();
  EXPECT_NE(failed.status().message().find("magic bytes"), std::string::npos) << failed.status().ToString();
}

TEST_F(RowGroupUnitsTest, ReadAheadDependsOnTheFileAndBoundsTheUnitsInFlight) {
  ASSERT_TRUE(ConfigureThreads(4).ok());  // default window: 8
  const std::string path = WriteFile(dir_, "a.parquet", 0, 20 * kGroupRows);
  const std::string single = WriteFile(dir_, "one.parquet", 0, kGroupRows);
  auto metadata = (*OpenReader(path))->parquet_reader()->metadata();
  int64_t largest = 0;
  for (int g = 0; g < metadata->num_row_groups(); ++g) {
    largest = std::max(largest, metadata->RowGroup(g)->total_byte_size());
  }
  EXPECT_EQ(ReadAheadWindow(*metadata, 3 * largest), 3);
  EXPECT_EQ(ReadAheadWindow(*metadata, 100 * largest), 8);  // no more than the executor's window
  EXPECT_EQ(ReadAheadWindow(*metadata, 2 * largest - 1), 0);  // fewer than two fit: stream
  EXPECT_EQ(ReadAheadWindow(*(*OpenReader(single))->parquet_reader()->metadata(), 100 * largest), 0);
  // Whether a file streams does not depend on the thread count.
  ASSERT_TRUE(ConfigureThreads(1).ok());
  EXPECT_EQ(ReadAheadWindow(*metadata, 3 * largest), 2);
  EXPECT_EQ(ReadAheadWindow(*metadata, 2 * largest - 1), 0);

  // With a window of 2, when the consumer holds result i at most units 0..i+2 have started.
  ASSERT_TRUE(ConfigureThreads(4).ok());
  std::atomic<int> started{0};
  Units units(1, MakeHooks({path}, [&](const TestFile&, int) -> Result<Values> {
                ++started;
                return Values{};
              }));
  units.Start(/*split=*/true, /*column_threads=*/false, /*window=*/2);
  for (int i = 0; i < 20; ++i) {
    auto next = units.Next();
    ASSERT_TRUE(next.ok() && next->has_value()) << i;
    EXPECT_LE(started.load(), i + 1 + 2) << "unit " << i;
  }
  EXPECT_FALSE(units.Next()->has_value());
}

TEST_F(RowGroupUnitsTest, AnErrorNamesTheFileAndRowGroupInItsPlace) {
  const std::vector<std::string> paths = {WriteFile(dir_, "a.parquet", 0, 3 * kGroupRows),
                                          WriteFile(dir_, "b.parquet", 0, 5 * kGroupRows)};
  for (int threads : {1, 4}) {
    ASSERT_TRUE(ConfigureThreads(threads).ok());
    Units units(paths.size(), MakeHooks(paths, [&](const TestFile& file, int row_group) -> Result<Values> {
                  if (file.path == paths[1] && row_group == 2) return Corrupt("bad page");
                  return Values{};
                }));
    units.Start(/*split=*/true, /*column_threads=*/false);
    for (int i = 0; i < 5; ++i) {  // a's three row groups, then b's first two
      auto next = units.Next();
      ASSERT_TRUE(next.ok()) << threads << " threads, unit " << i << ": " << next.status().ToString();
    }
    auto failed = units.Next();
    ASSERT_FALSE(failed.ok()) << threads << " threads";
    EXPECT_EQ(failed.status().message(), "reading row group 2 of test file " + paths[1] + ": bad page");
    EXPECT_EQ(KindOf(failed.status()), ErrorKind::kCorrupt);
    EXPECT_FALSE(units.Next()->has_value());  // the error ends the read
  }
  // A row group that cannot be opened is named the same way.
  Units::Hooks hooks = MakeHooks(paths);
  hooks.open_row_group = [](const TestFile&, int row_group) -> Result<std::unique_ptr<parquet::arrow::FileReader>> {
    return NotFound("gone at {}", row_group);
  };
  Units units(paths.size(), std::move(hooks));
  units.Start(/*split=*/true, /*column_threads=*/false);
  auto failed = units.Next();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "reading row group 0 of test file " + paths[0] + ": gone at 0");
}

}  // namespace
}  // namespace lakesync::parquet_io
