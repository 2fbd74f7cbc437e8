// The Avro side of manifests and manifest lists (spec "Manifests", "Manifest Lists", Appendix A):
// the writer schemas, with every field id the spec assigns, and the mapping of Iceberg partition
// values onto Avro values and back.
#pragma once

#include <avro.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"
#include "lakesync/formats/avro/avro_schema.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/iceberg/model/types.h"

namespace lakesync::iceberg::internal {

// Field ids and names of manifest_entry and data_file (spec "Manifests").
namespace entry_field {
inline constexpr int32_t kStatus = 0;
inline constexpr int32_t kSnapshotId = 1;
inline constexpr int32_t kDataFile = 2;
inline constexpr int32_t kSequenceNumber = 3;
inline constexpr int32_t kFileSequenceNumber = 4;
inline constexpr int32_t kFilePath = 100;
inline constexpr int32_t kFileFormat = 101;
inline constexpr int32_t kPartition = 102;
inline constexpr int32_t kRecordCount = 103;
inline constexpr int32_t kFileSize = 104;
inline constexpr int32_t kColumnSizes = 108;
inline constexpr int32_t kValueCounts = 109;
inline constexpr int32_t kNullValueCounts = 110;
inline constexpr int32_t kLowerBounds = 125;
inline constexpr int32_t kUpperBounds = 128;
inline constexpr int32_t kKeyMetadata = 131;
inline constexpr int32_t kSplitOffsets = 132;
inline constexpr int32_t kContent = 134;
inline constexpr int32_t kEqualityIds = 135;
inline constexpr int32_t kNanValueCounts = 137;
inline constexpr int32_t kSortOrderId = 140;
inline constexpr int32_t kFirstRowId = 142;
inline constexpr int32_t kReferencedDataFile = 143;
inline constexpr int32_t kContentOffset = 144;
inline constexpr int32_t kContentSize = 145;
}  // namespace entry_field

// Field ids of manifest_file and field_summary (spec "Manifest Lists").
namespace list_field {
inline constexpr int32_t kManifestPath = 500;
inline constexpr int32_t kManifestLength = 501;
inline constexpr int32_t kPartitionSpecId = 502;
inline constexpr int32_t kAddedSnapshotId = 503;
inline constexpr int32_t kAddedFilesCount = 504;
inline constexpr int32_t kExistingFilesCount = 505;
inline constexpr int32_t kDeletedFilesCount = 506;
inline constexpr int32_t kPartitions = 507;
inline constexpr int32_t kFieldSummary = 508;
inline constexpr int32_t kContainsNull = 509;
inline constexpr int32_t kLowerBound = 510;
inline constexpr int32_t kUpperBound = 511;
inline constexpr int32_t kAddedRowsCount = 512;
inline constexpr int32_t kExistingRowsCount = 513;
inline constexpr int32_t kDeletedRowsCount = 514;
inline constexpr int32_t kSequenceNumber = 515;
inline constexpr int32_t kMinSequenceNumber = 516;
inline constexpr int32_t kContent = 517;
inline constexpr int32_t kContainsNan = 518;
inline constexpr int32_t kKeyMetadata = 519;
inline constexpr int32_t kFirstRowId = 520;
}  // namespace list_field

// The manifest_entry writer schema for format version 2 or 3, with `partition_type` (a struct of
// the spec's partition fields and their result types) as the r102 record. Returns InvalidArgument
// for other versions or partition types Avro cannot carry.
Result<std::string> ManifestEntrySchemaJson(int format_version, const Type& partition_type);
// The manifest_file writer schema for format version 2 or 3.
Result<std::string> ManifestListSchemaJson(int format_version);

// The Avro type of a primitive Iceberg type (Appendix A), with keys in the order Java writes them.
// Named types (decimal_P_S, uuid_fixed, fixed_L) are defined once: later uses refer to the name
// recorded in `defined`.
Result<nlohmann::ordered_json> AvroTypeFor(const Type& type, std::set<std::string>* defined);

// Bytes of the fixed type that stores decimal(precision, s): the fewest that hold 10^precision - 1.
int32_t DecimalRequiredBytes(int32_t precision);

// Stores a partition value into an Avro value of AvroTypeFor(type) (not the union around it).
// Returns InvalidArgument if the literal does not match the type.
Status WriteLiteral(avro_value_t* value, const Type& type, const Literal& literal);
// Reads a non-null Avro value as a literal of `expected`, converting what Avro schema resolution
// and Iceberg type promotion allow (int → long, float → double, string uuid → uuid, ...).
// Returns Corrupt when the value cannot be one of `expected`.
Result<Literal> ReadLiteral(const avro_value_t& value, const Type& expected);
// The Iceberg type an Avro type (with its logical type) stands for, when nothing better is known.
TypePtr InferIcebergType(const avro::AvroNode& node);

// Reading manifest and manifest-list records by field index, for the manifest reader and the
// manifest-list reader alike. An index of -1 means the writer's schema has no such field.
// The value of field `index` of a record, or nullopt when the writer has no such field or wrote null.
Result<std::optional<avro_value_t>> OptionalChild(const avro_value_t& record, int index);
// The value of field `index`; an error when it is missing or null.
Result<avro_value_t> RequiredChild(const avro_value_t& record, int index);
Result<std::optional<int64_t>> OptionalLong(const avro_value_t& record, int index);

// The entry status as the spec spells it ("EXISTING", "ADDED", "DELETED"), for messages and JSON.
std::string_view StatusName(ManifestEntryStatus status);

}  // namespace lakesync::iceberg::internal
