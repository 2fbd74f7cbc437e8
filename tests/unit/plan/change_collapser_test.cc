// Rule-by-rule tests of ChangeCollapser with small hand-built batches. Expectations follow the rules
// in the issue and beam-compat.md §4.3, worked out by hand per case.
#include "lakesync/plan/change_collapser.h"

#include <arrow/api.h>
#include <arrow/extension/uuid.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "test_support.h"

namespace lakesync::plan {
namespace {

using testing::Batch;
using testing::Drain;
using testing::ErrorOf;
using testing::Rows;

using testing::ChangeSchema;

CollapseOptions Options() { return testing::ChangeOptions(); }

// Collapses one batch given as JSON columns (id, name, seq, op).
testing::Collected Collapse(const std::vector<std::string>& columns, CollapseOptions options = Options(),
                            CollapseStats* stats = nullptr) {
  auto collapser = ChangeCollapser::Make(ChangeSchema(), std::move(options)).ValueOrDie();
  auto status = collapser->Add(Batch(ChangeSchema(), columns));
  EXPECT_TRUE(status.ok()) << status.ToString();
  auto out = Drain(*collapser);
  if (stats) *stats = collapser->stats();
  return out;
}

TEST(CollapseStats, SumsEveryCounter) {
  plan::CollapseStats a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const plan::CollapseStats b{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110};
  a += b;
  EXPECT_EQ(a.changes, 11);
  EXPECT_EQ(a.inserts, 22);
  EXPECT_EQ(a.update_befores, 33);
  EXPECT_EQ(a.update_afters, 44);
  EXPECT_EQ(a.deletes, 55);
  EXPECT_EQ(a.keys, 66);
  EXPECT_EQ(a.rows_to_write, 77);
  EXPECT_EQ(a.keys_to_delete, 88);
  EXPECT_EQ(a.collapsed_away, 99);
  EXPECT_EQ(a.dead_letters, 110);
  EXPECT_EQ(a.spilled_bytes, 121);
}

TEST(ChangeCollapser, InsertThenDeleteInOneBatchWritesNothing) {
  CollapseStats stats;
  auto out = Collapse({"[1, 1]", R"(["a", "a"])", "[1, 2]", R"(["INSERT", "DELETE"])"}, Options(), &stats);
  EXPECT_TRUE(out.rows.empty());
  EXPECT_TRUE(out.deletes.empty());
  EXPECT_EQ(out.parts, 0);  // a part with neither rows nor deletes is skipped
  EXPECT_EQ(stats.changes, 2);
  EXPECT_EQ(stats.inserts, 1);
  EXPECT_EQ(stats.deletes, 1);
  EXPECT_EQ(stats.keys, 1);
  EXPECT_EQ(stats.collapsed_away, 2);
}

TEST(ChangeCollapser, InsertOnlyWritesWithoutDelete) {
  auto out = Collapse({"[1]", R"(["a"])", "[1]", R"(["INSERT"])"});
  EXPECT_EQ(out.rows, Rows({"1|a"}));
  EXPECT_TRUE(out.deletes.empty());
}

TEST(ChangeCollapser, UpdatePairWritesAfterImageAndDeletesWithBeforeImage) {
  CollapseStats stats;
  auto out = Collapse({"[7, 7]", R"(["old", "new"])", "[5, 5]", R"(["UPDATE_BEFORE", "UPDATE_AFTER"])"}, Options(),
                      &stats);
  EXPECT_EQ(out.rows, Rows({"7|new"}));
  EXPECT_EQ(out.deletes, Rows({"7|old"}));  // the delete image is the before-image
  EXPECT_EQ(stats.update_befores, 1);
  EXPECT_EQ(stats.update_afters, 1);
  EXPECT_EQ(stats.rows_to_write, 1);
  EXPECT_EQ(stats.keys_to_delete, 1);
  EXPECT_EQ(stats.collapsed_away, 1);
}

TEST(ChangeCollapser, BeforeImageWithoutAfterImageDeletes) {
  auto out = Collapse({"[2]", R"(["x"])", "[3]", R"(["UPDATE_BEFORE"])"});
  EXPECT_TRUE(out.rows.empty());
  EXPECT_EQ(out.deletes, Rows({"2|x"}));
}

TEST(ChangeCollapser, DeleteOnlyDeletes) {
  auto out = Collapse({"[2]", R"(["x"])", "[3]", R"(["DELETE"])"});
  EXPECT_TRUE(out.rows.empty());
  EXPECT_EQ(out.deletes, Rows({"2|x"}));
}

TEST(ChangeCollapser, AfterImageOnlyAlsoDeletesUnlikeBeam) {
  // Deliberate: without a before-image the key may exist, so its old row must go.
  auto out = Collapse({"[4]", R"(["v"])", "[1]", R"(["UPDATE_AFTER"])"});
  EXPECT_EQ(out.rows, Rows({"4|v"}));
  EXPECT_EQ(out.deletes, Rows({"4|v"}));  // no older image known: the last record's values
}

TEST(ChangeCollapser, DeleteThenInsertRewritesAndDeletesWithOldImage) {
  auto out = Collapse({"[1, 1]", R"(["new", "old"])", "[2, 1]", R"(["INSERT", "DELETE"])"});
  EXPECT_EQ(out.rows, Rows({"1|new"}));
  EXPECT_EQ(out.deletes, Rows({"1|old"}));
}

TEST(ChangeCollapser, SequenceOrderBeatsInputOrder) {
  // The later sequence number is first in the input; it still wins.
  auto out = Collapse({"[1, 1, 1]", R"(["newest", "middle", "oldest"])", "[9, 5, 3]",
                       R"(["UPDATE_AFTER", "UPDATE_AFTER", "INSERT"])"});
  EXPECT_EQ(out.rows, Rows({"1|newest"}));
  EXPECT_TRUE(out.deletes.empty());  // first by sequence is the INSERT: born in this batch
}

TEST(ChangeCollapser, EqualSequenceOrderedByKindRank) {
  // Same sequence, input order I, UA, D, UB; sorted it is UB, D, UA, I: the INSERT is last and the
  // UPDATE_BEFORE first.
  auto out = Collapse({"[1, 1, 1, 1]", R"(["i", "ua", "d", "ub"])", "[4, 4, 4, 4]",
                       R"(["INSERT", "UPDATE_AFTER", "DELETE", "UPDATE_BEFORE"])"});
  EXPECT_EQ(out.rows, Rows({"1|i"}));
  EXPECT_EQ(out.deletes, Rows({"1|ub"}));

  // Without the INSERT the UPDATE_AFTER is last; DELETE before UPDATE_AFTER.
  out = Collapse({"[1, 1]", R"(["ua", "d"])", "[4, 4]", R"(["UPDATE_AFTER", "DELETE"])"});
  EXPECT_EQ(out.rows, Rows({"1|ua"}));
  EXPECT_EQ(out.deletes, Rows({"1|d"}));

  // DELETE after UPDATE_BEFORE: the UPDATE_BEFORE is first, nothing survives.
  out = Collapse({"[1, 1]", R"(["d", "ub"])", "[4, 4]", R"(["DELETE", "UPDATE_BEFORE"])"});
  EXPECT_TRUE(out.rows.empty());
  EXPECT_EQ(out.deletes, Rows({"1|ub"}));

  // INSERT then DELETE with equal sequence: DELETE sorts first, so the INSERT survives and (first is
  // the DELETE) the old row is deleted.
  out = Collapse({"[1, 1]", R"(["i", "d"])", "[4, 4]", R"(["INSERT", "DELETE"])"});
  EXPECT_EQ(out.rows, Rows({"1|i"}));
  EXPECT_EQ(out.deletes, Rows({"1|d"}));
}

TEST(ChangeCollapser, EqualSequenceAndKindKeepInputOrder) {
  auto out = Collapse({"[1, 1, 1]", R"(["first", "second", "third"])", "[2, 2, 2]",
                       R"(["UPDATE_AFTER", "UPDATE_AFTER", "UPDATE_AFTER"])"});
  EXPECT_EQ(out.rows, Rows({"1|third"}));
  EXPECT_EQ(out.deletes, Rows({"1|third"}));
}

TEST(ChangeCollapser, TiesKeepInputOrderAcrossBatches) {
  auto collapser = ChangeCollapser::Make(ChangeSchema(), Options()).ValueOrDie();
  ASSERT_TRUE(collapser->Add(Batch(ChangeSchema(), {"[1]", R"(["a"])", "[2]", R"(["INSERT"])"})).ok());
  ASSERT_TRUE(collapser->Add(Batch(ChangeSchema(), {"[1]", R"(["b"])", "[2]", R"(["INSERT"])"})).ok());
  auto out = Drain(*collapser);
  EXPECT_EQ(out.rows, Rows({"1|b"}));
}

TEST(ChangeCollapser, KeysAreIndependent) {
  auto out = Collapse({"[1, 2, 3, 2, 1]", R"(["a", "b", "c", "b2", "a-gone"])", "[1, 1, 1, 2, 2]",
                       R"(["INSERT", "UPDATE_BEFORE", "DELETE", "UPDATE_AFTER", "DELETE"])"});
  EXPECT_EQ(out.rows, Rows({"2|b2"}));
  EXPECT_EQ(out.deletes, Rows({"2|b", "3|c"}));
}

TEST(ChangeCollapser, UpsertReplacesEveryWrittenKeyAndDropsBeforeImages) {
  auto options = Options();
  options.upsert = true;
  CollapseStats stats;
  auto out = Collapse({"[1, 2, 2, 3, 4, 5, 5]", R"(["a", "old", "new", "gone", "lone-ub", "x", "x"])",
                       "[1, 1, 1, 1, 1, 1, 2]",
                       R"(["INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE", "UPDATE_BEFORE", "INSERT", "DELETE"])"},
                      options, &stats);
  EXPECT_EQ(out.rows, Rows({"1|a", "2|new"}));
  // Upsert deletes every key it saw, even one born in the batch (1, 5); the UPDATE_BEFOREs are dropped,
  // so key 2's delete image is its after-image and key 4 (only a before-image) is untouched.
  EXPECT_EQ(out.deletes, Rows({"1|a", "2|new", "3|gone", "5|x"}));
  EXPECT_EQ(stats.update_befores, 2);
  EXPECT_EQ(stats.keys, 4);
  EXPECT_EQ(stats.collapsed_away, 7 - 2);
}

TEST(ChangeCollapser, WithoutChangeTypeColumnEveryRowIsAnInsert) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                               arrow::field("seq", arrow::int32())});  // int32 sequence is widened
  CollapseOptions options;
  options.key_columns = {"id"};
  options.sequence_column = "seq";
  auto collapser = ChangeCollapser::Make(schema, options).ValueOrDie();
  ASSERT_TRUE(collapser->Add(Batch(schema, {"[1, 1, 2]", R"(["late", "early", "b"])", "[7, 3, 1]"})).ok());
  auto out = Drain(*collapser);
  EXPECT_EQ(out.rows, Rows({"1|late", "2|b"}));
  EXPECT_TRUE(out.deletes.empty());
  EXPECT_EQ(collapser->stats().inserts, 3);
  EXPECT_EQ(collapser->output_schema()->num_fields(), 2);  // control column stripped
}

