// Content files and manifest entries (spec "Manifests"): what a manifest records about each data or
// delete file, and what a manifest list records about each manifest. Encoding is in
// formats/avro and iceberg/manifest; this is the in-memory model every module shares.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/iceberg/model/literal.h"

namespace lakesync::iceberg {

enum class FileContent : int32_t { kData = 0, kPositionDeletes = 1, kEqualityDeletes = 2 };
enum class FileFormat { kParquet, kAvro, kOrc, kPuffin };

std::string_view FileFormatName(FileFormat format);  // upper case, as Java and pyiceberg write it
Result<FileFormat> ParseFileFormat(std::string_view name);  // case-insensitive

struct DataFile {
  FileContent content = FileContent::kData;
  std::string file_path;
  FileFormat file_format = FileFormat::kParquet;
  int32_t spec_id = 0;             // the spec of the manifest the file is tracked in
  std::vector<Literal> partition;  // one value per spec field, in spec order
  int64_t record_count = 0;
  int64_t file_size_in_bytes = 0;
  std::map<int32_t, int64_t> column_sizes;
  std::map<int32_t, int64_t> value_counts;
  std::map<int32_t, int64_t> null_value_counts;
  std::map<int32_t, int64_t> nan_value_counts;
  std::map<int32_t, std::string> lower_bounds;  // Appendix D single-value bytes
  std::map<int32_t, std::string> upper_bounds;
  std::optional<std::string> key_metadata;
  std::vector<int64_t> split_offsets;
  std::vector<int32_t> equality_ids;
  std::optional<int32_t> sort_order_id;
  std::optional<int64_t> first_row_id;          // v3 data files
  std::optional<std::string> referenced_data_file;  // DVs (required) and file-scoped position deletes
  std::optional<int64_t> content_offset;        // DVs: blob offset in the Puffin file
  std::optional<int64_t> content_size_in_bytes; // DVs: blob length

  bool IsDeletionVector() const {
    return content == FileContent::kPositionDeletes && file_format == FileFormat::kPuffin;
  }
};

using DataFilePtr = std::shared_ptr<const DataFile>;

// A string equal for two files exactly when they have the same spec id and partition values: the
// grouping key for "same partition" rules (delete scoping, one delete file per partition).
std::string PartitionTupleKey(const DataFile& file);

enum class ManifestEntryStatus : int32_t { kExisting = 0, kAdded = 1, kDeleted = 2 };

struct ManifestEntry {
  ManifestEntryStatus status = ManifestEntryStatus::kAdded;
  // After reading, these hold the inherited values (never null); when writing ADDED entries of the
  // snapshot being committed they are left empty so readers inherit them from the manifest list.
  std::optional<int64_t> snapshot_id;
  std::optional<int64_t> sequence_number;       // the data sequence number
  std::optional<int64_t> file_sequence_number;
  DataFilePtr data_file;
};

enum class ManifestContent : int32_t { kData = 0, kDeletes = 1 };

struct PartitionFieldSummary {
  bool contains_null = false;
  std::optional<bool> contains_nan;
  std::optional<std::string> lower_bound;  // Appendix D bytes
  std::optional<std::string> upper_bound;
};

// One entry of a manifest list.
struct ManifestFile {
  std::string manifest_path;
  int64_t manifest_length = 0;
  int32_t partition_spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  int64_t sequence_number = 0;
  int64_t min_sequence_number = 0;
  int64_t added_snapshot_id = 0;
  int32_t added_files_count = 0;
  int32_t existing_files_count = 0;
  int32_t deleted_files_count = 0;
  int64_t added_rows_count = 0;
  int64_t existing_rows_count = 0;
  int64_t deleted_rows_count = 0;
  std::vector<PartitionFieldSummary> partitions;
  std::optional<std::string> key_metadata;
  std::optional<int64_t> first_row_id;  // v3 data manifests
  // v1 manifest lists may leave the file counts null, which the spec reads as "assume non-zero":
  // such a manifest must be read, whatever its counts say.
  bool counts_unknown = false;

  bool has_added_or_existing() const {
    return counts_unknown || added_files_count > 0 || existing_files_count > 0;
  }
};

}  // namespace lakesync::iceberg
