// Reads manifests (spec "Manifests") written by lakesync, Java (Spark, Flink, ...), pyiceberg or
// DuckDB, format versions 1 to 3.
//
// Fields are found by their Iceberg field id in the writer schema stored in the file (falling back
// to the name), never by position, so field order, record names and extra or missing optional
// fields do not matter. Partition values are read with the types of the manifest's partition spec:
// from the table metadata when given, else from the spec and schema in the manifest's own metadata,
// else as the writer schema's Avro types say.
//
// Entries come back with inherited values filled in (spec "Sequence Number Inheritance" and
// "First Row ID Inheritance"), which is why the reader needs the manifest list entry:
//   - a null snapshot_id becomes the manifest's added_snapshot_id;
//   - null sequence numbers become the manifest's sequence_number for ADDED entries (and for every
//     entry of a manifest whose sequence number is 0); v1 manifests read as 0. An EXISTING or
//     DELETED entry of a later manifest without them is Corrupt;
//   - with a manifest first_row_id, data files with a null first_row_id get it plus the record
//     counts of the null-id data files before them;
//   - data_file.spec_id is the manifest's partition_spec_id.
#pragma once

#include <avro.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/partition_spec.h"
#include "lakesync/iceberg/model/schema.h"
#include "lakesync/iceberg/model/table_metadata.h"

namespace lakesync::avro {
class AvroFileReader;
}

namespace lakesync::iceberg {

class ManifestReader {
 public:
  // Opens a manifest held in `bytes` (which must outlive the reader), described by its manifest
  // list entry. `metadata` (optional) supplies the partition spec by id. Returns Corrupt, naming the
  // manifest path, for a malformed file or one that lacks required fields, and Unsupported for
  // format versions above 3.
  static Result<std::unique_ptr<ManifestReader>> Open(std::string_view bytes, const ManifestFile& manifest,
                                                      const TableMetadata* metadata = nullptr);
  ~ManifestReader();

  // The next entry, with inherited values applied; nullopt after the last one. Errors are Corrupt
  // and name the manifest, the entry number and the field. After the last entry the numbers of
  // added, existing and deleted files and rows are compared with the manifest list entry's counts
  // (unless counts_unknown): a manifest that disagrees is Corrupt.
  Result<std::optional<ManifestEntry>> Next();

  // From the manifest metadata ("format-version"; 1 when absent and the schema has no sequence
  // numbers).
  int format_version() const { return format_version_; }
  // The table schema stored in the manifest; nullptr if absent or unreadable.
  const SchemaPtr& schema() const { return schema_; }
  // The spec the partition tuples follow; nullptr when neither the table metadata nor the manifest
  // names one (partition values then follow the writer schema's partition record).
  const PartitionSpecPtr& spec() const { return spec_; }
  // The struct type of the partition tuples: one field (id, name, result type) per value.
  const TypePtr& partition_type() const { return partition_type_; }

 private:
  ManifestReader();
  struct Layout;
  Status Resolve(const TableMetadata* metadata);
  Result<ManifestEntry> Decode(const avro_value_t& record);
  Status Inherit(ManifestEntry* entry, DataFile* file);
  Status CheckCounts();

  ManifestFile manifest_;
  std::unique_ptr<avro::AvroFileReader> reader_;
  std::unique_ptr<Layout> layout_;
  int format_version_ = 1;
  SchemaPtr schema_;
  PartitionSpecPtr spec_;
  TypePtr partition_type_;
  std::optional<int64_t> next_row_id_;
  // Files and rows seen so far by status (added, existing, deleted), for CheckCounts.
  int64_t counted_files_[3] = {0, 0, 0};
  int64_t counted_rows_[3] = {0, 0, 0};
  bool counts_checked_ = false;
};

// Reads all entries of a manifest (see ManifestReader).
Result<std::vector<ManifestEntry>> ReadManifest(std::string_view bytes, const ManifestFile& manifest,
                                                const TableMetadata* metadata = nullptr);

}  // namespace lakesync::iceberg