TEST(ChangeCollapser, CustomChangeTypeMap) {
  auto options = Options();
  options.mapper = change::ChangeKindMapper::Make({{"c", "INSERT"}, {"u", "UPDATE_AFTER"}, {"d", "DELETE"}})
                       .ValueOrDie();
  auto out = Collapse({"[1, 1, 2]", R"(["a", "b", "z"])", "[1, 2, 1]", R"(["c", "u", "d"])"}, options);
  EXPECT_EQ(out.rows, Rows({"1|b"}));
  EXPECT_EQ(out.deletes, Rows({"2|z"}));
}

TEST(ChangeCollapser, DeltaChangeTypeNames) {
  auto out = Collapse({"[1, 1, 2]", R"(["a", "b", "z"])", "[1, 1, 1]",
                       R"(["update_preimage", "update_postimage", "insert"])"});
  EXPECT_EQ(out.rows, Rows({"1|b", "2|z"}));
  EXPECT_EQ(out.deletes, Rows({"1|a"}));
}

TEST(ChangeCollapser, CompositeKeys) {
  auto schema = arrow::schema({arrow::field("region", arrow::utf8()), arrow::field("id", arrow::int32()),
                               arrow::field("v", arrow::utf8()), arrow::field("seq", arrow::int64()),
                               arrow::field("op", arrow::utf8())});
  CollapseOptions options;
  options.key_columns = {"region", "id"};
  options.sequence_column = "seq";
  options.change_type_column = "op";
  options.output_columns = {"region", "id", "v"};
  auto collapser = ChangeCollapser::Make(schema, options).ValueOrDie();
  ASSERT_TRUE(collapser
                  ->Add(Batch(schema, {R"(["eu", "us", "eu", "us", "eu"])", "[1, 1, 2, 1, 1]",
                                       R"(["a", "b", "c", "b2", "a2"])", "[1, 1, 1, 2, 2]",
                                       R"(["INSERT", "UPDATE_BEFORE", "INSERT", "UPDATE_AFTER", "DELETE"])"}))
                  .ok());
  auto out = Drain(*collapser, 2);
  EXPECT_EQ(out.rows, Rows({"us|1|b2", "eu|2|c"}));
  EXPECT_EQ(out.deletes, Rows({"us|1|b"}));  // (eu, 1) was born and died here
  EXPECT_EQ(collapser->stats().keys, 3);
}

