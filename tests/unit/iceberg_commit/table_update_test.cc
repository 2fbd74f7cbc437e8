// The REST commit model: requirements, updates and their JSON forms. Expected behaviour follows the
// REST catalog spec (CommitTableRequest) and the table spec's rules for ids, sequence numbers, row
// lineage and logs.
#include "lakesync/iceberg/commit/table_update.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "../iceberg_model/model_test_util.h"
#include "lakesync/iceberg/model/json_serde.h"

namespace lakesync::iceberg {
namespace {

using json = nlohmann::json;

constexpr char kUuid[] = "c41e7d95-2a6b-48f0-b1d3-97e0a5c62f18";
constexpr int64_t kNow = 1700000000000;

NestedField F(int32_t id, std::string name, bool required, TypePtr type) {
  NestedField f;
  f.id = id;
  f.name = std::move(name);
  f.required = required;
  f.type = std::move(type);
  return f;
}

SchemaPtr BaseSchema(int32_t schema_id = 0) {
  return std::make_shared<Schema>(schema_id,
                                  std::vector<NestedField>{F(1, "id", true, Type::Long()),
                                                           F(2, "ts", false, Type::TimestampTz()),
                                                           F(3, "data", false, Type::String())},
                                  std::vector<int32_t>{1});
}

PartitionSpecPtr DaySpec(int32_t field_id = 1000) {
  return std::make_shared<PartitionSpec>(
      0, std::vector<PartitionField>{{2, field_id, "ts_day", Transform(Transform::Kind::kDay)}});
}

SortOrderPtr Order(std::vector<SortField> fields, int32_t id = 0) {
  auto o = std::make_shared<SortOrder>();
  o->order_id = id;
  o->fields = std::move(fields);
  return o;
}

SortField Asc(int32_t source) {
  return SortField{Transform::Identity(), source, SortDirection::kAsc, NullOrder::kNullsFirst};
}

SnapshotPtr Snap(int64_t id, std::optional<int64_t> parent, int64_t seq, int64_t ts,
                 std::optional<int64_t> first_row_id = std::nullopt, std::optional<int64_t> added_rows = std::nullopt) {
  auto s = std::make_shared<Snapshot>();
  s->snapshot_id = id;
  s->parent_snapshot_id = parent;
  s->sequence_number = seq;
  s->timestamp_ms = ts;
  s->manifest_list = "s3://b/t/metadata/snap-" + std::to_string(id) + ".avro";
  s->summary = {{"operation", "append"}};
  s->first_row_id = first_row_id;
  s->added_rows = added_rows;
  return s;
}

SnapshotRef Branch(int64_t id) { return SnapshotRef{id, SnapshotRef::Type::kBranch, {}, {}, {}}; }
SnapshotRef Tag(int64_t id) { return SnapshotRef{id, SnapshotRef::Type::kTag, {}, {}, {}}; }

ApplyOptions Opts(int64_t now = kNow, std::string base_location = "") {
  ApplyOptions o;
  o.now_ms = now;
  o.base_metadata_location = std::move(base_location);
  return o;
}

// ApplyUpdates on a table held by shared_ptr, at the test's fixed commit time unless told otherwise.
Result<std::shared_ptr<TableMetadata>> Apply(const std::shared_ptr<TableMetadata>& base,
                                             const std::vector<TableUpdate>& updates, const ApplyOptions& o = Opts()) {
  return ApplyUpdates(base.get(), updates, o);
}

std::vector<TableUpdate> CreateUpdates(int format_version = 2) {
  return {AssignUuid{kUuid},
          UpgradeFormatVersion{format_version},
          AddSchema{BaseSchema(7), std::nullopt},
          SetCurrentSchema{-1},
          AddPartitionSpec{DaySpec()},
          SetDefaultSpec{-1},
          AddSortOrder{Order({})},
          SetDefaultSortOrder{-1},
          SetLocation{"s3://b/t"},
          SetProperties{{{"owner", "alice"}}}};
}

std::shared_ptr<TableMetadata> Create(int format_version = 2) {
  auto r = ApplyUpdates(nullptr, CreateUpdates(format_version), Opts(kNow - 1000));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : nullptr;
}

// The table after one append on main (snapshot 10, sequence number 1).
std::shared_ptr<TableMetadata> WithOneSnapshot(int format_version = 2) {
  auto base = Create(format_version);
  std::vector<TableUpdate> updates = {AddSnapshot{format_version >= 3 ? Snap(10, std::nullopt, 1, kNow - 500, 0, 100)
                                                                      : Snap(10, std::nullopt, 1, kNow - 500)},
                                      SetSnapshotRef{"main", Branch(10)}};
  auto r = Apply(base, updates, Opts(kNow - 400, "s3://b/t/metadata/v1.metadata.json"));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : nullptr;
}

// ---- creation -------------------------------------------------------------------------------

TEST(ApplyUpdatesTest, CreatesATableFromUpdates) {
  auto m = Create();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->format_version, 2);
  EXPECT_EQ(m->table_uuid, kUuid);
  EXPECT_EQ(m->location, "s3://b/t");
  // The requested schema id (7) is not kept: the first schema of a table is 0.
  ASSERT_EQ(m->schemas.size(), 1u);
  EXPECT_EQ(m->current_schema_id, 0);
  EXPECT_EQ(m->Schema()->identifier_field_ids(), (std::vector<int32_t>{1}));
  EXPECT_EQ(m->last_column_id, 3);
  ASSERT_EQ(m->partition_specs.size(), 1u);
  EXPECT_EQ(m->default_spec_id, 0);
  EXPECT_EQ(m->last_partition_id, 1000);
  ASSERT_EQ(m->sort_orders.size(), 1u);
  EXPECT_EQ(m->default_sort_order_id, 0);
  EXPECT_TRUE(m->SortOrder()->IsUnsorted());
  EXPECT_EQ(m->properties.at("owner"), "alice");
  EXPECT_EQ(m->last_updated_ms, kNow - 1000);
  EXPECT_EQ(m->last_sequence_number, 0);
  EXPECT_FALSE(m->current_snapshot_id.has_value());
  EXPECT_TRUE(m->snapshots.empty());
  EXPECT_TRUE(m->metadata_log.empty());
  EXPECT_TRUE(m->snapshot_log.empty());
}

TEST(ApplyUpdatesTest, UnpartitionedCreationKeepsLastPartitionId999) {
  auto updates = CreateUpdates();
  updates[4] = AddPartitionSpec{PartitionSpec::Unpartitioned()};
  ASSERT_OK_AND_ASSIGN(auto m, ApplyUpdates(nullptr, updates, Opts()));
  EXPECT_EQ(m->last_partition_id, 999);
  EXPECT_TRUE(m->Spec()->fields().empty());
}

TEST(ApplyUpdatesTest, CreationNeedsAUuidAndASchema) {
  auto no_uuid = CreateUpdates();
  no_uuid.erase(no_uuid.begin());
  EXPECT_ERROR(ApplyUpdates(nullptr, no_uuid, Opts()), ErrorKind::kInvalidArgument, "assign-uuid");
  EXPECT_ERROR(ApplyUpdates(nullptr, {AssignUuid{kUuid}, SetLocation{"s3://b/t"}}, Opts()), ErrorKind::kCorrupt,
               "current-schema-id");
  // A spec before any schema cannot be checked.
  EXPECT_ERROR(ApplyUpdates(nullptr, {AssignUuid{kUuid}, AddPartitionSpec{DaySpec()}}, Opts()),
               ErrorKind::kInvalidArgument, "add-spec");
}

TEST(ApplyUpdatesTest, UpdatesForNewTableRecreateTheTable) {
  auto m = WithOneSnapshot();
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(auto again, ApplyUpdates(nullptr, UpdatesForNewTable(*m), Opts(m->last_updated_ms)));
  EXPECT_EQ(again->table_uuid, m->table_uuid);
  EXPECT_TRUE(again->Schema()->SameSchema(*m->Schema()));
  EXPECT_TRUE(again->Spec()->CompatibleWith(*m->Spec()));
  EXPECT_EQ(again->last_column_id, m->last_column_id);
  EXPECT_EQ(again->last_partition_id, m->last_partition_id);
  EXPECT_EQ(again->properties, m->properties);
  EXPECT_EQ(again->location, m->location);
  EXPECT_TRUE(again->snapshots.empty());
}

TEST(ApplyUpdatesTest, FormatVersionUpgrades) {
  auto m = Create(2);
  EXPECT_ERROR(Apply(m, {UpgradeFormatVersion{1}}), ErrorKind::kInvalidArgument, "downgrade");
  EXPECT_ERROR(Apply(m, {UpgradeFormatVersion{4}}), ErrorKind::kUnsupported, "4");
  ASSERT_OK_AND_ASSIGN(auto v3, Apply(m, {UpgradeFormatVersion{3}}));
  EXPECT_EQ(v3->format_version, 3);
  EXPECT_EQ(v3->next_row_id, 0);  // spec: next-row-id starts at 0 on upgrade
  ASSERT_OK_AND_ASSIGN(auto same, Apply(v3, {UpgradeFormatVersion{3}}));
  EXPECT_EQ(same->format_version, 3);
  // The format version is not a property to set.
  EXPECT_ERROR(Apply(m, {SetProperties{{{"format-version", "3"}}}}), ErrorKind::kInvalidArgument,
               "format-version");
}

// ---- schemas --------------------------------------------------------------------------------

TEST(ApplyUpdatesTest, AddSchemaReusesTheIdOfAnIdenticalSchema) {
  auto m = Create();
  // The same fields and identifier fields under another requested id: nothing new is added.
  ASSERT_OK_AND_ASSIGN(auto same, Apply(m, {AddSchema{BaseSchema(42), std::nullopt}, SetCurrentSchema{-1}}));
  EXPECT_EQ(same->schemas.size(), 1u);
  EXPECT_EQ(same->current_schema_id, 0);
  EXPECT_EQ(same->last_column_id, 3);
}

TEST(ApplyUpdatesTest, AddSchemaAssignsTheNextIdAndRaisesLastColumnId) {
  auto m = Create();
  auto fields = BaseSchema()->fields();
  fields.push_back(F(4, "extra", false, Type::Struct({F(5, "x", false, Type::Int())})));
  auto evolved = std::make_shared<Schema>(0, fields, std::vector<int32_t>{1});
  ASSERT_OK_AND_ASSIGN(auto m1, Apply(m, {AddSchema{evolved, std::nullopt}, SetCurrentSchema{-1}}));
  ASSERT_EQ(m1->schemas.size(), 2u);
  EXPECT_EQ(m1->current_schema_id, 1);
  EXPECT_EQ(m1->Schema()->FindColumnName(5), "extra.x");
  EXPECT_EQ(m1->last_column_id, 5);
  // The deprecated last-column-id of the request can only raise the table's value.
  ASSERT_OK_AND_ASSIGN(auto m2, Apply(m1, {AddSchema{BaseSchema(), 10}}));
  // BaseSchema is schema 0 again: reused, current schema unchanged.
  EXPECT_EQ(m2->schemas.size(), 2u);
  EXPECT_EQ(m2->current_schema_id, 1);
  auto third = std::make_shared<Schema>(0, std::vector<NestedField>{F(1, "id", true, Type::Long())});
  ASSERT_OK_AND_ASSIGN(auto m3, Apply(m1, {AddSchema{third, 12}}));
  EXPECT_EQ(m3->schemas.back()->schema_id(), 2);
  EXPECT_EQ(m3->last_column_id, 12);
  auto narrow = std::make_shared<Schema>(0, std::vector<NestedField>{F(2, "ts", false, Type::Long())});
  ASSERT_OK_AND_ASSIGN(auto m4, Apply(m3, {AddSchema{narrow, 2}}));
  EXPECT_EQ(m4->last_column_id, 12);
  // Setting an older schema current again is allowed.
  ASSERT_OK_AND_ASSIGN(auto back, Apply(m3, {SetCurrentSchema{0}}));
  EXPECT_EQ(back->current_schema_id, 0);
}

TEST(ApplyUpdatesTest, SchemaErrorsNameTheUpdate) {
  auto m = Create();
  auto dup = std::make_shared<Schema>(
      0, std::vector<NestedField>{F(1, "a", true, Type::Int()), F(1, "b", true, Type::Int())});
  EXPECT_ERROR(Apply(m, {AddSchema{dup, std::nullopt}}), ErrorKind::kInvalidArgument, "add-schema");
  EXPECT_ERROR(Apply(m, {SetCurrentSchema{5}}), ErrorKind::kInvalidArgument, "set-current-schema");
  // -1 means "the schema added by this commit"; without one it is an error.
  EXPECT_ERROR(Apply(m, {SetCurrentSchema{-1}}), ErrorKind::kInvalidArgument, "set-current-schema");
}

// ---- partition specs ------------------------------------------------------------------------

TEST(ApplyUpdatesTest, AddSpecReusesAnIdenticalSpecAndTracksLastPartitionId) {
  auto m = Create();
  // The same fields with another requested spec id: reused.
  auto same = std::make_shared<PartitionSpec>(9, DaySpec()->fields());
  ASSERT_OK_AND_ASSIGN(auto m1, Apply(m, {AddPartitionSpec{same}, SetDefaultSpec{-1}}));
  EXPECT_EQ(m1->partition_specs.size(), 1u);
  EXPECT_EQ(m1->default_spec_id, 0);
  // A new spec gets the next id and raises last-partition-id.
  auto two = std::make_shared<PartitionSpec>(
      0, std::vector<PartitionField>{{2, 1000, "ts_day", Transform(Transform::Kind::kDay)},
                                     {1, 1001, "id_bucket", Transform::Bucket(8)}});
  ASSERT_OK_AND_ASSIGN(auto m2, Apply(m1, {AddPartitionSpec{two}, SetDefaultSpec{-1}}));
  ASSERT_EQ(m2->partition_specs.size(), 2u);
  EXPECT_EQ(m2->default_spec_id, 1);
  EXPECT_EQ(m2->last_partition_id, 1001);
  // Going back to an unpartitioned spec keeps last-partition-id: ids are never reused.
  ASSERT_OK_AND_ASSIGN(auto m3, Apply(m2, {AddPartitionSpec{PartitionSpec::Unpartitioned()}, SetDefaultSpec{-1}}));
  EXPECT_EQ(m3->default_spec_id, 2);
  EXPECT_EQ(m3->last_partition_id, 1001);
  EXPECT_TRUE(m3->Spec()->fields().empty());
  ASSERT_OK_AND_ASSIGN(auto m4, Apply(m3, {SetDefaultSpec{1}}));
  EXPECT_EQ(m4->default_spec_id, 1);
}

TEST(ApplyUpdatesTest, SpecErrorsNameTheUpdate) {
  auto m = Create();
  auto missing = std::make_shared<PartitionSpec>(0, std::vector<PartitionField>{{9, 1001, "x", Transform::Identity()}});
  EXPECT_ERROR(Apply(m, {AddPartitionSpec{missing}}), ErrorKind::kInvalidArgument, "add-spec");
  auto bad_type = std::make_shared<PartitionSpec>(
      0, std::vector<PartitionField>{{3, 1001, "h", Transform(Transform::Kind::kHour)}});
  EXPECT_ERROR(Apply(m, {AddPartitionSpec{bad_type}}), ErrorKind::kInvalidArgument, "add-spec");
  ASSERT_OK_AND_ASSIGN(auto unknown_t, Transform::Parse("zorder"));
  auto unknown = std::make_shared<PartitionSpec>(0, std::vector<PartitionField>{{1, 1001, "z", unknown_t}});
  EXPECT_ERROR(Apply(m, {AddPartitionSpec{unknown}}), ErrorKind::kUnsupported, "zorder");
  EXPECT_ERROR(Apply(m, {SetDefaultSpec{3}}), ErrorKind::kInvalidArgument, "set-default-spec");
  EXPECT_ERROR(Apply(m, {SetDefaultSpec{-1}}), ErrorKind::kInvalidArgument, "set-default-spec");
}

// ---- sort orders ----------------------------------------------------------------------------

TEST(ApplyUpdatesTest, SortOrderIdsReserveZeroForUnsorted) {
  auto m = Create();
  ASSERT_OK_AND_ASSIGN(auto m1, Apply(m, {AddSortOrder{Order({Asc(1)}, 0)}, SetDefaultSortOrder{-1}}));
  // Even when the request says 0, a sorted order never takes the unsorted id.
  EXPECT_EQ(m1->default_sort_order_id, 1);
  EXPECT_EQ(m1->SortOrder()->fields.size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto m2, Apply(m1, {AddSortOrder{Order({Asc(3), Asc(1)}, 1)}, SetDefaultSortOrder{-1}}));
  EXPECT_EQ(m2->default_sort_order_id, 2);
  EXPECT_EQ(m2->sort_orders.size(), 3u);
  // An order equal to an existing one reuses its id.
  ASSERT_OK_AND_ASSIGN(auto m3, Apply(m2, {AddSortOrder{Order({Asc(1)}, 7)}, SetDefaultSortOrder{-1}}));
  EXPECT_EQ(m3->default_sort_order_id, 1);
  EXPECT_EQ(m3->sort_orders.size(), 3u);
  // Back to unsorted: id 0.
  ASSERT_OK_AND_ASSIGN(auto m4, Apply(m3, {AddSortOrder{Order({}, 5)}, SetDefaultSortOrder{-1}}));
  EXPECT_EQ(m4->default_sort_order_id, 0);
  EXPECT_EQ(m4->sort_orders.size(), 3u);
  EXPECT_ERROR(Apply(m4, {SetDefaultSortOrder{9}}), ErrorKind::kInvalidArgument,
               "set-default-sort-order");
}

TEST(ApplyUpdatesTest, SortOrdersMustReferToColumnsOfTheSchema) {
  auto m = Create();
  EXPECT_ERROR(Apply(m, {AddSortOrder{Order({Asc(99)})}}), ErrorKind::kInvalidArgument, "99");
  SortField hour_on_string{Transform(Transform::Kind::kHour), 3, SortDirection::kAsc, NullOrder::kNullsFirst};
  EXPECT_ERROR(Apply(m, {AddSortOrder{Order({hour_on_string})}}), ErrorKind::kInvalidArgument,
               "'data'");
}

// ---- snapshots ------------------------------------------------------------------------------

TEST(ApplyUpdatesTest, AddSnapshotAndMainRef) {
  auto m = WithOneSnapshot();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->last_sequence_number, 1);
  EXPECT_EQ(m->current_snapshot_id, 10);
  EXPECT_EQ(m->refs.at("main").snapshot_id, 10);
  // The snapshot log records the new snapshot at its own timestamp.
  ASSERT_EQ(m->snapshot_log.size(), 1u);
  EXPECT_EQ(m->snapshot_log[0].snapshot_id, 10);
  EXPECT_EQ(m->snapshot_log[0].timestamp_ms, kNow - 500);
  // The previous metadata file is logged with the previous last-updated-ms.
  ASSERT_EQ(m->metadata_log.size(), 1u);
  EXPECT_EQ(m->metadata_log[0].metadata_file, "s3://b/t/metadata/v1.metadata.json");
  EXPECT_EQ(m->metadata_log[0].timestamp_ms, kNow - 1000);
  EXPECT_EQ(m->last_updated_ms, kNow - 400);
}

