// Randomized check of ChangeCollapser against a straightforward reference written here: a std::map of
// each key's changes, stably sorted by (sequence, kind rank), with the per-key rules applied one key
// at a time. Outputs must match as multisets, in memory and with a memory limit that forces spilling
// (and re-splitting of buckets), with whole delete images and with images narrowed to the key and
// `payload` (CollapseOptions::delete_image_columns: `note` is then null in delete images).
#include <arrow/api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <tuple>

#include "lakesync/plan/change_collapser.h"
#include "test_support.h"

namespace lakesync::plan {
namespace {

struct Change {
  std::string region;  // key part 1
  int64_t id;          // key part 2
  std::string payload;
  std::string note;    // dropped from delete images when narrowing
  int64_t seq;
  std::string op;      // INSERT / UPDATE_BEFORE / UPDATE_AFTER / DELETE
};

int Rank(const std::string& op) {
  if (op == "UPDATE_BEFORE") return 0;
  if (op == "DELETE") return 1;
  if (op == "UPDATE_AFTER") return 2;
  return 3;
}

std::string Render(const Change& c, bool drop_note = false) {
  return c.region + "|" + std::to_string(c.id) + "|" + c.payload + "|" + (drop_note ? "null" : c.note);
}

struct Expected {
  std::map<std::string, int> rows;
  std::map<std::string, int> deletes;
  int64_t keys = 0;
};

Expected Reference(const std::vector<Change>& changes, bool upsert, bool narrow) {
  std::map<std::pair<std::string, int64_t>, std::vector<Change>> by_key;
  for (const auto& c : changes) {
    if (upsert && c.op == "UPDATE_BEFORE") continue;
    by_key[{c.region, c.id}].push_back(c);
  }
  Expected out;
  for (auto& [key, list] : by_key) {
    std::stable_sort(list.begin(), list.end(), [](const Change& a, const Change& b) {
      return std::make_tuple(a.seq, Rank(a.op)) < std::make_tuple(b.seq, Rank(b.op));
    });
    ++out.keys;
    const Change& first = list.front();
    const Change& last = list.back();
    if (last.op == "INSERT" || last.op == "UPDATE_AFTER") ++out.rows[Render(last)];
    if (upsert || first.op != "INSERT") {
      const bool old_image = first.op == "UPDATE_BEFORE" || first.op == "DELETE";
      ++out.deletes[Render(old_image ? first : last, narrow)];
    }
  }
  return out;
}

std::shared_ptr<arrow::Schema> Schema() {
  return arrow::schema({arrow::field("region", arrow::utf8()), arrow::field("id", arrow::int64()),
                        arrow::field("payload", arrow::utf8()), arrow::field("note", arrow::utf8()),
                        arrow::field("seq", arrow::int64()),
                        arrow::field("op", arrow::utf8())});
}

std::shared_ptr<arrow::RecordBatch> ToBatch(const std::vector<Change>& changes, size_t begin, size_t end) {
  arrow::StringBuilder region, payload, note, op;
  arrow::Int64Builder id, seq;
  for (size_t i = begin; i < end; ++i) {
    EXPECT_TRUE(region.Append(changes[i].region).ok());
    EXPECT_TRUE(id.Append(changes[i].id).ok());
    EXPECT_TRUE(payload.Append(changes[i].payload).ok());
    EXPECT_TRUE(note.Append(changes[i].note).ok());
    EXPECT_TRUE(seq.Append(changes[i].seq).ok());
    EXPECT_TRUE(op.Append(changes[i].op).ok());
  }
  return arrow::RecordBatch::Make(Schema(), static_cast<int64_t>(end - begin),
                                  {region.Finish().ValueOrDie(), id.Finish().ValueOrDie(),
                                   payload.Finish().ValueOrDie(), note.Finish().ValueOrDie(), seq.Finish().ValueOrDie(),
                                   op.Finish().ValueOrDie()});
}

std::vector<Change> RandomChanges(std::mt19937_64& rng, int count, int key_space) {
  static const char* kOps[] = {"INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"};
  static const char* kRegions[] = {"eu", "us", "apac"};
  std::vector<Change> out;
  for (int i = 0; i < count; ++i) {
    Change c;
    c.region = kRegions[rng() % 3];
    c.id = static_cast<int64_t>(rng() % key_space);
    c.payload = "p" + std::to_string(i);  // unique: tells which change won
    c.note = "note of change " + std::to_string(i);
    c.seq = static_cast<int64_t>(rng() % 6);  // few values: many (sequence, rank) ties
    c.op = kOps[rng() % 4];
    out.push_back(std::move(c));
  }
  return out;
}

class CollapseProperty : public ::testing::TestWithParam<std::tuple<bool, int64_t, bool>> {};

TEST_P(CollapseProperty, MatchesReference) {
  const auto [upsert, memory_limit, narrow] = GetParam();
  std::mt19937_64 rng(20240611);
  // Unique per process: ctest runs the parameterisations in parallel, and each checks that its own
  // spill directory ends up empty.
  const auto spill_parent = std::filesystem::temp_directory_path() /
                            ("lakesync-plan-property-" + std::to_string(::getpid()));
  for (int round = 0; round < 6; ++round) {
    const int count = 1000 + static_cast<int>(rng() % 4000);
    const int key_space = 5 + static_cast<int>(rng() % 400);
    const auto changes = RandomChanges(rng, count, key_space);
    const Expected expected = Reference(changes, upsert, narrow);

    CollapseOptions options;
    options.key_columns = {"region", "id"};
    options.sequence_column = "seq";
    options.change_type_column = "op";
    options.output_columns = {"region", "id", "payload", "note"};
    if (narrow) options.delete_image_columns = std::vector<std::string>{"payload"};
    options.upsert = upsert;
    options.memory_limit_bytes = memory_limit;
    options.spill_directory = spill_parent.string();
    auto collapser = ChangeCollapser::Make(Schema(), options).ValueOrDie();
    size_t at = 0;
    while (at < changes.size()) {  // batches of random sizes
      const size_t end = std::min(changes.size(), at + 1 + rng() % 700);
      ASSERT_TRUE(collapser->Add(ToBatch(changes, at, end)).ok());
      at = end;
    }
    const auto got = testing::Drain(*collapser, 2);
    EXPECT_EQ(got.rows, expected.rows) << "round " << round;
    EXPECT_EQ(got.deletes, expected.deletes) << "round " << round;

    const auto& stats = collapser->stats();
    EXPECT_EQ(stats.keys, expected.keys);
    EXPECT_EQ(stats.changes, count);
    EXPECT_EQ(stats.inserts + stats.update_befores + stats.update_afters + stats.deletes, count);
    EXPECT_EQ(stats.collapsed_away, count - stats.rows_to_write);
    std::map<std::string, int> seen;
    for (const auto& keys : got.part_keys) {
      for (const auto& entry : keys) EXPECT_EQ(seen[entry.first]++, 0) << "key in two parts: " << entry.first;
    }
    // Narrowed changes may fit the larger limit.
    if (memory_limit < 100000 && (!narrow || memory_limit < 10000)) {
      EXPECT_GT(stats.spilled_bytes, 0);
      EXPECT_GT(got.parts, 1);
    } else if (memory_limit >= 100000) {
      EXPECT_EQ(stats.spilled_bytes, 0);
      EXPECT_LE(got.parts, 1);
    }
  }
  EXPECT_TRUE(!std::filesystem::exists(spill_parent) || std::filesystem::is_empty(spill_parent));
  std::filesystem::remove_all(spill_parent);
}

INSTANTIATE_TEST_SUITE_P(Modes, CollapseProperty,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Values(int64_t{100} << 20, int64_t{2000}, int64_t{30000}),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "Upsert" : "Changelog") +
                                  (std::get<1>(info.param) > 100000 ? "InMemory" : "Spill") +
                                  std::to_string(std::get<1>(info.param) > 100000 ? 0 : std::get<1>(info.param)) +
                                  (std::get<2>(info.param) ? "NarrowImages" : "");
                         });

}  // namespace
}  // namespace lakesync::plan