// Every accepted key type groups equal values and separates different ones: per type, two values
// a and b, changes a:INSERT, b:INSERT, a:DELETE (later) -> only b is written.
struct KeyTypeCase {
  std::string name;
  std::shared_ptr<arrow::DataType> type;
  std::string values;  // JSON array [a, b, a]
};

class KeyTypes : public ::testing::TestWithParam<KeyTypeCase> {};

TEST_P(KeyTypes, GroupsByValue) {
  const auto& param = GetParam();
  auto schema = arrow::schema({arrow::field("k", param.type), arrow::field("n", arrow::int32()),
                               arrow::field("seq", arrow::int64()), arrow::field("op", arrow::utf8())});
  CollapseOptions options;
  options.key_columns = {"k"};
  options.sequence_column = "seq";
  options.change_type_column = "op";
  auto collapser = ChangeCollapser::Make(schema, options);
  ASSERT_TRUE(collapser.ok()) << collapser.status().ToString();
  auto batch = Batch(schema, {param.values, "[1, 2, 3]", "[1, 1, 2]", R"(["INSERT", "INSERT", "DELETE"])"});
  ASSERT_TRUE(batch);
  ASSERT_TRUE((*collapser)->Add(batch).ok());
  auto out = Drain(**collapser);
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_NE(out.rows.begin()->first.find("|2"), std::string::npos) << out.rows.begin()->first;
  EXPECT_TRUE(out.deletes.empty());
  EXPECT_EQ((*collapser)->stats().keys, 2);
}