TEST(ApplyUpdatesTest, LastUpdatedIsNeverBeforeANewSnapshot) {
  auto m = Create();
  ASSERT_OK_AND_ASSIGN(auto m1, Apply(m, {AddSnapshot{Snap(10, std::nullopt, 1, kNow + 5000)}}));
  EXPECT_EQ(m1->last_updated_ms, kNow + 5000);
  // Added but not on main: no current snapshot, no log entry.
  EXPECT_FALSE(m1->current_snapshot_id.has_value());
  EXPECT_TRUE(m1->snapshot_log.empty());
}

TEST(ApplyUpdatesTest, SequenceNumbersMustAdvance) {
  auto m = WithOneSnapshot();
  // A child with a sequence number not above the table's is stale: a retryable conflict.
  EXPECT_ERROR(Apply(m, {AddSnapshot{Snap(11, 10, 1, kNow)}}), ErrorKind::kCommitConflict,
               "sequence number 1");
  EXPECT_ERROR(Apply(m, {AddSnapshot{Snap(11, 10, 0, kNow)}}), ErrorKind::kCommitConflict,
               "add-snapshot");
  ASSERT_OK_AND_ASSIGN(auto ok, Apply(m, {AddSnapshot{Snap(11, 10, 2, kNow)}}));
  EXPECT_EQ(ok->last_sequence_number, 2);
  // Two snapshots in one commit must each advance.
  EXPECT_ERROR(Apply(m, {AddSnapshot{Snap(11, 10, 2, kNow)}, AddSnapshot{Snap(12, 11, 2, kNow)}}),
               ErrorKind::kCommitConflict, "snapshot 12");
  // The same id twice is a malformed request.
  EXPECT_ERROR(Apply(m, {AddSnapshot{Snap(10, std::nullopt, 5, kNow)}}),
               ErrorKind::kInvalidArgument, "already exists");
  // v1 tables have no sequence numbers to check.
  auto v1 = std::make_shared<TableMetadata>(*m);
  v1->format_version = 1;
  EXPECT_TRUE(Apply(v1, {AddSnapshot{Snap(11, 10, 0, kNow)}}).ok());
}

