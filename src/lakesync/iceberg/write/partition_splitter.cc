#include "lakesync/iceberg/write/partition_splitter.h"

#include <arrow/array.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/compute/api_vector.h>
#include <arrow/datum.h>
#include <arrow/record_batch.h>

#include <cstring>
#include <unordered_map>

#include "lakesync/formats/parquet/arrow_literal.h"
#include "lakesync/iceberg/write/transform_arrow.h"

namespace lakesync::iceberg {
namespace {

struct GroupKey {
  uint32_t group;
  uint64_t code;
  bool null;
  bool operator==(const GroupKey&) const = default;
};
struct GroupKeyHash {
  size_t operator()(const GroupKey& k) const {
    uint64_t h = k.code * 0x9E3779B97F4A7C15ULL ^ (static_cast<uint64_t>(k.group) << 1 | k.null);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    return static_cast<size_t>(h ^ (h >> 32));
  }
};

// Per-row codes of a transformed column: equal codes (and null flags) exactly for equal values.
// Fixed-width values use their bits; variable-width ones are interned.
Status Codes(const arrow::Array& a, std::vector<uint64_t>& codes) {
  const int64_t n = a.length();
  codes.assign(static_cast<size_t>(n), 0);
  switch (a.type_id()) {
    case arrow::Type::BOOL: {
      const auto& b = static_cast<const arrow::BooleanArray&>(a);
      for (int64_t i = 0; i < n; ++i) codes[static_cast<size_t>(i)] = b.IsValid(i) && b.Value(i);
      return Status::OK();
    }
    case arrow::Type::INT32:
    case arrow::Type::DATE32:
    case arrow::Type::FLOAT: {
      const auto* v = a.data()->GetValues<uint32_t>(1);
      for (int64_t i = 0; i < n; ++i) codes[static_cast<size_t>(i)] = v[i];
      return Status::OK();
    }
    case arrow::Type::INT64:
    case arrow::Type::TIME64:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::DOUBLE: {
      const auto* v = a.data()->GetValues<uint64_t>(1);
      for (int64_t i = 0; i < n; ++i) codes[static_cast<size_t>(i)] = v[i];
      return Status::OK();
    }
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::DECIMAL128: {
      std::unordered_map<std::string_view, uint64_t> interned;
      for (int64_t i = 0; i < n; ++i) {
        if (a.IsNull(i)) continue;
        std::string_view v = a.type_id() == arrow::Type::STRING || a.type_id() == arrow::Type::BINARY
                                 ? static_cast<const arrow::BinaryArray&>(a).GetView(i)
                                 : static_cast<const arrow::FixedSizeBinaryArray&>(a).GetView(i);
        auto [it, inserted] = interned.emplace(v, interned.size());
        codes[static_cast<size_t>(i)] = it->second;
      }
      return Status::OK();
    }
    case arrow::Type::NA: return Status::OK();
    default: return Unsupported("cannot partition by values of Arrow type {}", a.type()->ToString());
  }
}

}  // namespace

std::string PartitionKey(const std::vector<Literal>& values, const std::vector<TypePtr>& types) {
  std::string key;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].is_null() || i >= types.size()) {
      key.push_back('\0');
      continue;
    }
    auto bytes = values[i].ToBytes(*types[i]);
    const std::string b = bytes.ok() ? *bytes : values[i].ToString(*types[i]);
    key.push_back('\1');
    const uint32_t len = static_cast<uint32_t>(b.size());
    key.append(reinterpret_cast<const char*>(&len), sizeof(len));
    key += b;
  }
  return key;
}

Result<std::unique_ptr<PartitionSplitter>> PartitionSplitter::Make(SchemaPtr schema, PartitionSpecPtr spec) {
  if (!schema || !spec) return InvalidArgument("a partition splitter needs a schema and a spec");
  ARROW_RETURN_NOT_OK(spec->Validate(*schema));
  std::unique_ptr<PartitionSplitter> s(new PartitionSplitter());
  s->schema_ = std::move(schema);
  s->spec_ = std::move(spec);
  for (const auto& f : s->spec_->fields()) {
    ARROW_ASSIGN_OR_RAISE(auto path, SourceFieldPath(*s->schema_, f.source_id, "partition field '" + f.name + "'"));
    const TypePtr& source = s->schema_->FindFieldById(f.source_id)->type;
    ARROW_ASSIGN_OR_RAISE(auto result, f.transform.ResultType(source));
    s->source_paths_.push_back(std::move(path));
    s->source_types_.push_back(source);
    s->result_types_.push_back(result);
  }
  return s;
}