INSTANTIATE_TEST_SUITE_P(
    ChangeCollapser, KeyTypes,
    ::testing::Values(
        KeyTypeCase{"int8", arrow::int8(), "[-3, 3, -3]"}, KeyTypeCase{"int32", arrow::int32(), "[7, 8, 7]"},
        KeyTypeCase{"uint64", arrow::uint64(), "[18446744073709551615, 1, 18446744073709551615]"},
        KeyTypeCase{"bool", arrow::boolean(), "[true, false, true]"},
        KeyTypeCase{"string", arrow::utf8(), R"(["ab", "abc", "ab"])"},
        KeyTypeCase{"large_string", arrow::large_utf8(), R"(["", "x", ""])"},
        KeyTypeCase{"binary", arrow::binary(), R"(["\u0000a", "\u0000b", "\u0000a"])"},
        KeyTypeCase{"fixed", arrow::fixed_size_binary(3), R"(["abc", "abd", "abc"])"},
        KeyTypeCase{"large_binary", arrow::large_binary(), R"(["q", "qq", "q"])"},
        KeyTypeCase{"date32", arrow::date32(), "[19000, 19001, 19000]"},
        KeyTypeCase{"date64", arrow::date64(), "[86400000, 172800000, 86400000]"},
        KeyTypeCase{"duration", arrow::duration(arrow::TimeUnit::SECOND), "[5, 6, 5]"},
        KeyTypeCase{"decimal32", arrow::decimal32(7, 2), R"(["1.10", "1.11", "1.10"])"},
        KeyTypeCase{"timestamp_tz", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), "[1, 2, 1]"},
        KeyTypeCase{"time64", arrow::time64(arrow::TimeUnit::MICRO), "[1, 2, 1]"},
        KeyTypeCase{"decimal128", arrow::decimal128(20, 2), R"(["1.10", "1.11", "1.10"])"},
        KeyTypeCase{"decimal256", arrow::decimal256(40, 3), R"(["-1.000", "1.000", "-1.000"])"}),
    [](const ::testing::TestParamInfo<KeyTypeCase>& info) { return info.param.name; });