TEST(ApplyUpdatesTest, V3SnapshotsCarryRowLineageAndAdvanceNextRowId) {
  auto m = WithOneSnapshot(3);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->next_row_id, 100);
  // first-row-id = next-row-id: next-row-id advances by added-rows.
  ASSERT_OK_AND_ASSIGN(auto m1, Apply(m, {AddSnapshot{Snap(11, 10, 2, kNow, 100, 50)}}));
  EXPECT_EQ(m1->next_row_id, 150);
  // Committed off main too.
  EXPECT_EQ(m1->current_snapshot_id, 10);
  // A snapshot with no new rows keeps next-row-id.
  ASSERT_OK_AND_ASSIGN(auto m2, Apply(m1, {AddSnapshot{Snap(12, 11, 3, kNow, 150, 0)}}));
  EXPECT_EQ(m2->next_row_id, 150);
  // A first-row-id behind next-row-id means another commit took those ids: a retryable conflict.
  EXPECT_ERROR(Apply(m1, {AddSnapshot{Snap(12, 11, 3, kNow, 120, 10)}}),
               ErrorKind::kCommitConflict, "first-row-id 120");
  // Lineage fields are required in v3.
  EXPECT_ERROR(Apply(m1, {AddSnapshot{Snap(12, 11, 3, kNow)}}), ErrorKind::kInvalidArgument,
               "first-row-id");
  EXPECT_ERROR(Apply(m1, {AddSnapshot{Snap(12, 11, 3, kNow, 150, std::nullopt)}}),
               ErrorKind::kInvalidArgument, "added-rows");
  // next-row-id stays above every assigned id even when first-row-id leaves a gap.
  ASSERT_OK_AND_ASSIGN(auto gap, Apply(m1, {AddSnapshot{Snap(12, 11, 3, kNow, 200, 10)}}));
  EXPECT_GE(gap->next_row_id, 210);
}

