// Table metadata (spec "Table Metadata"): the document a catalog points at. Format versions 1 (read),
// 2 and 3 (read and write). Parsing and writing live in table_metadata_json.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/iceberg/model/partition_spec.h"
#include "lakesync/iceberg/model/schema.h"
#include "lakesync/iceberg/model/snapshot.h"

namespace lakesync::iceberg {

inline constexpr int kMinFormatVersion = 1;
inline constexpr int kMaxFormatVersion = 3;
inline constexpr int kDefaultFormatVersion = 2;

struct SnapshotLogEntry {
  int64_t snapshot_id = 0;
  int64_t timestamp_ms = 0;
};

struct MetadataLogEntry {
  std::string metadata_file;
  int64_t timestamp_ms = 0;
};

struct TableMetadata {
  int format_version = kDefaultFormatVersion;
  std::string table_uuid;
  std::string location;
  int64_t last_sequence_number = 0;
  int64_t last_updated_ms = 0;
  int32_t last_column_id = 0;
  std::vector<SchemaPtr> schemas;
  int32_t current_schema_id = 0;
  std::vector<PartitionSpecPtr> partition_specs;
  int32_t default_spec_id = 0;
  int32_t last_partition_id = kUnpartitionedLastAssignedId;
  std::vector<SortOrderPtr> sort_orders;
  int32_t default_sort_order_id = 0;
  std::map<std::string, std::string> properties;
  std::optional<int64_t> current_snapshot_id;
  std::vector<SnapshotPtr> snapshots;
  std::vector<SnapshotLogEntry> snapshot_log;
  std::vector<MetadataLogEntry> metadata_log;
  std::map<std::string, SnapshotRef> refs;
  int64_t next_row_id = 0;  // v3
  // Parts we carry but do not interpret (statistics, partition-statistics, encryption-keys): kept
  // verbatim so a commit never drops what another engine wrote.
  nlohmann::json statistics = nlohmann::json::array();
  nlohmann::json partition_statistics = nlohmann::json::array();
  nlohmann::json encryption_keys;  // null when absent

  // Lookups; nullptr when absent.
  SchemaPtr Schema() const;  // the current schema
  SchemaPtr SchemaById(int32_t schema_id) const;
  PartitionSpecPtr Spec() const;  // the default spec
  PartitionSpecPtr SpecById(int32_t spec_id) const;
  SortOrderPtr SortOrder() const;
  SnapshotPtr SnapshotById(int64_t snapshot_id) const;
  SnapshotPtr CurrentSnapshot() const;
  // The snapshot a branch or tag points at (nullptr if the ref does not exist).
  SnapshotPtr SnapshotForRef(const std::string& ref) const;
  // The snapshot current at a time: the last snapshot-log entry at or before timestamp_ms.
  SnapshotPtr SnapshotAsOf(int64_t timestamp_ms) const;
  // The snapshot and its ancestors, newest first (stops at a missing, expired parent).
  std::vector<SnapshotPtr> Ancestors(int64_t snapshot_id) const;

  std::string Property(const std::string& key, const std::string& fallback) const;
  int64_t PropertyAsInt(const std::string& key, int64_t fallback) const;
};

using TableMetadataPtr = std::shared_ptr<const TableMetadata>;

// Checks the invariants a reader and a committer rely on: ids referenced exist, current-snapshot-id
// matches refs.main, last ids are not below those in use, v3 fields present.
Status ValidateTableMetadata(const TableMetadata& metadata);

// Table property keys we honour.
inline constexpr char kPropFormatVersion[] = "format-version";
inline constexpr char kPropTargetFileSize[] = "write.target-file-size-bytes";
inline constexpr int64_t kDefaultTargetFileSize = 512LL * 1024 * 1024;
inline constexpr char kPropParquetCompression[] = "write.parquet.compression-codec";
inline constexpr char kPropParquetCompressionLevel[] = "write.parquet.compression-level";
inline constexpr char kPropParquetRowGroupSize[] = "write.parquet.row-group-size-bytes";
inline constexpr char kPropMetadataCompression[] = "write.metadata.compression-codec";
inline constexpr char kPropMetadataDeleteAfterCommit[] = "write.metadata.delete-after-commit.enabled";
inline constexpr char kPropMetadataPreviousVersionsMax[] = "write.metadata.previous-versions-max";
inline constexpr char kPropDataPath[] = "write.data.path";
inline constexpr char kPropMetadataPath[] = "write.metadata.path";
inline constexpr char kPropCommitNumRetries[] = "commit.retry.num-retries";
inline constexpr char kPropDeleteMode[] = "write.delete.mode";
inline constexpr char kPropUpdateMode[] = "write.update.mode";
inline constexpr char kPropMergeMode[] = "write.merge.mode";

}  // namespace lakesync::iceberg
