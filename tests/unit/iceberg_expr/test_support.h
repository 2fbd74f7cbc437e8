// Helpers shared by the iceberg_expr tests: building Arrow columns from literals (with Arrow's typed
// builders, independently of the code under test), computing file metrics and partition summaries the
// way a writer does, and a few assertion shortcuts.
#pragma once

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/iceberg/expr/binder.h"
#include "lakesync/iceberg/expr/expression.h"
#include "lakesync/iceberg/expr/parser.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/partition_spec.h"
#include "lakesync/iceberg/model/schema.h"

namespace lakesync::iceberg::testing {

inline NestedField Optional(int32_t id, std::string name, TypePtr type) {
  return NestedField{id, std::move(name), false, std::move(type), "", std::nullopt, std::nullopt};
}
inline NestedField Required(int32_t id, std::string name, TypePtr type) {
  return NestedField{id, std::move(name), true, std::move(type), "", std::nullopt, std::nullopt};
}

// Parses and binds, failing the test on error.
inline BoundExpr MustBind(const std::string& filter, const Schema& schema, bool case_sensitive = true) {
  auto bound = ParseAndBind(filter, schema, case_sensitive);
  EXPECT_TRUE(bound.ok()) << filter << ": " << bound.status().ToString();
  return bound.ok() ? *bound : BoundExpr::AlwaysFalse();
}

inline std::string ErrorOf(const Status& st) { return st.ok() ? "<ok>" : st.message(); }

template <typename T>
std::string ErrorOf(const Result<T>& r) {
  return ErrorOf(r.status());
}

inline bool IsNaN(const Literal& v) {
  if (std::holds_alternative<double>(v.value())) return std::isnan(v.get<double>());
  if (std::holds_alternative<float>(v.value())) return std::isnan(v.get<float>());
  return false;
}

// ---- Arrow columns ----

template <typename Builder, typename Get>
std::shared_ptr<arrow::Array> BuildWith(Builder& builder, const std::vector<Literal>& values, const Get& get) {
  for (const auto& v : values) {
    if (v.is_null()) {
      EXPECT_TRUE(builder.AppendNull().ok());
    } else {
      EXPECT_TRUE(builder.Append(get(v)).ok());
    }
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(builder.Finish(&out).ok());
  return out;
}

// A column of the Iceberg type's Arrow type (ToArrowType) holding `values` (null Literals are nulls).
inline std::shared_ptr<arrow::Array> MakeColumn(const Type& type, const std::vector<Literal>& values) {
  auto arrow_type = ToArrowType(type).ValueOrDie();
  auto* pool = arrow::default_memory_pool();
  switch (type.id()) {
    case TypeId::kBoolean: {
      arrow::BooleanBuilder b;
      return BuildWith(b, values, [](const Literal& v) { return v.get<bool>(); });
    }
    case TypeId::kInt: {
      arrow::Int32Builder b;
      return BuildWith(b, values, [](const Literal& v) { return v.get<int32_t>(); });
    }
    case TypeId::kDate: {
      arrow::Date32Builder b;
      return BuildWith(b, values, [](const Literal& v) { return v.get<int32_t>(); });
    }
    case TypeId::kLong: {
      arrow::Int64Builder b;
      return BuildWith(b, values, [](const Literal& v) { return v.get<int64_t>(); });
    }
    case TypeId::kTime: {
      arrow::Time64Builder b(arrow_type, pool);
      return BuildWith(b, values, [](const Literal& v) { return v.get<int64_t>(); });
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      arrow::TimestampBuilder b(arrow_type, pool);
      return BuildWith(b, values, [](const Literal& v) { return v.get<int64_t>(); });
    }
    case TypeId::kFloat: {
      arrow::FloatBuilder b;
      return BuildWith(b, values, [](const Literal& v) { return v.get<float>(); });
    }
    case TypeId::kDouble: {
      arrow::DoubleBuilder b;
      return BuildWith(b, values, [](const Literal& v) { return v.get<double>(); });
    }
    case TypeId::kDecimal: {
      arrow::Decimal128Builder b(arrow_type, pool);
      return BuildWith(b, values, [](const Literal& v) {
        const __int128 u = v.get<Decimal>().unscaled;
        return arrow::Decimal128(static_cast<int64_t>(u >> 64), static_cast<uint64_t>(u & ~uint64_t{0}));
      });
    }
    case TypeId::kString: {
      arrow::StringBuilder b;
      return BuildWith(b, values, [](const Literal& v) { return v.get<std::string>(); });
    }
    case TypeId::kBinary: {
      arrow::BinaryBuilder b;
      return BuildWith(b, values, [](const Literal& v) { return v.get<Bytes>().data; });
    }
    case TypeId::kUuid:
    case TypeId::kFixed: {
      arrow::FixedSizeBinaryBuilder b(arrow_type, pool);
      return BuildWith(b, values, [](const Literal& v) { return std::string_view(v.get<Bytes>().data); });
    }
    default: ADD_FAILURE() << "no test builder for " << type.ToString(); return nullptr;
  }
}

// A struct column from child arrays (in the struct's field order) and a validity per row.
inline std::shared_ptr<arrow::Array> MakeStructColumn(const arrow::DataType& struct_type,
                                                      const std::vector<std::shared_ptr<arrow::Array>>& children,
                                                      const std::vector<bool>& valid) {
  arrow::BooleanBuilder validity;
  for (bool v : valid) EXPECT_TRUE(validity.Append(v).ok());
  std::shared_ptr<arrow::Array> bits;
  EXPECT_TRUE(validity.Finish(&bits).ok());
  const auto null_count = static_cast<int64_t>(std::count(valid.begin(), valid.end(), false));
  auto st = arrow::StructArray::Make(children, struct_type.fields(),
                                     std::static_pointer_cast<arrow::BooleanArray>(bits)->values(), null_count);
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  return *st;
}

// ---- rows, metrics, partitions ----

// A row as values by top-level field position; a struct value is held as its children (by child
// position) plus its own validity.
struct Row {
  std::vector<Literal> top;                            // per top-level field (struct fields: unused)
  std::map<int32_t, std::vector<Literal>> struct_kids;  // top-level struct field id -> child values
  std::map<int32_t, bool> struct_valid;                 // top-level struct field id -> not null
};

// The value of field `id` (any depth through structs) in a row; null when an enclosing struct is null.
inline Literal ValueOf(const Schema& schema, const Row& row, int32_t id) {
  const auto& fields = schema.fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].id == id) return row.top[i];
    if (fields[i].type->id() != TypeId::kStruct) continue;
    const auto& kids = fields[i].type->fields();
    for (size_t k = 0; k < kids.size(); ++k) {
      if (kids[k].id != id) continue;
      auto valid = row.struct_valid.find(fields[i].id);
      if (valid == row.struct_valid.end() || !valid->second) return Literal::Null();
      return row.struct_kids.at(fields[i].id)[k];
    }
  }
  return Literal::Null();
}