TEST(ApplyUpdatesTest, SetSnapshotRefOnMainUpdatesCurrentSnapshotAndLog) {
  auto m = WithOneSnapshot();
  ASSERT_OK_AND_ASSIGN(auto m1, Apply(m, {AddSnapshot{Snap(11, 10, 2, kNow - 10)}, SetSnapshotRef{"main", Branch(11)}},
                                      Opts(kNow, "s3://b/t/metadata/v2.metadata.json")));
  EXPECT_EQ(m1->current_snapshot_id, 11);
  ASSERT_EQ(m1->snapshot_log.size(), 2u);
  EXPECT_EQ(m1->snapshot_log[1].snapshot_id, 11);
  EXPECT_EQ(m1->snapshot_log[1].timestamp_ms, kNow - 10);
  // Rolling back to an existing snapshot is logged at the commit time.
  ASSERT_OK_AND_ASSIGN(auto m2, Apply(m1, {SetSnapshotRef{"main", Branch(10)}}, Opts(kNow + 77)));
  EXPECT_EQ(m2->current_snapshot_id, 10);
  ASSERT_EQ(m2->snapshot_log.size(), 3u);
  EXPECT_EQ(m2->snapshot_log[2].snapshot_id, 10);
  EXPECT_EQ(m2->snapshot_log[2].timestamp_ms, kNow + 77);
  EXPECT_LE(m2->snapshot_log.back().timestamp_ms, m2->last_updated_ms);
  // Setting main to where it already is adds nothing to the log.
  ASSERT_OK_AND_ASSIGN(auto m3, Apply(m2, {SetSnapshotRef{"main", Branch(10)}}, Opts(kNow + 99)));
  EXPECT_EQ(m3->snapshot_log.size(), 3u);
  // Other branches and tags leave the current snapshot alone.
  ASSERT_OK_AND_ASSIGN(auto m4, Apply(m3, {SetSnapshotRef{"dev", Branch(11)}, SetSnapshotRef{"v1", Tag(11)}}));
  EXPECT_EQ(m4->current_snapshot_id, 10);
  EXPECT_EQ(m4->refs.at("dev").snapshot_id, 11);
  EXPECT_EQ(m4->refs.at("v1").type, SnapshotRef::Type::kTag);
  EXPECT_EQ(m4->snapshot_log.size(), 3u);
}

