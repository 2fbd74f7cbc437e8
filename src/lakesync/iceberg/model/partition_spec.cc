#include "lakesync/iceberg/model/partition_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "lakesync/common/arithmetic.h"

namespace lakesync::iceberg {

std::shared_ptr<const PartitionSpec> PartitionSpec::Unpartitioned() {
  static const auto kSpec = std::make_shared<const PartitionSpec>(0, std::vector<PartitionField>{});
  return kSpec;
}

bool PartitionSpec::IsUnpartitioned() const {
  return std::all_of(fields_.begin(), fields_.end(),
                     [](const PartitionField& f) { return f.transform.kind() == Transform::Kind::kVoid; });
}

int32_t PartitionSpec::LastAssignedFieldId() const {
  int32_t last = kUnpartitionedLastAssignedId;
  for (const auto& f : fields_) last = std::max(last, f.field_id);
  return last;
}

Result<TypePtr> PartitionSpec::PartitionType(const Schema& schema) const {
  std::vector<NestedField> out;
  for (const auto& f : fields_) {
    const NestedField* source = schema.FindFieldById(f.source_id);
    TypePtr type;
    if (source == nullptr) {
      // A source column dropped from the schema: the partition value is still typed by a void-like
      // transform; only void can survive that (Java keeps such specs readable the same way).
      if (f.transform.kind() != Transform::Kind::kVoid) {
        return InvalidArgument("partition field '{}' refers to source id {}, which is not in the schema", f.name,
                               f.source_id);
      }
      type = Type::Unknown();
    } else if (f.transform.kind() == Transform::Kind::kUnknown) {
      type = Type::Unknown();
    } else {
      ARROW_ASSIGN_OR_RAISE(type, f.transform.ResultType(source->type));
    }
    out.push_back(NestedField{f.field_id, f.name, false, type, "", std::nullopt, std::nullopt});
  }
  return Type::Struct(std::move(out));
}

Status PartitionSpec::Validate(const Schema& schema) const {
  std::vector<std::string> names;
  for (const auto& f : fields_) {
    const NestedField* source = schema.FindFieldById(f.source_id);
    if (!source) {
      return InvalidArgument("partition field '{}' refers to source id {}, which is not in the schema", f.name,
                             f.source_id);
    }
    if (f.transform.kind() == Transform::Kind::kUnknown) {
      return Unsupported("partition field '{}' uses the unknown transform '{}'", f.name, f.transform.ToString());
    }
    if (!f.transform.CanTransform(*source->type)) {
      return InvalidArgument("partition field '{}': transform {} cannot be applied to column '{}' of type {}", f.name,
                             f.transform.ToString(), schema.FindColumnName(f.source_id), source->type->ToString());
    }
    if (std::find(names.begin(), names.end(), f.name) != names.end()) {
      return InvalidArgument("partition field name '{}' is used twice", f.name);
    }
    names.push_back(f.name);
  }
  return Status::OK();
}

namespace {

// Percent-encodes everything but unreserved URI characters, so a value is one safe path segment.
std::string EscapePathSegment(const std::string& v) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : v) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

// The human form of a partition value, as Java's Transform.toHumanString writes it: year, month and
// hour ordinals become "2017", "2017-11" and "2017-11-16-22" rather than units since 1970.
std::string HumanValue(const Transform& transform, const Type& type, const Literal& value) {
  if (!std::holds_alternative<int32_t>(value.value())) return value.ToString(type);
  const int64_t v = value.get<int32_t>();
  auto year = [](int64_t y) { return y < 0 ? fmt::format("-{:04d}", -y) : fmt::format("{:04d}", y); };
  switch (transform.kind()) {
    case Transform::Kind::kYear: return year(1970 + v);
    case Transform::Kind::kMonth:
      return fmt::format("{}-{:02d}", year(1970 + FloorDiv(v, 12)), v - FloorDiv(v, 12) * 12 + 1);
    case Transform::Kind::kHour:
      return fmt::format("{}-{:02d}", FormatDate(static_cast<int32_t>(FloorDiv(v, 24))), v - FloorDiv(v, 24) * 24);
    default: return value.ToString(type);
  }
}

}  // namespace

std::string PartitionSpec::PartitionPath(const Schema& schema, const std::vector<Literal>& values) const {
  std::string out;
  auto type = PartitionType(schema);
  for (size_t i = 0; i < fields_.size() && i < values.size(); ++i) {
    if (i) out += "/";
    std::string v = "null";
    if (type.ok() && !values[i].is_null()) {
      v = HumanValue(fields_[i].transform, *(*type)->fields()[i].type, values[i]);
    }
    out += EscapePathSegment(fields_[i].name) + "=" + EscapePathSegment(v);
  }
  return out;
}

}  // namespace lakesync::iceberg
