// Content files (data files, position deletes, deletion vectors, equality deletes) as JSON, so that
// files written by one process can be committed by another (the Beam transforms' workers hand their
// files to a single committer; see docs/scale-out.md). The shape follows the REST catalog's
// `ContentFile` object (kebab-case keys, count maps as {"keys": [...], "values": [...]}, partition
// values in the JSON single-value encoding of spec Appendix C), except that column bounds and
// key metadata are the hex of their Appendix D bytes, so a round trip is exact without the schema.
#pragma once

#include <nlohmann/json.hpp>

#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/table_metadata.h"

namespace lakesync::iceberg {

// `metadata` supplies the partition type of the file's spec. Errors: InvalidArgument when the spec
// id is unknown or a partition value does not match its type.
Result<nlohmann::json> ContentFileToJson(const DataFile& file, const TableMetadata& metadata);

// Errors: InvalidArgument naming the key for a missing or malformed key, an unknown spec id or a
// partition value that does not decode with its type.
Result<DataFile> ContentFileFromJson(const nlohmann::json& json, const TableMetadata& metadata);

}  // namespace lakesync::iceberg