TEST(ApplyUpdatesTest, SetSnapshotRefErrors) {
  auto m = WithOneSnapshot();
  EXPECT_ERROR(Apply(m, {SetSnapshotRef{"main", Tag(10)}}), ErrorKind::kInvalidArgument,
               "main must be a branch");
  EXPECT_ERROR(Apply(m, {SetSnapshotRef{"dev", Branch(99)}}), ErrorKind::kInvalidArgument,
               "99");
}

TEST(ApplyUpdatesTest, RemoveSnapshotsClearsTheirRefsAndLogEntries) {
  auto m = WithOneSnapshot();
  ASSERT_OK_AND_ASSIGN(auto m1, Apply(m, {AddSnapshot{Snap(11, 10, 2, kNow)}, SetSnapshotRef{"main", Branch(11)},
                                          SetSnapshotRef{"old", Tag(10)}, SetSnapshotRef{"dev", Branch(11)}}));
  ASSERT_OK_AND_ASSIGN(auto m2, Apply(m1, {RemoveSnapshots{{10}}}));
  EXPECT_EQ(m2->snapshots.size(), 1u);
  EXPECT_EQ(m2->refs.count("old"), 0u);
  EXPECT_EQ(m2->current_snapshot_id, 11);
  for (const auto& e : m2->snapshot_log) EXPECT_NE(e.snapshot_id, 10);
  // Removing the current snapshot removes main and leaves no current snapshot.
  ASSERT_OK_AND_ASSIGN(auto m3, Apply(m2, {RemoveSnapshots{{11}}}));
  EXPECT_TRUE(m3->snapshots.empty());
  EXPECT_TRUE(m3->refs.empty());
  EXPECT_FALSE(m3->current_snapshot_id.has_value());
  // Sequence numbers are not reset by expiry.
  EXPECT_EQ(m3->last_sequence_number, 2);
}

TEST(ApplyUpdatesTest, RemoveSnapshotRef) {
  auto m = WithOneSnapshot();
  ASSERT_OK_AND_ASSIGN(auto m1, Apply(m, {SetSnapshotRef{"dev", Branch(10)}}));
  ASSERT_OK_AND_ASSIGN(auto m2, Apply(m1, {RemoveSnapshotRef{"dev"}}));
  EXPECT_EQ(m2->refs.count("dev"), 0u);
  EXPECT_EQ(m2->current_snapshot_id, 10);
  ASSERT_OK_AND_ASSIGN(auto m3, Apply(m2, {RemoveSnapshotRef{"main"}}));
  EXPECT_FALSE(m3->current_snapshot_id.has_value());
  EXPECT_EQ(m3->snapshots.size(), 1u);  // the snapshot itself stays
}

// ---- logs, properties, statistics ------------------------------------------------------------

TEST(ApplyUpdatesTest, MetadataLogIsTrimmedToPreviousVersionsMax) {
  auto m = Create();
  std::shared_ptr<TableMetadata> current = m;
  for (int v = 1; v <= 6; ++v) {
    ApplyOptions o = Opts(kNow + v, "s3://b/t/metadata/v" + std::to_string(v) + ".metadata.json");
    o.max_previous_versions = 3;
    ASSERT_OK_AND_ASSIGN(current, Apply(current, {SetProperties{{{"v", std::to_string(v)}}}}, o));
  }
  ASSERT_EQ(current->metadata_log.size(), 3u);
  // The newest three previous files, oldest first, each with the time it was written.
  EXPECT_EQ(current->metadata_log[0].metadata_file, "s3://b/t/metadata/v4.metadata.json");
  EXPECT_EQ(current->metadata_log[2].metadata_file, "s3://b/t/metadata/v6.metadata.json");
  EXPECT_EQ(current->metadata_log[2].timestamp_ms, kNow + 5);
  // A maximum below 1 still keeps the previous file.
  ApplyOptions zero = Opts(kNow + 10, "s3://b/t/metadata/v7.metadata.json");
  zero.max_previous_versions = 0;
  ASSERT_OK_AND_ASSIGN(auto z, Apply(current, {}, zero));
  ASSERT_EQ(z->metadata_log.size(), 1u);
  EXPECT_EQ(z->metadata_log[0].metadata_file, "s3://b/t/metadata/v7.metadata.json");
  // Without a base location nothing is logged.
  ASSERT_OK_AND_ASSIGN(auto none, Apply(m, {}));
  EXPECT_TRUE(none->metadata_log.empty());
}

