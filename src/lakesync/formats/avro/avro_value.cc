#include "lakesync/formats/avro/avro_value.h"

#include <string>

#include "lakesync/formats/avro/avro_c.h"

namespace lakesync::avro {
namespace {

avro_type_t TypeOf(const avro_value_t& value) { return avro_value_get_type(&value); }

Status WrongType(const avro_value_t& value, std::string_view expected) {
  return Corrupt("expected {}, found Avro {}", expected, AvroValueTypeName(value));
}

Status Check(int rc, std::string_view what) {
  if (rc == 0) return Status::OK();
  return AvroCError(ErrorKind::kInvalidArgument, what);
}

// The index of the null branch of a union schema, or -1.
int NullBranch(avro_schema_t schema) {
  const size_t n = avro_schema_union_size(schema);
  for (size_t i = 0; i < n; ++i) {
    avro_schema_t branch = avro_schema_union_branch(schema, static_cast<int>(i));
    if (branch != nullptr && avro_typeof(branch) == AVRO_NULL) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::string_view AvroValueTypeName(const avro_value_t& value) {
  switch (TypeOf(value)) {
    case AVRO_STRING: return "string";
    case AVRO_BYTES: return "bytes";
    case AVRO_INT32: return "int";
    case AVRO_INT64: return "long";
    case AVRO_FLOAT: return "float";
    case AVRO_DOUBLE: return "double";
    case AVRO_BOOLEAN: return "boolean";
    case AVRO_NULL: return "null";
    case AVRO_RECORD: return "record";
    case AVRO_ENUM: return "enum";
    case AVRO_FIXED: return "fixed";
    case AVRO_MAP: return "map";
    case AVRO_ARRAY: return "array";
    case AVRO_UNION: return "union";
    default: return "link";
  }
}

Result<std::optional<avro_value_t>> NonNullValue(const avro_value_t& value) {
  avro_value_t current = value;
  if (TypeOf(current) == AVRO_UNION) {
    avro_value_t branch;
    if (avro_value_get_current_branch(&current, &branch) != 0) return Corrupt("a union value has no branch");
    current = branch;
  }
  if (TypeOf(current) == AVRO_NULL) return std::nullopt;
  return current;
}

Result<avro_value_t> ChildAt(const avro_value_t& value, size_t index) {
  avro_value_t child;
  if (avro_value_get_by_index(&value, index, &child, nullptr) != 0) {
    return Corrupt("Avro {} has no child {}", AvroValueTypeName(value), index);
  }
  return child;
}

Result<size_t> ChildCount(const avro_value_t& value) {
  size_t n = 0;
  if (avro_value_get_size(&value, &n) != 0) return WrongType(value, "a record, array or map");
  return n;
}

Result<bool> ReadBool(const avro_value_t& value) {
  int v = 0;
  if (TypeOf(value) != AVRO_BOOLEAN || avro_value_get_boolean(&value, &v) != 0) return WrongType(value, "boolean");
  return v != 0;
}

Result<int32_t> ReadInt(const avro_value_t& value) {
  if (TypeOf(value) == AVRO_INT32) {
    int32_t v = 0;
    if (avro_value_get_int(&value, &v) == 0) return v;
  } else if (TypeOf(value) == AVRO_INT64) {
    int64_t v = 0;
    if (avro_value_get_long(&value, &v) == 0) {
      if (v < INT32_MIN || v > INT32_MAX) return Corrupt("long value {} does not fit an int", v);
      return static_cast<int32_t>(v);
    }
  }
  return WrongType(value, "int");
}

Result<int64_t> ReadLong(const avro_value_t& value) {
  if (TypeOf(value) == AVRO_INT64) {
    int64_t v = 0;
    if (avro_value_get_long(&value, &v) == 0) return v;
  } else if (TypeOf(value) == AVRO_INT32) {
    int32_t v = 0;
    if (avro_value_get_int(&value, &v) == 0) return static_cast<int64_t>(v);
  }
  return WrongType(value, "long");
}

Result<float> ReadFloat(const avro_value_t& value) {
  float v = 0;
  if (TypeOf(value) != AVRO_FLOAT || avro_value_get_float(&value, &v) != 0) return WrongType(value, "float");
  return v;
}

Result<double> ReadDouble(const avro_value_t& value) {
  if (TypeOf(value) == AVRO_DOUBLE) {
    double v = 0;
    if (avro_value_get_double(&value, &v) == 0) return v;
  } else if (TypeOf(value) == AVRO_FLOAT) {
    float v = 0;
    if (avro_value_get_float(&value, &v) == 0) return static_cast<double>(v);
  }
  return WrongType(value, "double");
}

Result<std::string> ReadString(const avro_value_t& value) {
  if (TypeOf(value) == AVRO_STRING) {
    const char* str = nullptr;
    size_t size = 0;
    // Avro C counts the NUL terminator it adds.
    if (avro_value_get_string(&value, &str, &size) == 0 && str != nullptr && size >= 1) {
      return std::string(str, size - 1);
    }
    return Corrupt("cannot read an Avro string");
  }
  if (TypeOf(value) == AVRO_BYTES) return ReadBytes(value);
  return WrongType(value, "string");
}

Result<std::string> ReadBytes(const avro_value_t& value) {
  const void* buf = nullptr;
  size_t size = 0;
  switch (TypeOf(value)) {
    case AVRO_BYTES:
      if (avro_value_get_bytes(&value, &buf, &size) != 0) return Corrupt("cannot read Avro bytes");
      break;
    case AVRO_FIXED:
      if (avro_value_get_fixed(&value, &buf, &size) != 0) return Corrupt("cannot read an Avro fixed");
      break;
    case AVRO_STRING: return ReadString(value);
    default: return WrongType(value, "bytes");
  }
  return size == 0 ? std::string() : std::string(static_cast<const char*>(buf), size);
}

Result<avro_value_t> MutableField(avro_value_t* record, size_t index) {
  avro_value_t child;
  if (avro_value_get_by_index(record, index, &child, nullptr) != 0) {
    return AvroCError(ErrorKind::kInvalidArgument, fmt::format("Avro record has no field {}", index));
  }
  return child;
}

Status SetNullBranch(avro_value_t* value) {
  avro_value_t target = *value;
  if (TypeOf(target) == AVRO_UNION) {
    const int branch = NullBranch(avro_value_get_schema(value));
    if (branch < 0) return InvalidArgument("the Avro union has no null branch");
    RETURN_NOT_OK(Check(avro_value_set_branch(value, branch, &target), "selecting the null branch"));
  }
  if (TypeOf(target) != AVRO_NULL) {
    return InvalidArgument("a required Avro {} cannot be null", AvroValueTypeName(target));
  }
  return Check(avro_value_set_null(&target), "writing null");
}

Result<avro_value_t> SetNonNullBranch(avro_value_t* value) {
  if (TypeOf(*value) != AVRO_UNION) return *value;
  avro_schema_t schema = avro_value_get_schema(value);
  const int null_branch = NullBranch(schema);
  if (avro_schema_union_size(schema) != 2 || null_branch < 0) {
    return InvalidArgument("only [\"null\", T] unions are supported for writing");
  }
  avro_value_t branch;
  RETURN_NOT_OK(Check(avro_value_set_branch(value, 1 - null_branch, &branch), "selecting a union branch"));
  return branch;
}

Result<avro_value_t> AppendElement(avro_value_t* array) {
  avro_value_t element;
  RETURN_NOT_OK(Check(avro_value_append(array, &element, nullptr), "appending an array element"));
  return element;
}

Status WriteBool(avro_value_t* value, bool v) {
  return Check(avro_value_set_boolean(value, v ? 1 : 0), "writing a boolean");
}
Status WriteInt(avro_value_t* value, int32_t v) { return Check(avro_value_set_int(value, v), "writing an int"); }
Status WriteLong(avro_value_t* value, int64_t v) { return Check(avro_value_set_long(value, v), "writing a long"); }
Status WriteFloat(avro_value_t* value, float v) { return Check(avro_value_set_float(value, v), "writing a float"); }
Status WriteDouble(avro_value_t* value, double v) { return Check(avro_value_set_double(value, v), "writing a double"); }

Status WriteString(avro_value_t* value, std::string_view v) {
  // Avro C wants the length including a NUL terminator, which std::string provides.
  const std::string copy(v);
  return Check(avro_value_set_string_len(value, copy.c_str(), copy.size() + 1), "writing a string");
}

Status WriteBytes(avro_value_t* value, std::string_view v) {
  return Check(avro_value_set_bytes(value, const_cast<char*>(v.data()), v.size()), "writing bytes");
}

Status WriteFixed(avro_value_t* value, std::string_view v) {
  const int64_t size = avro_schema_fixed_size(avro_value_get_schema(value));
  if (static_cast<int64_t>(v.size()) != size) {
    return InvalidArgument("an Avro fixed of {} bytes cannot hold {} bytes", size, v.size());
  }
  return Check(avro_value_set_fixed(value, const_cast<char*>(v.data()), v.size()), "writing a fixed");
}

}  // namespace lakesync::avro
