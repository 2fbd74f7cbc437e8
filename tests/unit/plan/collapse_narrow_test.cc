// Narrow delete-side rows (CollapseOptions::delete_image_columns): when the changes outgrow the memory
// limit, UPDATE_BEFORE and DELETE rows are kept with only the key, the delete image columns, sequence
// and kind, which lets a batch of updates that would spill stay in memory; the result is the one the
// rule gives (the property test checks it at random), with nulls in the dropped image columns.
#include <arrow/api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "lakesync/plan/change_collapser.h"
#include "test_support.h"

namespace lakesync::plan {
namespace {

std::shared_ptr<arrow::Schema> WideSchema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                        arrow::field("note", arrow::utf8()), arrow::field("seq", arrow::int64()),
                        arrow::field("op", arrow::utf8())});
}

CollapseOptions WideOptions(int64_t memory_limit, const std::string& spill_directory, bool narrow) {
  CollapseOptions options = testing::ChangeOptions();
  options.output_columns = {"id", "name", "note"};
  options.memory_limit_bytes = memory_limit;
  options.spill_directory = spill_directory;
  if (narrow) options.delete_image_columns = std::vector<std::string>{"name"};
  return options;
}

// `keys` updates (a before- and an after-image each) with a wide `note`, in batches of 100 rows.
std::unique_ptr<ChangeCollapser> Updates(int keys, int64_t memory_limit, const std::string& spill_directory,
                                         bool narrow) {
  auto collapser = ChangeCollapser::Make(WideSchema(), WideOptions(memory_limit, spill_directory, narrow)).ValueOrDie();
  const std::string note(300, 'x');
  for (int start = 0; start < keys; start += 50) {
    arrow::Int64Builder id, seq;
    arrow::StringBuilder name, notes, op;
    for (int k = start; k < std::min(keys, start + 50); ++k) {
      for (const char* kind : {"UPDATE_BEFORE", "UPDATE_AFTER"}) {
        EXPECT_TRUE(id.Append(k).ok());
        EXPECT_TRUE(name.Append(std::string(kind) + std::to_string(k)).ok());
        EXPECT_TRUE(notes.Append(note).ok());
        EXPECT_TRUE(seq.Append(1).ok());
        EXPECT_TRUE(op.Append(kind).ok());
      }
    }
    const int64_t rows = id.length();
    auto batch = arrow::RecordBatch::Make(WideSchema(), rows,
                                          {id.Finish().ValueOrDie(), name.Finish().ValueOrDie(),
                                           notes.Finish().ValueOrDie(), seq.Finish().ValueOrDie(),
                                           op.Finish().ValueOrDie()});
    EXPECT_TRUE(collapser->Add(batch).ok());
  }
  return collapser;
}

std::filesystem::path SpillParent(const std::string& name) {
  auto parent = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(parent);
  return parent;
}

TEST(CollapseNarrow, UpdatesThatWouldSpillStayInMemory) {
  const auto parent = SpillParent("lakesync-plan-narrow");
  // 2000 updates: ~1.3 MB of full rows, ~0.7 MB once the before-images are narrowed.
  constexpr int kKeys = 2000;
  constexpr int64_t kLimit = 1000000;
  auto whole = Updates(kKeys, kLimit, parent.string(), /*narrow=*/false);
  auto narrowed = Updates(kKeys, kLimit, parent.string(), /*narrow=*/true);
  EXPECT_GT(whole->stats().spilled_bytes, 0) << "the test needs input that spills without narrowing";
  EXPECT_EQ(narrowed->stats().spilled_bytes, 0);

  const auto a = testing::Drain(*whole);
  const auto b = testing::Drain(*narrowed);
  EXPECT_EQ(a.rows, b.rows);  // after-images keep every column
  ASSERT_EQ(b.deletes.size(), static_cast<size_t>(kKeys));
  for (const auto& [row, count] : b.deletes) {
    // id|name|note: the before-image's name, no note.
    const auto id = row.substr(0, row.find('|'));
    EXPECT_EQ(row, id + "|UPDATE_BEFORE" + id + "|null");
    EXPECT_EQ(a.deletes.count(id + "|UPDATE_BEFORE" + id + "|" + std::string(300, 'x')), 1u) << row;
  }
  EXPECT_EQ(narrowed->stats().rows_to_write, kKeys);
  EXPECT_EQ(narrowed->stats().keys_to_delete, kKeys);
  EXPECT_EQ(narrowed->stats().collapsed_away, kKeys);
  whole.reset();
  narrowed.reset();
  EXPECT_TRUE(!std::filesystem::exists(parent) || std::filesystem::is_empty(parent));
  std::filesystem::remove_all(parent);
}

// Narrowing and spilling together: narrow rows get spill files of their own, split and read back with
// their full rows' buckets.
TEST(CollapseNarrow, NarrowRowsSpillAndResplitWithTheirKeys) {
  const auto parent = SpillParent("lakesync-plan-narrow-spill");
  constexpr int kKeys = 3000;
  auto whole = Updates(kKeys, 1000000000, parent.string(), /*narrow=*/false);
  auto narrowed = Updates(kKeys, 20000, parent.string(), /*narrow=*/true);
  EXPECT_GT(narrowed->stats().spilled_bytes, 0);
  const auto a = testing::Drain(*whole);
  const auto b = testing::Drain(*narrowed);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(b.deletes.size(), static_cast<size_t>(kKeys));
  EXPECT_GT(narrowed->stats().spilled_bytes, whole->stats().spilled_bytes);  // re-splits happened
  narrowed.reset();
  EXPECT_TRUE(!std::filesystem::exists(parent) || std::filesystem::is_empty(parent));
  std::filesystem::remove_all(parent);
}

// Two DELETEs of one key with equal sequence numbers: the first in input order is the delete image,
// also when the first was narrowed in an earlier batch than the second.
TEST(CollapseNarrow, TiesKeepInputOrderAcrossNarrowedBatches) {
  const auto parent = SpillParent("lakesync-plan-narrow-ties");
  const std::string big(20000, 'n');
  auto collapser = ChangeCollapser::Make(WideSchema(), WideOptions(15000, parent.string(), true)).ValueOrDie();
  // The first batch goes over the limit and is narrowed as it comes; the second, small, is not
  // (until the changes are collapsed), so the two DELETEs of key 1 sit apart for a while.
  for (const char* name : {"a", "b"}) {
    const std::string note = name[0] == 'a' ? big : "small";
    auto batch = testing::Batch(WideSchema(), {"[1, 2]", std::string("[\"") + name + "\", \"i\"]",
                                               "[\"" + note + "\", \"" + note + "\"]", "[5, 5]",
                                               "[\"DELETE\", \"DELETE\"]"});
    ASSERT_TRUE(collapser->Add(batch).ok());
  }
  EXPECT_EQ(collapser->stats().spilled_bytes, 0);
  const auto got = testing::Drain(*collapser);
  EXPECT_EQ(got.deletes, testing::Rows({"1|a|null", "2|i|null"}));
  EXPECT_EQ(got.rows, testing::Rows({}));
  std::filesystem::remove_all(parent);
}

TEST(CollapseNarrow, AnUnknownDeleteImageColumnIsRefused) {
  CollapseOptions options = WideOptions(1 << 20, "", true);
  options.delete_image_columns = std::vector<std::string>{"nope"};
  auto made = ChangeCollapser::Make(WideSchema(), options);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().ToString().find("'nope'"), std::string::npos) << made.status().ToString();
}

}  // namespace
}  // namespace lakesync::plan
