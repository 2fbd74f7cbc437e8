// The invariants ValidateTableMetadata checks, and the lookups readers rely on.
#include "lakesync/iceberg/model/table_metadata.h"

#include <gtest/gtest.h>

#include "model_test_util.h"

namespace lakesync::iceberg {
namespace {

NestedField F(int32_t id, std::string name, bool required, TypePtr type) {
  NestedField f;
  f.id = id;
  f.name = std::move(name);
  f.required = required;
  f.type = std::move(type);
  return f;
}

SnapshotPtr Snap(int64_t id, std::optional<int64_t> parent, int64_t seq, int64_t ts) {
  auto s = std::make_shared<Snapshot>();
  s->snapshot_id = id;
  s->parent_snapshot_id = parent;
  s->sequence_number = seq;
  s->timestamp_ms = ts;
  s->manifest_list = "m" + std::to_string(id) + ".avro";
  s->summary = {{"operation", "append"}};
  return s;
}

// A valid v2 table with three snapshots 1 <- 2 <- 3 on main, and 4 (parent 2) on a branch.
TableMetadata Valid() {
  TableMetadata m;
  m.format_version = 2;
  m.table_uuid = "0a6c3f52-d8e1-4b7a-93c4-5e2f81b6d017";
  m.location = "s3://b/t";
  m.last_column_id = 2;
  m.schemas = {std::make_shared<Schema>(0, std::vector<NestedField>{F(1, "id", true, Type::Long()),
                                                                     F(2, "ts", false, Type::Timestamp())})};
  m.partition_specs = {std::make_shared<PartitionSpec>(
      0, std::vector<PartitionField>{{2, 1000, "ts_day", Transform(Transform::Kind::kDay)}})};
  m.last_partition_id = 1000;
  m.sort_orders = {std::make_shared<SortOrder>()};
  m.snapshots = {Snap(1, std::nullopt, 1, 1000), Snap(2, 1, 2, 2000), Snap(3, 2, 3, 3000), Snap(4, 2, 4, 3500)};
  m.last_sequence_number = 4;
  m.current_snapshot_id = 3;
  m.refs["main"] = SnapshotRef{3, SnapshotRef::Type::kBranch, {}, {}, {}};
  m.refs["dev"] = SnapshotRef{4, SnapshotRef::Type::kBranch, {}, {}, {}};
  m.snapshot_log = {{1, 1000}, {2, 2000}, {3, 3000}};
  return m;
}

TEST(ValidateTableMetadataTest, AcceptsAValidTable) { EXPECT_OK(ValidateTableMetadata(Valid())); }

TEST(ValidateTableMetadataTest, RejectsUnknownFormatVersions) {
  auto m = Valid();
  m.format_version = 4;
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kUnsupported, "format-version 4");
}

TEST(ValidateTableMetadataTest, RejectsDanglingIds) {
  auto m = Valid();
  m.current_schema_id = 5;
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "current-schema-id 5");
  m = Valid();
  m.default_spec_id = 2;
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "default-spec-id 2");
  m = Valid();
  m.default_sort_order_id = 1;
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "default-sort-order-id 1");
  m = Valid();
  m.current_snapshot_id = 9;
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "current-snapshot-id 9");
  m = Valid();
  m.refs["tag"] = SnapshotRef{9, SnapshotRef::Type::kTag, {}, {}, {}};
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "'tag'");
  m = Valid();
  m.location.clear();
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "location");
}

TEST(ValidateTableMetadataTest, CurrentSnapshotMustMatchMain) {
  auto m = Valid();
  m.current_snapshot_id = 2;
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "refs.main 3");
  m = Valid();
  m.current_snapshot_id.reset();
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "current-snapshot-id null");
}

