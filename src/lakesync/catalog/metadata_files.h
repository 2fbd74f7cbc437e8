// Reading and writing table metadata files (optionally gzip-compressed), and the file names the
// catalogs use for them.
#pragma once

#include <functional>
#include <string>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/table_metadata.h"
#include "lakesync/io/file_io.h"

namespace lakesync::catalog {

// Reads and parses a metadata file; "*.gz.metadata.json" and "*.metadata.json.gz" are gunzipped.
// Errors name the location: kNotFound when missing, kCorrupt for bad JSON or invalid metadata.
Result<std::shared_ptr<iceberg::TableMetadata>> ReadTableMetadata(const io::FileIO& io, const std::string& location);

// Serialises metadata, gzip-compressed when `write.metadata.compression-codec` is gzip.
Result<std::string> EncodeTableMetadata(const iceberg::TableMetadata& metadata);
bool MetadataIsCompressed(const iceberg::TableMetadata& metadata);

// The metadata directory of a table: `write.metadata.path` or <location>/metadata.
std::string MetadataDirectory(const iceberg::TableMetadata& metadata);

// The version number encoded in a metadata file name ("00042-<uuid>.metadata.json" or
// "v42.metadata.json"), or -1.
int ParseMetadataVersion(const std::string& location);

// "<metadata dir>/00042-<uuid>.metadata.json" (".gz.metadata.json" when compressed), as Java's
// metastore catalogs and pyiceberg name them.
std::string NewMetadataLocation(const iceberg::TableMetadata& metadata, int version);

// Write attempts record every file they create before creating it (table/pending_files.h), so that
// the files of an attempt killed half-way can be found. The table metadata file of a commit is named
// by the catalog, not by the attempt: for the duration of a commit the attempt lends the catalog a
// recorder on the committing thread, and metastore catalogs call RecordMetadataFile with the new
// metadata file's location before writing it.
class ScopedMetadataFileRecorder {
 public:
  explicit ScopedMetadataFileRecorder(std::function<Status(const std::string&)> recorder);
  ~ScopedMetadataFileRecorder();
  ScopedMetadataFileRecorder(const ScopedMetadataFileRecorder&) = delete;
  ScopedMetadataFileRecorder& operator=(const ScopedMetadataFileRecorder&) = delete;

 private:
  std::function<Status(const std::string&)> previous_;
};

// Calls this thread's recorder, if one is lent. Errors: the recorder's (the file must not be written).
Status RecordMetadataFile(const std::string& location);

}  // namespace lakesync::catalog