TEST(ChangeCollapser, OutputFollowsTableColumnOrder) {
  auto schema = arrow::schema({arrow::field("seq", arrow::int64()), arrow::field("name", arrow::utf8()),
                               arrow::field("op", arrow::utf8()), arrow::field("id", arrow::int64()),
                               arrow::field("_commit_version", arrow::int64())});
  CollapseOptions options;
  options.key_columns = {"id"};
  options.sequence_column = "seq";
  options.change_type_column = "op";
  options.output_columns = {"id", "name"};
  auto collapser = ChangeCollapser::Make(schema, options).ValueOrDie();
  ASSERT_TRUE(collapser->Add(Batch(schema, {"[1, 2]", R"(["a", "b"])", R"(["INSERT", "UPDATE_AFTER"])", "[9, 9]",
                                            "[3, 3]"}))
                  .ok());
  EXPECT_EQ(collapser->output_schema()->ToString(), "id: int64\nname: string");
  auto out = Drain(*collapser);
  EXPECT_EQ(out.rows, Rows({"9|b"}));
  EXPECT_TRUE(out.deletes.empty());  // the INSERT (sequence 1) comes first: the key is born here
}

TEST(ChangeCollapser, UuidExtensionKeys) {
  auto uuid = arrow::extension::uuid();
  auto storage = arrow::json::ArrayFromJSONString(arrow::fixed_size_binary(16),
                                                  R"(["0123456789abcdef", "0123456789abcdeg", "0123456789abcdef"])")
                     .ValueOrDie();
  auto keys = arrow::ExtensionType::WrapArray(uuid, storage);
  auto schema = arrow::schema({arrow::field("k", uuid), arrow::field("n", arrow::int32()),
                               arrow::field("seq", arrow::int64()), arrow::field("op", arrow::utf8())});
  auto rest = Batch(arrow::schema({schema->field(1), schema->field(2), schema->field(3)}),
                    {"[1, 2, 3]", "[1, 1, 2]", R"(["INSERT", "INSERT", "UPDATE_BEFORE"])"});
  auto batch = arrow::RecordBatch::Make(schema, 3, {keys, rest->column(0), rest->column(1), rest->column(2)});
  for (int64_t limit : {int64_t{100} << 20, int64_t{1}}) {  // in memory and spilled
    CollapseOptions options;
    options.key_columns = {"k"};
    options.sequence_column = "seq";
    options.change_type_column = "op";
    options.memory_limit_bytes = limit;
    auto collapser = ChangeCollapser::Make(schema, options).ValueOrDie();
    ASSERT_TRUE(collapser->Add(batch).ok());
    int parts = 0;
    int64_t rows = 0;
    while (true) {
      auto part = collapser->NextPart().ValueOrDie();
      if (!part) break;
      ++parts;
      EXPECT_TRUE(part->rows->schema()->field(0)->type()->Equals(*uuid));
      rows += part->rows->num_rows();
    }
    EXPECT_EQ(rows, 1) << limit;  // key ...g inserted; key ...f inserted then before-image: deleted
    EXPECT_EQ(collapser->stats().keys_to_delete, 0) << limit;  // both keys were born (first INSERT)
  }
}

TEST(ChangeCollapser, DictionaryColumnsAreDecoded) {
  auto dict = arrow::dictionary(arrow::int32(), arrow::utf8());
  auto schema = arrow::schema({arrow::field("k", dict), arrow::field("seq", arrow::int64()),
                               arrow::field("op", dict)});
  auto keys = arrow::json::DictArrayFromJSONString(dict, "[0, 1, 0]", R"(["a", "b"])").ValueOrDie();
  auto ops = arrow::json::DictArrayFromJSONString(dict, "[0, 0, 1]", R"(["INSERT", "DELETE"])").ValueOrDie();
  auto seq = arrow::json::ArrayFromJSONString(arrow::int64(), "[1, 1, 2]").ValueOrDie();
  CollapseOptions options;
  options.key_columns = {"k"};
  options.sequence_column = "seq";
  options.change_type_column = "op";
  auto collapser = ChangeCollapser::Make(schema, options).ValueOrDie();
  ASSERT_TRUE(collapser->Add(arrow::RecordBatch::Make(schema, 3, {keys, seq, ops})).ok());
  auto out = Drain(*collapser);
  EXPECT_EQ(out.rows, Rows({"b"}));
  EXPECT_TRUE(collapser->output_schema()->field(0)->type()->Equals(*arrow::utf8()));
}