TEST(ValidateTableMetadataTest, LastIdsMustCoverIdsInUse) {
  auto m = Valid();
  m.last_column_id = 1;
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "last-column-id 1");
  m = Valid();
  m.last_partition_id = 999;
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "last-partition-id 999");
  m = Valid();
  m.last_sequence_number = 3;
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kCorrupt, "last-sequence-number 3");
  // v1 has no sequence numbers to check.
  m.format_version = 1;
  EXPECT_OK(ValidateTableMetadata(m));
}

TEST(ValidateTableMetadataTest, SchemasAreValidated) {
  auto m = Valid();
  m.schemas.push_back(std::make_shared<Schema>(
      1, std::vector<NestedField>{F(1, "id", false, Type::Long())}, std::vector<int32_t>{1}));
  EXPECT_ERROR(ValidateTableMetadata(m), ErrorKind::kInvalidArgument, "schema 1");
}

TEST(TableMetadataTest, Lookups) {
  const auto m = Valid();
  EXPECT_EQ(m.Schema()->schema_id(), 0);
  EXPECT_EQ(m.SchemaById(1), nullptr);
  EXPECT_EQ(m.Spec()->fields()[0].name, "ts_day");
  EXPECT_EQ(m.SpecById(3), nullptr);
  EXPECT_TRUE(m.SortOrder()->IsUnsorted());
  EXPECT_EQ(m.CurrentSnapshot()->snapshot_id, 3);
  EXPECT_EQ(m.SnapshotById(4)->parent_snapshot_id, 2);
  EXPECT_EQ(m.SnapshotById(5), nullptr);
  EXPECT_EQ(m.SnapshotForRef("dev")->snapshot_id, 4);
  EXPECT_EQ(m.SnapshotForRef("nope"), nullptr);
}

TEST(TableMetadataTest, AncestorsFollowParentsNewestFirst) {
  const auto m = Valid();
  std::vector<int64_t> ids;
  for (const auto& s : m.Ancestors(4)) ids.push_back(s->snapshot_id);
  EXPECT_EQ(ids, (std::vector<int64_t>{4, 2, 1}));
  EXPECT_TRUE(m.Ancestors(77).empty());
  // An expired parent ends the chain.
  auto expired = Valid();
  expired.snapshots.erase(expired.snapshots.begin());  // drop snapshot 1
  ids.clear();
  for (const auto& s : expired.Ancestors(3)) ids.push_back(s->snapshot_id);
  EXPECT_EQ(ids, (std::vector<int64_t>{3, 2}));
  // A cycle does not loop forever.
  auto cyclic = Valid();
  cyclic.snapshots[0] = Snap(1, 3, 1, 1000);
  EXPECT_EQ(cyclic.Ancestors(3).size(), 3u);
}

TEST(TableMetadataTest, SnapshotAsOfUsesTheSnapshotLog) {
  const auto m = Valid();
  EXPECT_EQ(m.SnapshotAsOf(999), nullptr);
  EXPECT_EQ(m.SnapshotAsOf(1000)->snapshot_id, 1);
  EXPECT_EQ(m.SnapshotAsOf(2999)->snapshot_id, 2);
  EXPECT_EQ(m.SnapshotAsOf(1 << 30)->snapshot_id, 3);  // 4 is not on main
  // Without a log, main's ancestry by timestamp.
  auto no_log = Valid();
  no_log.snapshot_log.clear();
  EXPECT_EQ(no_log.SnapshotAsOf(2500)->snapshot_id, 2);
  EXPECT_EQ(no_log.SnapshotAsOf(500), nullptr);
}

TEST(TableMetadataTest, Properties) {
  auto m = Valid();
  m.properties = {{"a", "x"}, {"n", "42"}, {"bad", "42x"}};
  EXPECT_EQ(m.Property("a", "d"), "x");
  EXPECT_EQ(m.Property("z", "d"), "d");
  EXPECT_EQ(m.PropertyAsInt("n", 1), 42);
  EXPECT_EQ(m.PropertyAsInt("bad", 1), 1);
  EXPECT_EQ(m.PropertyAsInt("z", 7), 7);
}

}  // namespace
}  // namespace lakesync::iceberg