TEST(ApplyUpdatesTest, PropertiesLocationAndUuid) {
  auto m = Create();
  ASSERT_OK_AND_ASSIGN(auto m1, Apply(m, {SetProperties{{{"a", "1"}, {"b", "2"}}}, RemoveProperties{{"a", "missing"}},
                                          SetLocation{"s3://b/moved"}}));
  EXPECT_EQ(m1->properties.count("a"), 0u);
  EXPECT_EQ(m1->properties.at("b"), "2");
  EXPECT_EQ(m1->properties.at("owner"), "alice");
  EXPECT_EQ(m1->location, "s3://b/moved");
  EXPECT_ERROR(Apply(m, {SetLocation{""}}), ErrorKind::kInvalidArgument, "set-location");
  EXPECT_ERROR(Apply(m, {AssignUuid{"00000000-0000-4000-8000-000000000000"}}),
               ErrorKind::kInvalidArgument, "assign-uuid");
  EXPECT_TRUE(Apply(m, {AssignUuid{kUuid}}).ok());
  // The base is never modified.
  EXPECT_EQ(m->location, "s3://b/t");
  EXPECT_EQ(m->properties.size(), 1u);
}

TEST(ApplyUpdatesTest, StatisticsAreReplacedPerSnapshot) {
  auto m = WithOneSnapshot();
  const json stats = {{"snapshot-id", 10}, {"statistics-path", "s3://b/t/s1.puffin"}, {"file-size-in-bytes", 10},
                      {"file-footer-size-in-bytes", 5}, {"blob-metadata", json::array()}};
  json stats2 = stats;
  stats2["statistics-path"] = "s3://b/t/s2.puffin";
  ASSERT_OK_AND_ASSIGN(auto m1, Apply(m, {SetStatistics{stats}, SetStatistics{stats2}}));
  ASSERT_EQ(m1->statistics.size(), 1u);
  EXPECT_EQ(m1->statistics[0]["statistics-path"], "s3://b/t/s2.puffin");
  ASSERT_OK_AND_ASSIGN(auto m2, Apply(m1, {RemoveStatistics{10}}));
  EXPECT_TRUE(m2->statistics.empty());
  EXPECT_ERROR(Apply(m, {SetStatistics{json::array()}}), ErrorKind::kInvalidArgument,
               "set-statistics");
  json bad_id = stats;
  bad_id["snapshot-id"] = "10";
  EXPECT_ERROR(Apply(m, {SetStatistics{bad_id}}), ErrorKind::kInvalidArgument, "set-statistics");
}

TEST(ApplyUpdatesTest, ResultSurvivesAJsonRoundTrip) {
  auto m = WithOneSnapshot(3);
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(auto parsed, ParseTableMetadata(SerializeTableMetadata(*m)));
  EXPECT_EQ(TableMetadataToJson(*parsed), TableMetadataToJson(*m));
}

// ---- requirements ---------------------------------------------------------------------------

TEST(CheckRequirementsTest, AllHoldOnTheCurrentTable) {
  auto m = WithOneSnapshot();
  EXPECT_OK(CheckRequirements(m.get(), {AssertTableUuid{kUuid}, AssertRefSnapshotId{"main", 10},
                                        AssertRefSnapshotId{"dev", std::nullopt}, AssertLastAssignedFieldId{3},
                                        AssertCurrentSchemaId{0}, AssertLastAssignedPartitionId{1000},
                                        AssertDefaultSpecId{0}, AssertDefaultSortOrderId{0}}));
  EXPECT_OK(CheckRequirements(nullptr, {AssertCreate{}}));
  EXPECT_OK(CheckRequirements(m.get(), {}));
}

TEST(CheckRequirementsTest, FailuresAreConflictsNamingTheRequirement) {
  auto m = WithOneSnapshot();
  const std::vector<std::pair<TableRequirement, std::string>> failing = {
      {AssertCreate{}, "assert-create"},
      {AssertTableUuid{"other"}, "assert-table-uuid"},
      {AssertRefSnapshotId{"main", 9}, "assert-ref-snapshot-id"},
      {AssertRefSnapshotId{"main", std::nullopt}, "assert-ref-snapshot-id"},
      {AssertRefSnapshotId{"dev", 10}, "assert-ref-snapshot-id"},
      {AssertLastAssignedFieldId{2}, "assert-last-assigned-field-id"},
      {AssertCurrentSchemaId{1}, "assert-current-schema-id"},
      {AssertLastAssignedPartitionId{999}, "assert-last-assigned-partition-id"},
      {AssertDefaultSpecId{1}, "assert-default-spec-id"},
      {AssertDefaultSortOrderId{1}, "assert-default-sort-order-id"},
  };
  for (const auto& [req, name] : failing) {
    const Status st = CheckRequirements(m.get(), {AssertTableUuid{kUuid}, req});
    EXPECT_EQ(KindOf(st), ErrorKind::kCommitConflict) << name << ": " << st.ToString();
    EXPECT_NE(st.message().find(name), std::string::npos) << st.ToString();
  }
  // The message also says what was found and what was expected.
  const Status ref = CheckRequirements(m.get(), {AssertRefSnapshotId{"main", 9}});
  EXPECT_NE(ref.message().find("'main' is at snapshot 10, expected 9"), std::string::npos) << ref.ToString();
  // Anything but assert-create fails on a table that does not exist.
  EXPECT_ERROR(CheckRequirements(nullptr, {AssertCurrentSchemaId{0}}), ErrorKind::kCommitConflict, "does not exist");
}

