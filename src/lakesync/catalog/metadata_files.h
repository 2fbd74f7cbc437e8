// Reading and writing table metadata files (optionally gzip-compressed), and the file names the
// catalogs use for them.
#pragma once

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

}  // namespace lakesync::catalog
