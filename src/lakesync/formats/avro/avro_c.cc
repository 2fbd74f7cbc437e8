#include "lakesync/formats/avro/avro_c.h"

#include <string>

namespace lakesync::avro {

Status AvroCError(ErrorKind kind, std::string_view what) {
  const char* detail = avro_strerror();
  std::string message(what);
  if (detail != nullptr && *detail != '\0') {
    message += ": ";
    message += detail;
  }
  return MakeError(kind, std::move(message));
}

Result<AvroSchemaHandle> AvroSchemaHandle::FromJson(std::string_view json) {
  avro_schema_t schema = nullptr;
  if (avro_schema_from_json_length(json.data(), json.size(), &schema) != 0 || schema == nullptr) {
    return AvroCError(ErrorKind::kCorrupt, "Avro C rejected the schema");
  }
  return AvroSchemaHandle(schema);
}

Result<AvroGenericValue> AvroGenericValue::Make(avro_schema_t schema) {
  AvroGenericValue out;
  out.iface_ = avro_generic_class_from_schema(schema);
  if (out.iface_ == nullptr) return AvroCError(ErrorKind::kUnknown, "cannot create an Avro value class");
  if (avro_generic_value_new(out.iface_, &out.value_) != 0) {
    out.value_ = avro_value_t{nullptr, nullptr};
    return AvroCError(ErrorKind::kUnknown, "cannot create an Avro value");
  }
  return out;
}

void AvroGenericValue::Reset() {
  if (value_.iface != nullptr) avro_value_decref(&value_);
  value_ = avro_value_t{nullptr, nullptr};
  if (iface_ != nullptr) avro_value_iface_decref(iface_);
  iface_ = nullptr;
}

Result<AvroMemoryReader> AvroMemoryReader::Make() {
  AvroMemoryReader out;
  // A one-byte dummy source: Avro C keeps the pointer, SetSource replaces it before any read.
  static const char kEmpty[1] = {0};
  out.reader_ = avro_reader_memory(kEmpty, 0);
  if (out.reader_ == nullptr) return AvroCError(ErrorKind::kUnknown, "cannot create an Avro memory reader");
  return out;
}

Result<AvroMemoryWriter> AvroMemoryWriter::Make() {
  AvroMemoryWriter out;
  static char dummy[1];
  out.writer_ = avro_writer_memory(dummy, 0);
  if (out.writer_ == nullptr) return AvroCError(ErrorKind::kUnknown, "cannot create an Avro memory writer");
  return out;
}

}  // namespace lakesync::avro
