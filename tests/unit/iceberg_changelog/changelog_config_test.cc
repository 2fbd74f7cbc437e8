// Parsing of the changelog source configuration: keys and aliases, defaults, and every error names
// the key it is about.
#include <gtest/gtest.h>

#include "lakesync/iceberg/changelog/changelog_config.h"

namespace lakesync::changelog {
namespace {

Result<ChangelogConfig> Parse(const std::string& yaml) { return ParseChangelogConfigText(yaml, "job.yaml"); }

void ExpectError(const std::string& yaml, const std::vector<std::string>& mentions) {
  auto r = Parse(yaml);
  ASSERT_FALSE(r.ok()) << yaml;
  EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidArgument) << r.status().ToString();
  for (const auto& m : mentions) EXPECT_NE(r.status().ToString().find(m), std::string::npos) << r.status().ToString();
}

TEST(ChangelogConfigTest, ParsesEveryKey) {
  auto r = Parse(R"(
table: db.orders
catalog_name: prod
catalog_properties: {type: sql, uri: "sqlite:////tmp/x.db", warehouse: "file:///tmp/wh"}
from_snapshot: 123
to_timestamp: "2026-01-02T03:04:05Z"
streaming: true
poll_interval_seconds: 5
include_metadata_columns: [_commit_snapshot_sequence_number, _change_type]
equality_columns: [id]
filter: "id > 5"
drop: [note]
)");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->table, "db.orders");
  EXPECT_EQ(r->catalog_name, "prod");
  EXPECT_EQ(r->catalog_properties.at("type"), "sql");
  EXPECT_EQ(r->start_snapshot_id, 123);
  EXPECT_EQ(r->end_timestamp_ms, 1767323045000);
  EXPECT_TRUE(r->streaming);
  EXPECT_EQ(r->poll_interval_seconds, 5);
  EXPECT_EQ(*r->metadata_columns, (std::vector<std::string>{"_commit_snapshot_sequence_number", "_change_type"}));
  EXPECT_EQ(r->equality_columns, std::vector<std::string>{"id"});
  EXPECT_EQ(r->filter, "id > 5");
  EXPECT_EQ(r->drop, std::vector<std::string>{"note"});
  catalog::CatalogConfig c = *r->catalog();
  EXPECT_EQ(c.catalog_name, "prod");
}

TEST(ChangelogConfigTest, Defaults) {
  auto batch = Parse("table: db.t");
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->EffectiveStartingStrategy(), StartingStrategy::kEarliest);
  EXPECT_EQ(batch->poll_interval_seconds, 60);
  EXPECT_FALSE(batch->metadata_columns.has_value());
  EXPECT_FALSE(batch->catalog().has_value());
  auto streaming = Parse("{table: db.t, streaming: 'TRUE', start_timestamp: 1700000000000}");
  ASSERT_TRUE(streaming.ok()) << streaming.status().ToString();
  EXPECT_TRUE(streaming->streaming);
  EXPECT_EQ(streaming->start_timestamp_ms, 1700000000000);
  auto latest = Parse("{table: db.t, streaming: true}");
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->EffectiveStartingStrategy(), StartingStrategy::kLatest);
  auto explicit_earliest = Parse("{table: db.t, streaming: true, starting_strategy: EARLIEST}");
  ASSERT_TRUE(explicit_earliest.ok());
  EXPECT_EQ(explicit_earliest->EffectiveStartingStrategy(), StartingStrategy::kEarliest);
  auto null_value = Parse("{table: db.t, filter: null}");
  ASSERT_TRUE(null_value.ok());
  EXPECT_TRUE(null_value->filter.empty());
}

TEST(ChangelogConfigTest, ErrorsNameTheKey) {
  ExpectError("{}", {"'table'"});
  ExpectError("{table: db.t, from_snaphot: 1}", {"from_snaphot", "job.yaml"});
  ExpectError("{table: db.t, from_snapshot: 1, start_snapshot_id: 1}", {"from_snapshot", "start_snapshot_id"});
  ExpectError("{table: db.t, from_snapshot: 1, from_timestamp: 5}", {"from_snapshot", "from_timestamp"});
  ExpectError("{table: db.t, to_snapshot: 1, end_timestamp: 5}", {"to_snapshot", "end_timestamp"});
  ExpectError("{table: db.t, from_snapshot: -4}", {"from_snapshot"});
  ExpectError("{table: db.t, from_snapshot: abc}", {"from_snapshot"});
  ExpectError("{table: db.t, start_timestamp: 'yesterday'}", {"start_timestamp"});
  ExpectError("{table: db.t, start_timestamp: 10, end_timestamp: 5}", {"start_timestamp", "end_timestamp"});
  ExpectError("{table: db.t, starting_strategy: newest}", {"starting_strategy", "newest"});
  ExpectError("{table: db.t, starting_strategy: latest, from_snapshot: 3}", {"starting_strategy", "from_snapshot"});
  ExpectError("{table: db.t, poll_interval_seconds: 5}", {"poll_interval_seconds", "streaming"});
  ExpectError("{table: db.t, streaming: true, poll_interval_seconds: 0}", {"poll_interval_seconds"});
  ExpectError("{table: db.t, streaming: yes}", {"streaming"});
  ExpectError("{table: db.t, include_metadata_columns: [_row_id]}", {"include_metadata_columns", "_row_id"});
  ExpectError("{table: db.t, metadata_columns: [_change_type, _change_type]}", {"metadata_columns", "twice"});
  ExpectError("{table: db.t, include_metadata_columns: _change_type}", {"include_metadata_columns"});
  ExpectError("{table: db.t, keep: [a], drop: [b]}", {"keep", "drop"});
  ExpectError("{table: db.t, equality_columns: [id, id]}", {"equality_columns", "id"});
  ExpectError("{table: db.t, catalog_properties: {type: nope, warehouse: /x}}", {"catalog_properties"});
  ExpectError("[1, 2]", {"map"});
}

}  // namespace
}  // namespace lakesync::changelog
