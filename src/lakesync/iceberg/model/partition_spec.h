// Partition specs and sort orders (spec "Partitioning" and "Sorting").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/iceberg/model/schema.h"
#include "lakesync/iceberg/model/transform.h"

namespace lakesync::iceberg {

// Partition field ids start here; `last-partition-id` is one below it for an unpartitioned table.
inline constexpr int32_t kPartitionDataIdStart = 1000;
inline constexpr int32_t kUnpartitionedLastAssignedId = 999;

struct PartitionField {
  int32_t source_id = 0;
  int32_t field_id = 0;
  std::string name;
  Transform transform;
  bool operator==(const PartitionField&) const = default;
};

class PartitionSpec {
 public:
  PartitionSpec(int32_t spec_id, std::vector<PartitionField> fields)
      : spec_id_(spec_id), fields_(std::move(fields)) {}
  static std::shared_ptr<const PartitionSpec> Unpartitioned();

  int32_t spec_id() const { return spec_id_; }
  const std::vector<PartitionField>& fields() const { return fields_; }
  // True when no field produces a value (no fields, or only void transforms).
  bool IsUnpartitioned() const;
  int32_t LastAssignedFieldId() const;

  // The partition tuple type: a struct of the partition fields with their result types and ids.
  Result<TypePtr> PartitionType(const Schema& schema) const;
  // Checks source ids exist in the schema and every transform accepts its source type.
  Status Validate(const Schema& schema) const;
  // Same fields (ids, names, transforms, sources), ignoring spec ids.
  bool CompatibleWith(const PartitionSpec& other) const { return fields_ == other.fields_; }

  // Renders a partition tuple as "ts_day=2024-01-01/id_bucket=3" (for paths and display), values in
  // Java's human form (year "2024", month "2024-01", hour "2024-01-01-10").
  std::string PartitionPath(const Schema& schema, const std::vector<Literal>& values) const;

 private:
  int32_t spec_id_;
  std::vector<PartitionField> fields_;
};

using PartitionSpecPtr = std::shared_ptr<const PartitionSpec>;

enum class SortDirection { kAsc, kDesc };
enum class NullOrder { kNullsFirst, kNullsLast };

struct SortField {
  Transform transform;
  int32_t source_id = 0;
  SortDirection direction = SortDirection::kAsc;
  NullOrder null_order = NullOrder::kNullsFirst;
  bool operator==(const SortField&) const = default;
};

struct SortOrder {
  int32_t order_id = 0;  // 0 is reserved for "unsorted"
  std::vector<SortField> fields;
  bool IsUnsorted() const { return fields.empty(); }
};

using SortOrderPtr = std::shared_ptr<const SortOrder>;

}  // namespace lakesync::iceberg
