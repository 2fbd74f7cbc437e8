// The text forms users write for partition and sort fields (Beam's Managed I/O `partition_fields` /
// `sort_fields`, and `lakesync table create --partition/--sort`):
//   partition: "col", "identity(col)", "bucket(col, 16)", "truncate(col, 4)", "year(col)",
//              "month(col)", "day(col)", "hour(col)", "void(col)"
//   sort:      "<partition-style term> [asc|desc] [nulls first|nulls last]"
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lakesync/iceberg/model/partition_spec.h"

namespace lakesync::iceberg {

// Builds a spec (id 0, field ids from 1000) from the terms, named as Java names them
// (col, col_bucket, col_trunc, col_year, col_month, col_day, col_hour, col_null). Errors name the term.
Result<PartitionSpecPtr> ParsePartitionFields(const std::vector<std::string>& terms, const Schema& schema);

// Builds a sort order (id 1; unsorted when no terms). Default direction asc; default null order
// nulls-first for asc and nulls-last for desc.
Result<SortOrderPtr> ParseSortFields(const std::vector<std::string>& terms, const Schema& schema);

// Splits "a, bucket(b, 4), c" on top-level commas (for flags given as one comma-separated value).
std::vector<std::string> SplitTopLevelCommas(std::string_view text);

}  // namespace lakesync::iceberg