inline std::shared_ptr<arrow::RecordBatch> MakeBatch(const Schema& schema, const std::vector<Row>& rows) {
  auto arrow_schema = ToArrowSchema(schema).ValueOrDie();
  std::vector<std::shared_ptr<arrow::Array>> columns;
  const auto& fields = schema.fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].type->id() == TypeId::kStruct) {
      std::vector<std::shared_ptr<arrow::Array>> children;
      const auto& kids = fields[i].type->fields();
      for (size_t k = 0; k < kids.size(); ++k) {
        std::vector<Literal> vals;
        for (const auto& r : rows) vals.push_back(r.struct_kids.at(fields[i].id)[k]);
        children.push_back(MakeColumn(*kids[k].type, vals));
      }
      std::vector<bool> valid;
      for (const auto& r : rows) valid.push_back(r.struct_valid.at(fields[i].id));
      columns.push_back(MakeStructColumn(*arrow_schema->field(static_cast<int>(i))->type(), children, valid));
    } else {
      std::vector<Literal> vals;
      for (const auto& r : rows) vals.push_back(r.top[i]);
      columns.push_back(MakeColumn(*fields[i].type, vals));
    }
  }
  return arrow::RecordBatch::Make(arrow_schema, static_cast<int64_t>(rows.size()), columns);
}

// The first `n` code points of a UTF-8 string.
inline std::string Utf8Prefix(const std::string& s, size_t n) {
  size_t i = 0;
  for (size_t count = 0; i < s.size() && count < n; ++count) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
  }
  return s.substr(0, i);
}

