// Writes one manifest (spec "Manifests") into memory and describes it for the manifest list.
//
//   auto writer = ManifestWriter::Make({.format_version = 3, .schema = s, .spec = spec,
//                                       .content = ManifestContent::kData, .snapshot_id = id});
//   writer->Add(entry) ...;
//   auto bytes = writer->Finish();             // write them with FileIO
//   ManifestFile listed = writer->ToManifestFile(location, bytes->size());
//
// The writer counts added/existing/deleted files and rows, tracks the smallest data sequence number
// of live entries and builds the partition summaries, so ToManifestFile needs nothing else.
// Sequence numbers that are only known at commit time stay kUnassignedSequenceNumber;
// WriteManifestList replaces them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/partition_spec.h"
#include "lakesync/iceberg/model/schema.h"

namespace lakesync::avro {
class AvroFileWriter;
}

namespace lakesync::iceberg {

class PartitionSummaryBuilder;

// A manifest's sequence number (or smallest data sequence number) before its commit assigns one.
inline constexpr int64_t kUnassignedSequenceNumber = -1;
// A manifest's added_snapshot_id when the writer was not told the snapshot.
inline constexpr int64_t kUnassignedSnapshotId = -1;

struct ManifestWriterOptions {
  int format_version = 2;  // 2 or 3
  SchemaPtr schema;        // the table schema, stored in the manifest metadata
  PartitionSpecPtr spec;   // the spec every entry is partitioned by
  ManifestContent content = ManifestContent::kData;
  // The snapshot the manifest is written for; it becomes added_snapshot_id in the manifest list.
  // Entries keep the snapshot id they are given (null for ADDED entries means "inherit").
  std::optional<int64_t> snapshot_id;
  // Table property write.avro.compression-codec values (gzip, zstd, snappy, uncompressed) or Avro
  // codec names (deflate, zstandard, null).
  std::string codec = "gzip";
  // Where the manifest will be stored, for error messages.
  std::string location;
};

class ManifestWriter {
 public:
  // Returns InvalidArgument for a missing schema or spec, a spec that does not bind to the schema,
  // a format version other than 2 or 3, or an unknown codec.
  static Result<std::unique_ptr<ManifestWriter>> Make(ManifestWriterOptions options);
  ~ManifestWriter();

  // Adds one entry. Returns InvalidArgument, naming the file, when the entry breaks a spec rule:
  // content that does not belong in this manifest, a partition tuple that does not match the spec,
  // EXISTING/DELETED entries without both sequence numbers, equality deletes without equality ids,
  // deletion vectors without referenced_data_file/content_offset/content_size_in_bytes (or any DV in
  // v2), new v2-style position delete files in v3, or first_row_id on a delete file.
  Status Add(const ManifestEntry& entry);

  // Returns the manifest file's bytes. The writer cannot add entries afterwards.
  Result<std::string> Finish();

  // The manifest list entry for the finished manifest stored at `location` with `length` bytes.
  // sequence_number is kUnassignedSequenceNumber, as is min_sequence_number when no live entry had
  // an explicit data sequence number; added_snapshot_id is kUnassignedSnapshotId without a snapshot
  // id in the options. Returns InvalidArgument before Finish.
  Result<ManifestFile> ToManifestFile(std::string location, int64_t length) const;

  int64_t entries_written() const;

 private:
  ManifestWriter() = default;

  ManifestWriterOptions options_;
  TypePtr partition_type_;
  std::unique_ptr<avro::AvroFileWriter> writer_;
  std::unique_ptr<PartitionSummaryBuilder> summaries_;
  // Field positions in the writer schema, looked up once.
  struct Layout;
  std::unique_ptr<Layout> layout_;
  int32_t added_files_ = 0;
  int32_t existing_files_ = 0;
  int32_t deleted_files_ = 0;
  int64_t added_rows_ = 0;
  int64_t existing_rows_ = 0;
  int64_t deleted_rows_ = 0;
  std::optional<int64_t> min_sequence_number_;
  bool finished_ = false;
};

// Maps a write.avro.compression-codec value or an Avro codec name onto the Avro codec name written
// in avro.codec. Returns InvalidArgument naming the allowed values otherwise.
Result<std::string> ManifestCodecName(std::string_view codec);

}  // namespace lakesync::iceberg
