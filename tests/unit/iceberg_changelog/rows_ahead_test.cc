// RowsAhead on its own: which rows a capture keeps, when a later snapshot may take them (all of its
// deleted positions kept, the same equality delete files), what taking releases, the budget, and a
// new range dropping what the last one kept.
#include "lakesync/iceberg/changelog/rows_ahead.h"

#include <gtest/gtest.h>

#include <arrow/api.h>

#include "status_test_util.h"

namespace lakesync::changelog {
namespace {

// A batch of `n` rows at file positions first, first + 1, ...: id = position, v = "v<position>".
std::shared_ptr<arrow::RecordBatch> Rows(int64_t first, int64_t n) {
  arrow::Int64Builder ids;
  arrow::StringBuilder vs;
  for (int64_t p = first; p < first + n; ++p) {
    EXPECT_TRUE(ids.Append(p).ok());
    EXPECT_TRUE(vs.Append("v" + std::to_string(p)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("v", arrow::utf8())});
  return arrow::RecordBatch::Make(schema, n, {*ids.Finish(), *vs.Finish()});
}

puffin::PositionBitmap Positions(std::vector<int64_t> positions) {
  return ValueOrFail(puffin::PositionBitmap::FromPositions(positions));
}

std::vector<int64_t> IdsOf(const RowsAhead::Kept& kept, const puffin::PositionBitmap& which) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < kept.chunks.size(); ++i) {
    auto rows = ValueOrFail(kept.RowsOf(i, which));
    if (!rows) continue;
    const auto& ids = static_cast<const arrow::Int64Array&>(*rows->column(0));
    for (int64_t r = 0; r < ids.length(); ++r) out.push_back(ids.Value(r));
  }
  return out;
}

// Reads the file `path` as two batches of 10 rows, keeping the rows the capture asks for.
void ReadAndKeep(RowsAhead& ahead, std::set<std::string> equality_deletes = {}, const std::string& path = "f") {
  auto capture = ahead.BeginCapture(path, std::move(equality_deletes));
  ASSERT_NE(capture, nullptr);
  for (int64_t first : {0, 10}) {
    std::vector<int64_t> rows, positions;
    for (int64_t p : capture->AheadIn(first, first + 10)) {
      rows.push_back(p - first);
      positions.push_back(p);
    }
    ASSERT_OK(capture->Add(Rows(first, 10), rows, std::move(positions)));
  }
  ahead.Commit(std::move(capture));
}

TEST(RowsAheadTest, KeepsWhatTheRangeEndDeletesAndHandsItOutOnce) {
  RowsAhead ahead(1 << 20);
  auto end = std::make_shared<RowsAhead::PositionsByFile>();
  end->emplace("f", Positions({2, 5, 12, 17}));
  ahead.SetRangeEnd(end);
  EXPECT_EQ(ahead.BeginCapture("other", {}), nullptr);  // nothing of it is deleted by the end
  ReadAndKeep(ahead, {"eq-1"});
  const int64_t kept_bytes = ahead.kept_bytes();
  EXPECT_GT(kept_bytes, 0);

  // Taken only when every deleted position is kept, with the same equality delete files.
  EXPECT_EQ(ahead.Find("f", {"eq-1"}, Positions({5, 6})), nullptr);
  EXPECT_EQ(ahead.Find("f", {}, Positions({5})), nullptr);
  EXPECT_EQ(ahead.Find("g", {"eq-1"}, Positions({5})), nullptr);
  auto kept = ahead.Find("f", {"eq-1"}, Positions({5, 12}));
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(IdsOf(*kept, Positions({5, 12})), (std::vector<int64_t>{5, 12}));
  ahead.Take("f", Positions({5, 12}));
  // Still there until the snapshot is read to its end (a second pass takes them again).
  EXPECT_NE(ahead.Find("f", {"eq-1"}, Positions({5, 12})), nullptr);
  ASSERT_OK(ahead.ReleaseTaken());
  EXPECT_EQ(ahead.Find("f", {"eq-1"}, Positions({5})), nullptr);
  EXPECT_EQ(ahead.kept_bytes(), kept_bytes);  // each chunk has a row left: nothing is copied
  kept = ahead.Find("f", {"eq-1"}, Positions({2, 17}));
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(IdsOf(*kept, Positions({2, 17})), (std::vector<int64_t>{2, 17}));
  ahead.Take("f", Positions({2, 17}));
  ASSERT_OK(ahead.ReleaseTaken());
  EXPECT_EQ(ahead.kept_bytes(), 0);  // all taken: the file's entry is gone

  // A new range drops what the last one kept.
  ReadAndKeep(ahead, {"eq-1"});
  EXPECT_GT(ahead.kept_bytes(), 0);
  ahead.SetRangeEnd(end);
  EXPECT_EQ(ahead.kept_bytes(), 0);
  EXPECT_EQ(ahead.Find("f", {"eq-1"}, Positions({2})), nullptr);
}

// Rows taken stay in their chunk (no copy) until nothing of it is left (then it goes) or a capture
// needs their room in the budget (then chunks are copied down to their rows not taken); every
// snapshot still gets exactly its rows.
TEST(RowsAheadTest, TakenRowsLeaveTheirChunkWhenItEmptiesOrTheirRoomIsNeeded) {
  std::vector<int64_t> all;
  for (int64_t p = 0; p < 20; ++p) all.push_back(p);
  auto end = std::make_shared<RowsAhead::PositionsByFile>();
  end->emplace("f", Positions(all));  // every row of both batches is kept
  end->emplace("g", Positions(all));
  RowsAhead measure(1 << 20);
  measure.SetRangeEnd(end);
  ReadAndKeep(measure);
  const int64_t full = measure.kept_bytes();  // one file's 20 rows

  // Room for one file and a bit: g fits only once f's taken rows are dropped.
  RowsAhead ahead(full + full / 4);
  ahead.SetRangeEnd(end);
  ReadAndKeep(ahead, {}, "f");
  auto take = [&](std::vector<int64_t> positions) {
    auto kept = ahead.Find("f", {}, Positions(positions));
    ASSERT_NE(kept, nullptr);
    EXPECT_EQ(IdsOf(*kept, Positions(positions)), positions);
    ahead.Take("f", Positions(positions));
    ASSERT_OK(ahead.ReleaseTaken());
  };
  take({0, 1, 2, 3, 4, 5, 10});  // rows of both chunks left: nothing copied
  EXPECT_EQ(ahead.kept_bytes(), full);
  EXPECT_EQ(ahead.Find("f", {}, Positions({1})), nullptr);  // taken rows are not found again
  take({11, 12, 13, 14, 15, 16, 17, 18, 19});  // the second chunk emptied: gone
  const int64_t one_chunk = ahead.kept_bytes();
  EXPECT_LT(one_chunk, full);
  EXPECT_GT(one_chunk, full / 4);  // the first chunk, taken rows included, g's room short of a quarter

  ReadAndKeep(ahead, {}, "g");  // does not fit beside f's chunk as it is: f is copied down first
  EXPECT_NE(ahead.Find("g", {}, Positions({0, 19})), nullptr);
  EXPECT_LE(ahead.kept_bytes(), full + full / 4);
  auto rest = ahead.Find("f", {}, Positions({6, 7, 8, 9}));
  ASSERT_NE(rest, nullptr);
  ASSERT_EQ(rest->chunks.size(), 1u);
  EXPECT_EQ(rest->chunks[0].rows->num_rows(), 4);  // copied down to the rows not taken
  EXPECT_EQ(IdsOf(*rest, Positions(all)), (std::vector<int64_t>{6, 7, 8, 9}));
  take({6, 7, 8, 9});
  EXPECT_EQ(ahead.kept_bytes(), full);  // g alone
}

TEST(RowsAheadTest, NothingIsKeptPastTheBudgetOrWithoutARangeEnd) {
  auto end = std::make_shared<RowsAhead::PositionsByFile>();
  end->emplace("f", Positions({2, 5, 12, 17}));
  RowsAhead none(1 << 20);
  EXPECT_EQ(none.BeginCapture("f", {}), nullptr);  // no range end set
  RowsAhead off(0);
  off.SetRangeEnd(end);
  EXPECT_EQ(off.BeginCapture("f", {}), nullptr);
  RowsAhead tiny(8);  // four rows do not fit eight bytes
  tiny.SetRangeEnd(end);
  ReadAndKeep(tiny);
  EXPECT_EQ(tiny.kept_bytes(), 0);
  EXPECT_EQ(tiny.Find("f", {}, Positions({2})), nullptr);

  // Room for one file's rows, not two: the file committed second is not kept (committing happens in
  // file order, so which one is kept does not depend on the threads).
  end->emplace("g", Positions({2, 5, 12, 17}));
  RowsAhead measure(1 << 20);
  measure.SetRangeEnd(end);
  ReadAndKeep(measure);
  const int64_t one = measure.kept_bytes();
  RowsAhead room_for_one(one + one / 2);
  room_for_one.SetRangeEnd(end);
  ReadAndKeep(room_for_one, {}, "f");
  ReadAndKeep(room_for_one, {}, "g");
  EXPECT_EQ(room_for_one.kept_bytes(), one);
  EXPECT_NE(room_for_one.Find("f", {}, Positions({2})), nullptr);
  EXPECT_EQ(room_for_one.Find("g", {}, Positions({2})), nullptr);
}

}  // namespace
}  // namespace lakesync::changelog
