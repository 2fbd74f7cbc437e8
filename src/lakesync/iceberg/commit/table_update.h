// Metadata changes as the REST catalog protocol defines them (CommitTableRequest): requirements that
// must hold on the current metadata, and updates that produce the next metadata. Every catalog commits
// through this one model, so a local SQL commit and a REST commit check exactly the same things.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/iceberg/model/table_metadata.h"

namespace lakesync::iceberg {

// ---- requirements ---------------------------------------------------------------------------
struct AssertCreate {};
struct AssertTableUuid { std::string uuid; };
struct AssertRefSnapshotId { std::string ref; std::optional<int64_t> snapshot_id; };  // nullopt: ref must not exist
struct AssertLastAssignedFieldId { int32_t last_assigned_field_id; };
struct AssertCurrentSchemaId { int32_t current_schema_id; };
struct AssertLastAssignedPartitionId { int32_t last_assigned_partition_id; };
struct AssertDefaultSpecId { int32_t default_spec_id; };
struct AssertDefaultSortOrderId { int32_t default_sort_order_id; };

using TableRequirement =
    std::variant<AssertCreate, AssertTableUuid, AssertRefSnapshotId, AssertLastAssignedFieldId, AssertCurrentSchemaId,
                 AssertLastAssignedPartitionId, AssertDefaultSpecId, AssertDefaultSortOrderId>;

// ---- updates --------------------------------------------------------------------------------
struct AssignUuid { std::string uuid; };
struct UpgradeFormatVersion { int format_version; };
struct AddSchema { SchemaPtr schema; std::optional<int32_t> last_column_id; };
struct SetCurrentSchema { int32_t schema_id; };  // -1: the schema added last in this commit
struct AddPartitionSpec { PartitionSpecPtr spec; };
struct SetDefaultSpec { int32_t spec_id; };  // -1: the spec added last
struct AddSortOrder { SortOrderPtr sort_order; };
struct SetDefaultSortOrder { int32_t sort_order_id; };  // -1: the order added last
struct AddSnapshot { SnapshotPtr snapshot; };
struct SetSnapshotRef { std::string ref_name; SnapshotRef ref; };
struct RemoveSnapshots { std::vector<int64_t> snapshot_ids; };
struct RemoveSnapshotRef { std::string ref_name; };
struct SetLocation { std::string location; };
struct SetProperties { std::map<std::string, std::string> updates; };
struct RemoveProperties { std::vector<std::string> removals; };
struct SetStatistics { nlohmann::json statistics; };  // a statistics entry, kept verbatim
struct RemoveStatistics { int64_t snapshot_id; };

using TableUpdate =
    std::variant<AssignUuid, UpgradeFormatVersion, AddSchema, SetCurrentSchema, AddPartitionSpec, SetDefaultSpec,
                 AddSortOrder, SetDefaultSortOrder, AddSnapshot, SetSnapshotRef, RemoveSnapshots, RemoveSnapshotRef,
                 SetLocation, SetProperties, RemoveProperties, SetStatistics, RemoveStatistics>;

// Checks every requirement against the current metadata (nullptr when the table does not exist yet).
// A failed requirement is a kCommitConflict error naming it: the caller reloads and retries.
Status CheckRequirements(const TableMetadata* current, const std::vector<TableRequirement>& requirements);

// Applies updates in order to `base` (nullptr for a table being created) and returns the new metadata,
// validated. `metadata_location` of the base goes into the metadata log. Invalid updates (unknown ids,
// a sort order on a missing column, a v3 snapshot without row lineage...) are kInvalidArgument errors
// that name the update. A snapshot whose sequence number or first-row-id is behind the table (another
// commit landed first) is a kCommitConflict: reload and retry.
struct ApplyOptions {
  std::string base_metadata_location;  // empty for a new table
  int64_t now_ms = 0;                  // 0: the current time
  int max_previous_versions = 100;     // metadata-log length (write.metadata.previous-versions-max)
};
Result<std::shared_ptr<TableMetadata>> ApplyUpdates(const TableMetadata* base, const std::vector<TableUpdate>& updates,
                                                    const ApplyOptions& options);

// REST JSON forms (CommitTableRequest "requirements" and "updates"). Unknown types are errors.
nlohmann::json RequirementToJson(const TableRequirement& requirement);
Result<TableRequirement> RequirementFromJson(const nlohmann::json& json);
nlohmann::json UpdateToJson(const TableUpdate& update);
Result<TableUpdate> UpdateFromJson(const nlohmann::json& json);

// The updates and requirements that create a table with this metadata (REST create and stage-create).
std::vector<TableUpdate> UpdatesForNewTable(const TableMetadata& metadata);

// A new random table UUID (v4) and snapshot id (positive, as Java derives it from a UUID).
std::string NewUuid();
int64_t NewSnapshotId();
int64_t NowMs();

}  // namespace lakesync::iceberg
