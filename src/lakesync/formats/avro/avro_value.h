// Typed access to Avro C generic values, for code that maps records onto its own structs.
//
// Readers are lenient in the ways Avro schema resolution allows (an int where a long is expected,
// a float where a double is, string and bytes for one another) and otherwise return Corrupt naming
// the type they found; callers add the field name with WithContext / LS_ASSIGN_OR_RAISE_CTX.
// Writers select union branches for optional values and report Avro C's message on failure.
#pragma once

#include <avro.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lakesync/common/status.h"

namespace lakesync::avro {

std::string_view AvroValueTypeName(const avro_value_t& value);

// --- reading ---

// The value itself, or the current branch of a union; nullopt when that is null.
Result<std::optional<avro_value_t>> NonNullValue(const avro_value_t& value);
// Field `index` of a record, element `index` of an array.
Result<avro_value_t> ChildAt(const avro_value_t& value, size_t index);
// Number of fields of a record, elements of an array or entries of a map.
Result<size_t> ChildCount(const avro_value_t& value);

Result<bool> ReadBool(const avro_value_t& value);
Result<int32_t> ReadInt(const avro_value_t& value);  // int, or a long that fits
Result<int64_t> ReadLong(const avro_value_t& value);  // long or int
Result<float> ReadFloat(const avro_value_t& value);
Result<double> ReadDouble(const avro_value_t& value);  // double or float
Result<std::string> ReadString(const avro_value_t& value);  // string or bytes
Result<std::string> ReadBytes(const avro_value_t& value);  // bytes, fixed or string

// --- writing ---

// Field `index` of a record value being built.
Result<avro_value_t> MutableField(avro_value_t* record, size_t index);
// Sets an optional (["null", T] or [T, "null"]) value to null.
Status SetNullBranch(avro_value_t* value);
// Selects the non-null branch of an optional value and returns it to be filled. A value that is not
// a union is returned as it is.
Result<avro_value_t> SetNonNullBranch(avro_value_t* value);
// Appends an element to an array value and returns it to be filled.
Result<avro_value_t> AppendElement(avro_value_t* array);

Status WriteBool(avro_value_t* value, bool v);
Status WriteInt(avro_value_t* value, int32_t v);
Status WriteLong(avro_value_t* value, int64_t v);
Status WriteFloat(avro_value_t* value, float v);
Status WriteDouble(avro_value_t* value, double v);
Status WriteString(avro_value_t* value, std::string_view v);
Status WriteBytes(avro_value_t* value, std::string_view v);
// Fixed values must have exactly the schema's size; Returns InvalidArgument otherwise.
Status WriteFixed(avro_value_t* value, std::string_view v);

}  // namespace lakesync::avro