TEST(ChangeCollapser, NullKeyFailsNamingRowAcrossBatches) {
  auto collapser = ChangeCollapser::Make(ChangeSchema(), Options()).ValueOrDie();
  ASSERT_TRUE(collapser->Add(Batch(ChangeSchema(), {"[1, 2, 3]", R"(["a", "b", "c"])", "[1, 1, 1]",
                                                   R"(["INSERT", "INSERT", "INSERT"])"}))
                  .ok());
  auto status = collapser->Add(Batch(ChangeSchema(), {"[4, null, null]", R"(["d", "e", "f"])", "[1, 1, 1]",
                                                     R"(["INSERT", "INSERT", "INSERT"])"}));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(KindOf(status), ErrorKind::kInvalidArgument);
  EXPECT_NE(status.message().find("changes.parquet row 5"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("equality column 'id' is null"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("1 more"), std::string::npos) << status.message();
  // The failed batch left nothing behind.
  auto out = Drain(*collapser);
  EXPECT_EQ(out.rows, Rows({"1|a", "2|b", "3|c"}));
  EXPECT_EQ(collapser->stats().changes, 3);
}

TEST(ChangeCollapser, NullSequenceFails) {
  auto collapser = ChangeCollapser::Make(ChangeSchema(), Options()).ValueOrDie();
  auto status =
      collapser->Add(Batch(ChangeSchema(), {"[1, 2]", R"(["a", "b"])", "[1, null]", R"(["INSERT", "INSERT"])"}));
  EXPECT_NE(ErrorOf(status).find("changes.parquet row 2: sequence column 'seq' is null"), std::string::npos)
      << ErrorOf(status);
}

TEST(ChangeCollapser, UnknownChangeTypeNamesCodeAndKnownCodes) {
  auto options = Options();
  options.mapper = change::ChangeKindMapper::Make({{"c", "INSERT"}, {"u", "UPDATE_AFTER"}, {"d", "DELETE"}})
                       .ValueOrDie();
  auto collapser = ChangeCollapser::Make(ChangeSchema(), options).ValueOrDie();
  auto status = collapser->Add(Batch(ChangeSchema(), {"[1, 2]", R"(["a", "b"])", "[1, 1]", R"(["c", "x"])"}));
  const std::string message = ErrorOf(status);
  EXPECT_NE(message.find("row 2"), std::string::npos) << message;
  EXPECT_NE(message.find("unknown change type 'x' in column 'op'"), std::string::npos) << message;
  EXPECT_NE(message.find("c, d, u"), std::string::npos) << message;

  auto plain = ChangeCollapser::Make(ChangeSchema(), Options()).ValueOrDie();
  status = plain->Add(Batch(ChangeSchema(), {"[1]", R"(["a"])", "[1]", R"(["upsert"])"}));
  EXPECT_NE(ErrorOf(status).find("unknown change type 'upsert'"), std::string::npos) << ErrorOf(status);
  EXPECT_NE(ErrorOf(status).find("UPDATE_BEFORE"), std::string::npos) << ErrorOf(status);

  status = plain->Add(Batch(ChangeSchema(), {"[1]", R"(["a"])", "[1]", "[null]"}));
  EXPECT_NE(ErrorOf(status).find("row 2: change type column 'op' is null"), std::string::npos) << ErrorOf(status);
}

TEST(ChangeCollapser, DeadLettersKeepInvalidRowsWithReason) {
  auto options = Options();
  options.dead_letter = true;
  auto collapser = ChangeCollapser::Make(ChangeSchema(), options).ValueOrDie();
  ASSERT_TRUE(collapser
                  ->Add(Batch(ChangeSchema(), {"[1, null, 3, 4, 5]", R"(["a", "b", "c", "d", "e"])",
                                               "[1, 1, null, 1, 1]",
                                               R"(["INSERT", "INSERT", "INSERT", "bogus", "DELETE"])"}))
                  .ok());
  auto out = Drain(*collapser);
  EXPECT_EQ(out.rows, Rows({"1|a"}));
  EXPECT_EQ(out.deletes, Rows({"5|e"}));
  const auto& stats = collapser->stats();
  EXPECT_EQ(stats.changes, 5);
  EXPECT_EQ(stats.dead_letters, 3);
  EXPECT_EQ(stats.inserts + stats.update_befores + stats.update_afters + stats.deletes + stats.dead_letters,
            stats.changes);
  auto dead = collapser->dead_letters();
  ASSERT_EQ(dead->num_rows(), 3);
  ASSERT_EQ(dead->num_columns(), 5);  // every input column plus _error
  EXPECT_EQ(dead->schema()->field(4)->name(), "_error");
  EXPECT_TRUE(dead->schema()->field(0)->type()->Equals(*arrow::int64()));
  auto rows = testing::RowSet(dead);
  ASSERT_EQ(rows.size(), 3u);
  auto it = rows.begin();
  EXPECT_NE(it->first.find("changes.parquet row 3: sequence column 'seq' is null"), std::string::npos) << it->first;
  ++it;
  EXPECT_NE(it->first.find("row 4: unknown change type 'bogus'"), std::string::npos) << it->first;
  ++it;
  EXPECT_NE(it->first.find("row 2: equality column 'id' is null"), std::string::npos) << it->first;
}

TEST(ChangeCollapser, NoDeadLettersGivesEmptyTable) {
  auto collapser = ChangeCollapser::Make(ChangeSchema(), Options()).ValueOrDie();
  EXPECT_EQ(collapser->dead_letters()->num_rows(), 0);
  EXPECT_EQ(collapser->dead_letters()->num_columns(), 5);
  auto part = collapser->NextPart();
  ASSERT_TRUE(part.ok());
  EXPECT_FALSE(part->has_value());
}

TEST(ChangeCollapser, MakeRejectsBadOptionsNamingTheColumn) {
  struct Case {
    std::function<void(CollapseOptions&)> edit;
    std::string expected;
  };
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("f", arrow::float64()),
                               arrow::field("s", arrow::struct_({arrow::field("x", arrow::int32())})),
                               arrow::field("seq", arrow::int64()), arrow::field("op", arrow::utf8()),
                               arrow::field("seq_str", arrow::utf8()), arrow::field("op_int", arrow::int32())});
  const std::vector<Case> cases = {
      {[](CollapseOptions& o) { o.key_columns = {}; }, "no equality"},
      {[](CollapseOptions& o) { o.key_columns = {"missing"}; }, "equality column 'missing' is missing"},
      {[](CollapseOptions& o) { o.key_columns = {"s.x"}; }, "'s.x' is not a top-level column"},
      {[](CollapseOptions& o) { o.key_columns = {"f"}; }, "equality column 'f' has type double"},
      {[](CollapseOptions& o) { o.key_columns = {"s"}; }, "equality column 's' has type struct"},
      {[](CollapseOptions& o) { o.key_columns = {"id", "id"}; }, "'id' is listed twice"},
      {[](CollapseOptions& o) { o.sequence_column = "nope"; }, "sequence column 'nope' is missing"},
      {[](CollapseOptions& o) { o.sequence_column = "seq_str"; }, "sequence column 'seq_str' of t has type string"},
      {[](CollapseOptions& o) { o.change_type_column = "op_int"; }, "change type column 'op_int' of t has type int32"},
      {[](CollapseOptions& o) { o.change_type_column = "seq"; }, "both 'seq'"},
      {[](CollapseOptions& o) { o.output_columns = {"id", "seq"}; }, "output column 'seq' is a control column"},
      {[](CollapseOptions& o) { o.output_columns = {"f"}; }, "equality column 'id' is not one of the output"},
      {[](CollapseOptions& o) { o.output_columns = {"id", "gone"}; }, "output column 'gone' is missing"},
      {[](CollapseOptions& o) {
         o.change_type_column.reset();
         o.mapper = change::ChangeKindMapper::Make({{"c", "INSERT"}}).ValueOrDie();
       },
       "needs a change_type_column"},
      {[](CollapseOptions& o) { o.memory_limit_bytes = 0; }, "memory limit"},
  };
  for (const auto& c : cases) {
    CollapseOptions options;
    options.key_columns = {"id"};
    options.sequence_column = "seq";
    options.change_type_column = "op";
    options.output_columns = {"id", "f", "s", "seq_str", "op_int"};
    options.source_name = "t";
    c.edit(options);
    auto made = ChangeCollapser::Make(schema, options);
    ASSERT_FALSE(made.ok()) << c.expected;
    EXPECT_EQ(KindOf(made.status()), ErrorKind::kInvalidArgument) << made.status().ToString();
    EXPECT_NE(made.status().message().find(c.expected), std::string::npos) << made.status().message();
  }
}