inline std::string EncodeUtf8(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// An upper bound for strings above `s` truncated to `n` code points: the prefix with its last code
// point incremented (what writers store); nullopt when it cannot be incremented.
inline std::optional<std::string> TruncatedUpper(const std::string& s, size_t n) {
  std::string prefix = Utf8Prefix(s, n);
  if (prefix == s) return s;
  size_t start = prefix.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(prefix[start]) & 0xC0) == 0x80) --start;
  const auto lead = static_cast<unsigned char>(prefix[start]);
  uint32_t cp = lead < 0x80 ? lead : lead < 0xE0 ? (lead & 0x1F) : lead < 0xF0 ? (lead & 0x0F) : (lead & 0x07);
  for (size_t i = start + 1; i < prefix.size(); ++i) cp = (cp << 6) | (static_cast<unsigned char>(prefix[i]) & 0x3F);
  uint32_t next = cp + 1;
  if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000;
  if (next > 0x10FFFF) return std::nullopt;
  return prefix.substr(0, start) + EncodeUtf8(next);
}

struct MetricsOptions {
  std::optional<size_t> truncate_strings;  // code points kept in string bounds
};

// Column metrics the way a Parquet writer reports them: value counts include nulls and NaNs, bounds
// cover non-null non-NaN values; struct parents null out their children.
inline void AddMetrics(const Schema& schema, const std::vector<Row>& rows, const NestedField& field,
                       const MetricsOptions& options, DataFile& file) {
  if (field.type->id() == TypeId::kStruct) {
    for (const auto& kid : field.type->fields()) AddMetrics(schema, rows, kid, options, file);
    return;
  }
  int64_t nulls = 0, nans = 0;
  std::optional<Literal> lo, hi;
  for (const auto& r : rows) {
    const Literal v = ValueOf(schema, r, field.id);
    if (v.is_null()) {
      ++nulls;
    } else if (IsNaN(v)) {
      ++nans;
    } else {
      if (!lo || v.Compare(*lo) < 0) lo = v;
      if (!hi || v.Compare(*hi) > 0) hi = v;
    }
  }
  file.value_counts[field.id] = static_cast<int64_t>(rows.size());
  file.null_value_counts[field.id] = nulls;
  if (field.type->id() == TypeId::kFloat || field.type->id() == TypeId::kDouble) file.nan_value_counts[field.id] = nans;
  if (lo) {
    if (field.type->id() == TypeId::kString && options.truncate_strings) {
      file.lower_bounds[field.id] = Utf8Prefix(lo->get<std::string>(), *options.truncate_strings);
      auto upper = TruncatedUpper(hi->get<std::string>(), *options.truncate_strings);
      if (upper) file.upper_bounds[field.id] = *upper;
    } else {
      file.lower_bounds[field.id] = lo->ToBytes(*field.type).ValueOrDie();
      file.upper_bounds[field.id] = hi->ToBytes(*field.type).ValueOrDie();
    }
  }
}

inline DataFile FileWithMetrics(const Schema& schema, const std::vector<Row>& rows, const MetricsOptions& options = {}) {
  DataFile file;
  file.file_path = "mem://file.parquet";
  file.record_count = static_cast<int64_t>(rows.size());
  for (const auto& f : schema.fields()) AddMetrics(schema, rows, f, options, file);
  return file;
}

inline std::vector<Literal> PartitionTuple(const PartitionSpec& spec, const Schema& schema, const Row& row) {
  std::vector<Literal> out;
  for (const auto& f : spec.fields()) {
    const NestedField* source = schema.FindFieldById(f.source_id);
    out.push_back(f.transform.Apply(*source->type, ValueOf(schema, row, f.source_id)).ValueOrDie());
  }
  return out;
}

// Partition field summaries over the partition tuples of the files a manifest tracks.
inline std::vector<PartitionFieldSummary> Summaries(const PartitionSpec& spec, const Schema& schema,
                                                    const std::vector<std::vector<Literal>>& tuples) {
  auto ptype = spec.PartitionType(schema).ValueOrDie();
  std::vector<PartitionFieldSummary> out;
  for (size_t i = 0; i < spec.fields().size(); ++i) {
    const Type& type = *ptype->fields()[i].type;
    PartitionFieldSummary s;
    const bool floating = type.id() == TypeId::kFloat || type.id() == TypeId::kDouble;
    if (floating) s.contains_nan = false;
    std::optional<Literal> lo, hi;
    for (const auto& t : tuples) {
      const Literal& v = t[i];
      if (v.is_null()) {
        s.contains_null = true;
      } else if (IsNaN(v)) {
        s.contains_nan = true;
      } else {
        if (!lo || v.Compare(*lo) < 0) lo = v;
        if (!hi || v.Compare(*hi) > 0) hi = v;
      }
    }
    if (lo && type.id() != TypeId::kUnknown) {
      s.lower_bound = lo->ToBytes(type).ValueOrDie();
      s.upper_bound = hi->ToBytes(type).ValueOrDie();
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace lakesync::iceberg::testing