Result<std::vector<std::shared_ptr<arrow::Array>>> PartitionSplitter::Transform(const arrow::RecordBatch& batch) const {
  std::vector<std::shared_ptr<arrow::Array>> out;
  for (size_t k = 0; k < spec_->fields().size(); ++k) {
    ARROW_ASSIGN_OR_RAISE(auto col, SourceColumn(batch, source_paths_[k]));
    LS_ASSIGN_OR_RAISE_CTX(auto t, ApplyTransform(spec_->fields()[k].transform, *source_types_[k], col),
                           "partition field '{}'", spec_->fields()[k].name);
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<PartitionedRows>> PartitionSplitter::Split(const std::shared_ptr<arrow::RecordBatch>& batch) const {
  std::vector<PartitionedRows> out;
  const int64_t n = batch->num_rows();
  if (n == 0) return out;
  ARROW_ASSIGN_OR_RAISE(auto columns, Transform(*batch));

  // Refine a group id per row field by field: (group so far, field code, null) → new group.
  std::vector<uint32_t> group(static_cast<size_t>(n), 0);
  uint32_t groups = 1;
  std::vector<uint64_t> codes;
  for (const auto& col : columns) {
    ARROW_RETURN_NOT_OK(Codes(*col, codes));
    std::unordered_map<GroupKey, uint32_t, GroupKeyHash> next;
    const bool has_nulls = col->null_count() > 0;
    for (int64_t i = 0; i < n; ++i) {
      const bool null = has_nulls && col->IsNull(i);
      GroupKey key{group[static_cast<size_t>(i)], null ? 0 : codes[static_cast<size_t>(i)], null};
      auto [it, inserted] = next.emplace(key, static_cast<uint32_t>(next.size()));
      group[static_cast<size_t>(i)] = it->second;
    }
    groups = static_cast<uint32_t>(next.size());
  }

  // First row of every group (groups are numbered in order of first appearance).
  std::vector<int64_t> first(groups, -1);
  std::vector<int64_t> count(groups, 0);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t g = group[static_cast<size_t>(i)];
    if (first[g] < 0) first[g] = i;
    ++count[g];
  }
  auto values_of = [&](int64_t row) -> Result<std::vector<Literal>> {
    std::vector<Literal> values;
    for (size_t k = 0; k < columns.size(); ++k) {
      ARROW_ASSIGN_OR_RAISE(auto v, parquet_io::LiteralFromArray(*columns[k], row, *result_types_[k]));
      values.push_back(std::move(v));
    }
    return values;
  };
  if (groups == 1) {
    ARROW_ASSIGN_OR_RAISE(auto values, values_of(0));
    std::string key = PartitionKey(values, result_types_);
    out.push_back(PartitionedRows{std::move(values), std::move(key), batch});
    return out;
  }
  // One stable counting sort by group, one Take, then zero-copy slices.
  std::vector<int64_t> start(groups, 0);
  for (uint32_t g = 1; g < groups; ++g) start[g] = start[g - 1] + count[g - 1];
  std::vector<int64_t> cursor = start;
  arrow::Int64Builder indices;
  ARROW_RETURN_NOT_OK(indices.Resize(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(cursor[group[static_cast<size_t>(i)]]++)] = i;
  ARROW_RETURN_NOT_OK(indices.AppendValues(order));
  ARROW_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
  ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(arrow::Datum(batch), arrow::Datum(index_array)));
  auto sorted = taken.record_batch();
  for (uint32_t g = 0; g < groups; ++g) {
    ARROW_ASSIGN_OR_RAISE(auto values, values_of(first[g]));
    std::string key = PartitionKey(values, result_types_);
    out.push_back(PartitionedRows{std::move(values), std::move(key), sorted->Slice(start[g], count[g])});
  }
  return out;
}

}  // namespace lakesync::iceberg
