// JSON forms of the metadata model, as table metadata files and the REST catalog write them
// (spec Appendix C). Parsers name the key that is missing or malformed.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lakesync/iceberg/model/table_metadata.h"

namespace lakesync::iceberg {

nlohmann::json TypeToJson(const Type& type);
Result<TypePtr> TypeFromJson(const nlohmann::json& json);

nlohmann::json SchemaToJson(const Schema& schema);
Result<SchemaPtr> SchemaFromJson(const nlohmann::json& json);

// The full spec object {"spec-id", "fields"}; PartitionFieldsToJson gives the "fields" array alone
// (what manifests store under "partition-spec").
nlohmann::json PartitionSpecToJson(const PartitionSpec& spec);
nlohmann::json PartitionFieldsToJson(const PartitionSpec& spec);
Result<PartitionSpecPtr> PartitionSpecFromJson(const nlohmann::json& json);
// Parses a bare fields array with a given spec id (manifest metadata, v1 "partition-spec").
Result<PartitionSpecPtr> PartitionSpecFromFieldsJson(int32_t spec_id, const nlohmann::json& fields);

nlohmann::json SortOrderToJson(const SortOrder& order);
Result<SortOrderPtr> SortOrderFromJson(const nlohmann::json& json);

nlohmann::json SnapshotToJson(const Snapshot& snapshot);
Result<SnapshotPtr> SnapshotFromJson(const nlohmann::json& json);

nlohmann::json SnapshotRefToJson(const SnapshotRef& ref);
Result<SnapshotRef> SnapshotRefFromJson(const nlohmann::json& json);

nlohmann::json TableMetadataToJson(const TableMetadata& metadata);
// Parses and validates a metadata document (v1, v2 or v3). Errors are kCorrupt for malformed
// documents and kUnsupported for newer format versions.
Result<std::shared_ptr<TableMetadata>> TableMetadataFromJson(const nlohmann::json& json);
Result<std::shared_ptr<TableMetadata>> ParseTableMetadata(std::string_view text);
std::string SerializeTableMetadata(const TableMetadata& metadata);

}  // namespace lakesync::iceberg