TEST(ChangeCollapser, AddRejectsOtherSchemasAndLateBatches) {
  auto collapser = ChangeCollapser::Make(ChangeSchema(), Options()).ValueOrDie();
  auto other = arrow::schema({arrow::field("id", arrow::int32()), arrow::field("name", arrow::utf8()),
                              arrow::field("seq", arrow::int64()), arrow::field("op", arrow::utf8())});
  auto status = collapser->Add(Batch(other, {"[1]", R"(["a"])", "[1]", R"(["INSERT"])"}));
  EXPECT_NE(ErrorOf(status).find("column 1 is id: int32, expected id: int64"), std::string::npos) << ErrorOf(status);
  ASSERT_TRUE(collapser->NextPart().ok());
  status = collapser->Add(Batch(ChangeSchema(), {"[1]", R"(["a"])", "[1]", R"(["INSERT"])"}));
  EXPECT_NE(ErrorOf(status).find("after collapsing started"), std::string::npos) << ErrorOf(status);
}

TEST(ChangeCollapser, SequenceOutOfInt64RangeFails) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("seq", arrow::uint64())});
  CollapseOptions options;
  options.key_columns = {"id"};
  options.sequence_column = "seq";
  auto collapser = ChangeCollapser::Make(schema, options).ValueOrDie();
  auto status = collapser->Add(Batch(schema, {"[1]", "[18446744073709551615]"}));
  EXPECT_NE(ErrorOf(status).find("does not fit int64"), std::string::npos) << ErrorOf(status);
}