TEST(CheckRequirementsTest, MainFallsBackToTheCurrentSnapshotWithoutRefs) {
  auto m = WithOneSnapshot();
  auto no_refs = std::make_shared<TableMetadata>(*m);
  no_refs->refs.clear();
  EXPECT_OK(CheckRequirements(no_refs.get(), {AssertRefSnapshotId{"main", 10}}));
  auto empty = Create();
  EXPECT_OK(CheckRequirements(empty.get(), {AssertRefSnapshotId{"main", std::nullopt}}));
  EXPECT_ERROR(CheckRequirements(empty.get(), {AssertRefSnapshotId{"main", 10}}), ErrorKind::kCommitConflict, "none");
}

// ---- JSON forms -----------------------------------------------------------------------------

TEST(RequirementJsonTest, EveryTypeRoundTripsInTheRestForm) {
  const std::vector<std::pair<TableRequirement, json>> cases = {
      {AssertCreate{}, {{"type", "assert-create"}}},
      {AssertTableUuid{kUuid}, {{"type", "assert-table-uuid"}, {"uuid", kUuid}}},
      {AssertRefSnapshotId{"main", 10}, {{"type", "assert-ref-snapshot-id"}, {"ref", "main"}, {"snapshot-id", 10}}},
      {AssertRefSnapshotId{"dev", std::nullopt},
       {{"type", "assert-ref-snapshot-id"}, {"ref", "dev"}, {"snapshot-id", nullptr}}},
      {AssertLastAssignedFieldId{3}, {{"type", "assert-last-assigned-field-id"}, {"last-assigned-field-id", 3}}},
      {AssertCurrentSchemaId{1}, {{"type", "assert-current-schema-id"}, {"current-schema-id", 1}}},
      {AssertLastAssignedPartitionId{1000},
       {{"type", "assert-last-assigned-partition-id"}, {"last-assigned-partition-id", 1000}}},
      {AssertDefaultSpecId{2}, {{"type", "assert-default-spec-id"}, {"default-spec-id", 2}}},
      {AssertDefaultSortOrderId{0}, {{"type", "assert-default-sort-order-id"}, {"default-sort-order-id", 0}}},
  };
  for (const auto& [req, expected] : cases) {
    EXPECT_EQ(RequirementToJson(req), expected);
    ASSERT_OK_AND_ASSIGN(auto back, RequirementFromJson(expected));
    EXPECT_EQ(back.index(), req.index());
    EXPECT_EQ(RequirementToJson(back), expected);
  }
  // A missing snapshot-id reads as null (the ref must not exist).
  ASSERT_OK_AND_ASSIGN(auto absent, RequirementFromJson({{"type", "assert-ref-snapshot-id"}, {"ref", "b"}}));
  EXPECT_FALSE(std::get<AssertRefSnapshotId>(absent).snapshot_id.has_value());
}

TEST(RequirementJsonTest, ErrorsNameTheProblem) {
  EXPECT_ERROR(RequirementFromJson({{"type", "assert-nothing"}}), ErrorKind::kInvalidArgument, "'assert-nothing'");
  EXPECT_ERROR(RequirementFromJson(json::object()), ErrorKind::kInvalidArgument, "'type'");
  EXPECT_ERROR(RequirementFromJson({{"type", "assert-table-uuid"}}), ErrorKind::kInvalidArgument, "'uuid'");
  EXPECT_ERROR(RequirementFromJson({{"type", "assert-current-schema-id"}, {"current-schema-id", "one"}}),
               ErrorKind::kInvalidArgument, "'current-schema-id'");
  EXPECT_ERROR(RequirementFromJson({{"type", "assert-ref-snapshot-id"}, {"ref", "main"}, {"snapshot-id", "x"}}),
               ErrorKind::kInvalidArgument, "'snapshot-id'");
}

// Every update, in the JSON a REST client sends (spec rest-catalog-open-api.yaml), parsed and written back.
TEST(UpdateJsonTest, EveryActionRoundTrips) {
  const json schema = SchemaToJson(*BaseSchema(3));
  const json snapshot = SnapshotToJson(*Snap(10, 9, 4, kNow, 100, 5));
  const json stats = {{"snapshot-id", 10}, {"statistics-path", "s3://x.puffin"}, {"file-size-in-bytes", 1},
                      {"file-footer-size-in-bytes", 1}, {"blob-metadata", json::array()}};
  const std::vector<json> updates = {
      {{"action", "assign-uuid"}, {"uuid", kUuid}},
      {{"action", "upgrade-format-version"}, {"format-version", 3}},
      {{"action", "add-schema"}, {"schema", schema}, {"last-column-id", 3}},
      {{"action", "add-schema"}, {"schema", schema}},
      {{"action", "set-current-schema"}, {"schema-id", -1}},
      {{"action", "add-spec"}, {"spec", PartitionSpecToJson(*DaySpec())}},
      {{"action", "set-default-spec"}, {"spec-id", 0}},
      {{"action", "add-sort-order"}, {"sort-order", SortOrderToJson(*Order({Asc(1)}, 1))}},
      {{"action", "set-default-sort-order"}, {"sort-order-id", -1}},
      {{"action", "add-snapshot"}, {"snapshot", snapshot}},
      {{"action", "set-snapshot-ref"}, {"ref-name", "main"}, {"type", "branch"}, {"snapshot-id", 10}},
      {{"action", "set-snapshot-ref"}, {"ref-name", "keep"}, {"type", "tag"}, {"snapshot-id", 10},
       {"max-ref-age-ms", 1000}},
      {{"action", "set-snapshot-ref"}, {"ref-name", "b"}, {"type", "branch"}, {"snapshot-id", 10},
       {"min-snapshots-to-keep", 2}, {"max-snapshot-age-ms", 3}},
      {{"action", "remove-snapshots"}, {"snapshot-ids", {1, 2, 3}}},
      {{"action", "remove-snapshot-ref"}, {"ref-name", "keep"}},
      {{"action", "set-location"}, {"location", "s3://b/t2"}},
      {{"action", "set-properties"}, {"updates", {{"a", "1"}, {"b", "2"}}}},
      {{"action", "remove-properties"}, {"removals", {"a", "c"}}},
      {{"action", "set-statistics"}, {"snapshot-id", 10}, {"statistics", stats}},
      {{"action", "remove-statistics"}, {"snapshot-id", 10}},
  };
  std::set<size_t> kinds;
  for (const auto& j : updates) {
    ASSERT_OK_AND_ASSIGN(auto u, UpdateFromJson(j));
    kinds.insert(u.index());
    EXPECT_EQ(UpdateToJson(u), j) << j.dump();
  }
  EXPECT_EQ(kinds.size(), std::variant_size_v<TableUpdate>) << "every update type is covered";
}

TEST(UpdateJsonTest, ParsedValuesAreRight) {
  ASSERT_OK_AND_ASSIGN(auto spec_u, UpdateFromJson({{"action", "add-spec"}, {"spec", {{"fields", json::array({
      {{"name", "id_bucket"}, {"transform", "bucket[4]"}, {"source-id", 1}, {"field-id", 1001}}})}}}}));
  // A REST client may omit the spec id: the server assigns it.
  const auto& spec = std::get<AddPartitionSpec>(spec_u).spec;
  EXPECT_EQ(spec->fields()[0].transform, Transform::Bucket(4));
  EXPECT_EQ(spec->fields()[0].field_id, 1001);
  ASSERT_OK_AND_ASSIGN(auto ref_u, UpdateFromJson({{"action", "set-snapshot-ref"}, {"ref-name", "t"}, {"type", "tag"},
                                                   {"snapshot-id", 5}, {"max-ref-age-ms", 9}}));
  const auto& ref = std::get<SetSnapshotRef>(ref_u);
  EXPECT_EQ(ref.ref_name, "t");
  EXPECT_EQ(ref.ref.type, SnapshotRef::Type::kTag);
  EXPECT_EQ(ref.ref.max_ref_age_ms, 9);
  const json snapshot = SnapshotToJson(*Snap(10, 9, 4, kNow, 100, 5));
  ASSERT_OK_AND_ASSIGN(auto snap_u, UpdateFromJson({{"action", "add-snapshot"}, {"snapshot", snapshot}}));
  const auto& snap = *std::get<AddSnapshot>(snap_u).snapshot;
  EXPECT_EQ(snap.parent_snapshot_id, 9);
  EXPECT_EQ(snap.first_row_id, 100);
  EXPECT_EQ(snap.added_rows, 5);
}

TEST(UpdateJsonTest, ErrorsNameTheProblem) {
  EXPECT_ERROR(UpdateFromJson({{"action", "do-magic"}}), ErrorKind::kInvalidArgument, "'do-magic'");
  EXPECT_ERROR(UpdateFromJson({{"uuid", kUuid}}), ErrorKind::kInvalidArgument, "'action'");
  EXPECT_ERROR(UpdateFromJson({{"action", "assign-uuid"}}), ErrorKind::kInvalidArgument, "'uuid'");
  EXPECT_ERROR(UpdateFromJson({{"action", "add-schema"}}), ErrorKind::kInvalidArgument, "'schema'");
  EXPECT_ERROR(UpdateFromJson({{"action", "add-spec"}}), ErrorKind::kInvalidArgument, "'spec'");
  EXPECT_ERROR(UpdateFromJson({{"action", "add-sort-order"}}), ErrorKind::kInvalidArgument, "'sort-order'");
  EXPECT_ERROR(UpdateFromJson({{"action", "add-snapshot"}}), ErrorKind::kInvalidArgument, "'snapshot'");
  EXPECT_ERROR(UpdateFromJson({{"action", "set-statistics"}}), ErrorKind::kInvalidArgument, "'statistics'");
  auto no_type = UpdateFromJson({{"action", "set-snapshot-ref"}, {"ref-name", "x"}, {"snapshot-id", 1}});
  ASSERT_FALSE(no_type.ok());
  EXPECT_NE(no_type.status().message().find("'type'"), std::string::npos) << no_type.status().ToString();
  EXPECT_ERROR(UpdateFromJson({{"action", "remove-snapshots"}, {"snapshot-ids", "1"}}), ErrorKind::kInvalidArgument,
               "'snapshot-ids'");
  EXPECT_ERROR(UpdateFromJson({{"action", "set-properties"}, {"updates", {{"a", 1}}}}), ErrorKind::kInvalidArgument,
               "'updates'");
  // Malformed nested values are errors, never exceptions.
  EXPECT_FALSE(UpdateFromJson({{"action", "add-spec"}, {"spec", json::array({1})}}).ok());
  EXPECT_FALSE(UpdateFromJson({{"action", "add-schema"}, {"schema", "long"}}).ok());
  EXPECT_FALSE(UpdateFromJson(json::array()).ok());
}

TEST(UtilitiesTest, NewIdsHaveTheRightShape) {
  const std::regex uuid_v4("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  std::set<std::string> uuids;
  std::set<int64_t> ids;
  for (int i = 0; i < 1000; ++i) {
    const std::string u = NewUuid();
    ASSERT_TRUE(std::regex_match(u, uuid_v4)) << u;
    uuids.insert(u);
    const int64_t id = NewSnapshotId();
    ASSERT_GT(id, 0);
    ids.insert(id);
  }
  EXPECT_EQ(uuids.size(), 1000u);
  EXPECT_EQ(ids.size(), 1000u);
  EXPECT_GT(NowMs(), 1600000000000);
}

}  // namespace
}  // namespace lakesync::iceberg