TEST(ChangeCollapser, SpillsToPartsOfDisjointKeysAndCleansUp) {
  const auto parent =
      std::filesystem::temp_directory_path() / ("lakesync-plan-test-spill-" + std::to_string(::getpid()));
  std::filesystem::remove_all(parent);
  auto options = Options();
  options.memory_limit_bytes = 512;
  options.spill_directory = parent.string();
  auto collapser = ChangeCollapser::Make(ChangeSchema(), options).ValueOrDie();
  // Keys 0..199, each inserted in batch one and updated in batch two (before and after image).
  std::string ids, names, seqs, ops;
  for (int i = 0; i < 200; ++i) {
    ids += (i ? "," : "") + std::to_string(i);
    names += std::string(i ? "," : "") + "\"v" + std::to_string(i) + "\"";
    seqs += (i ? "," : "") + std::string("1");
    ops += std::string(i ? "," : "") + "\"INSERT\"";
  }
  ASSERT_TRUE(collapser->Add(Batch(ChangeSchema(), {"[" + ids + "]", "[" + names + "]", "[" + seqs + "]",
                                                   "[" + ops + "]"}))
                  .ok());
  std::string ids2, names2, seqs2, ops2;
  for (int i = 0; i < 200; i += 2) {
    for (int image = 0; image < 2; ++image) {
      const bool first = ids2.empty();
      ids2 += (first ? "" : ",") + std::to_string(i);
      names2 += std::string(first ? "" : ",") + (image ? "\"w" : "\"v") + std::to_string(i) + "\"";
      seqs2 += (first ? "" : ",") + std::string("2");
      ops2 += std::string(first ? "" : ",") + (image ? "\"UPDATE_AFTER\"" : "\"UPDATE_BEFORE\"");
    }
  }
  ASSERT_TRUE(collapser->Add(Batch(ChangeSchema(), {"[" + ids2 + "]", "[" + names2 + "]", "[" + seqs2 + "]",
                                                   "[" + ops2 + "]"}))
                  .ok());
  EXPECT_GT(collapser->stats().spilled_bytes, 0);
  ASSERT_TRUE(std::filesystem::exists(parent));
  EXPECT_FALSE(std::filesystem::is_empty(parent));  // the private spill directory

  auto out = Drain(*collapser);
  EXPECT_GT(out.parts, 1);
  std::map<std::string, int> all_keys;
  for (const auto& keys : out.part_keys) {
    for (const auto& [key, count] : keys) {
      (void)count;
      EXPECT_EQ(all_keys[key]++, 0) << "key " << key << " in two parts";
    }
  }
  EXPECT_EQ(all_keys.size(), 200u);
  EXPECT_EQ(out.rows.size(), 200u);
  EXPECT_EQ(out.rows.count("4|w4"), 1u);
  EXPECT_EQ(out.rows.count("5|v5"), 1u);
  EXPECT_TRUE(out.deletes.empty());  // every key was born in this commit
  EXPECT_EQ(collapser->stats().keys, 200);
  EXPECT_TRUE(std::filesystem::is_empty(parent));  // spill directory removed when done

  // Destroying a collapser that spilled but was never drained removes its files as well.
  {
    auto abandoned = ChangeCollapser::Make(ChangeSchema(), options).ValueOrDie();
    ASSERT_TRUE(abandoned->Add(Batch(ChangeSchema(), {"[" + ids + "]", "[" + names + "]", "[" + seqs + "]",
                                                     "[" + ops + "]"}))
                    .ok());
    EXPECT_FALSE(std::filesystem::is_empty(parent));
  }
  EXPECT_TRUE(std::filesystem::is_empty(parent));
  std::filesystem::remove_all(parent);
}

}  // namespace
}  // namespace lakesync::plan
