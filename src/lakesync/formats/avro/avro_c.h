// Thin RAII owners for the Avro C objects this module uses (schemas, generic value classes and
// values, memory readers and writers), and the conversion of Avro C's errno + avro_strerror()
// convention into lakesync::Status. Nothing here throws; handles are move-only.
#pragma once

#include <avro.h>

#include <string_view>
#include <utility>

#include "lakesync/common/status.h"

namespace lakesync::avro {

// The error Avro C reported for its last failed call on this thread, prefixed with what we were
// doing ("encoding manifest entry 3 of s3://b/m.avro"). Returns `kind` (Corrupt for decoding,
// Unknown-as-internal for encoding) with avro_strerror()'s text.
Status AvroCError(ErrorKind kind, std::string_view what);

// Owns one reference to an avro_schema_t.
class AvroSchemaHandle {
 public:
  AvroSchemaHandle() = default;
  explicit AvroSchemaHandle(avro_schema_t schema) : schema_(schema) {}
  AvroSchemaHandle(const AvroSchemaHandle&) = delete;
  AvroSchemaHandle& operator=(const AvroSchemaHandle&) = delete;
  AvroSchemaHandle(AvroSchemaHandle&& o) noexcept : schema_(std::exchange(o.schema_, nullptr)) {}
  AvroSchemaHandle& operator=(AvroSchemaHandle&& o) noexcept {
    if (this != &o) {
      Reset();
      schema_ = std::exchange(o.schema_, nullptr);
    }
    return *this;
  }
  ~AvroSchemaHandle() { Reset(); }

  // Parses Avro schema JSON with Avro C. Returns Corrupt (with Avro C's message) if it rejects it.
  static Result<AvroSchemaHandle> FromJson(std::string_view json);

  avro_schema_t get() const { return schema_; }
  explicit operator bool() const { return schema_ != nullptr; }

 private:
  void Reset() {
    if (schema_ != nullptr) avro_schema_decref(schema_);
    schema_ = nullptr;
  }
  avro_schema_t schema_ = nullptr;
};

// Owns a generic value class (avro_value_iface_t) and one value instance of it. The value is reused
// record after record: Avro C resets it on every read, callers reset it before every write.
class AvroGenericValue {
 public:
  AvroGenericValue() = default;
  AvroGenericValue(const AvroGenericValue&) = delete;
  AvroGenericValue& operator=(const AvroGenericValue&) = delete;
  AvroGenericValue(AvroGenericValue&& o) noexcept
      : iface_(std::exchange(o.iface_, nullptr)), value_(std::exchange(o.value_, avro_value_t{nullptr, nullptr})) {}
  AvroGenericValue& operator=(AvroGenericValue&& o) noexcept {
    if (this != &o) {
      Reset();
      iface_ = std::exchange(o.iface_, nullptr);
      value_ = std::exchange(o.value_, avro_value_t{nullptr, nullptr});
    }
    return *this;
  }
  ~AvroGenericValue() { Reset(); }

  // Creates the class and an empty value for `schema`. Returns an internal error if Avro C cannot.
  static Result<AvroGenericValue> Make(avro_schema_t schema);

  avro_value_t* get() { return &value_; }
  const avro_value_t* get() const { return &value_; }

 private:
  void Reset();
  avro_value_iface_t* iface_ = nullptr;
  avro_value_t value_{nullptr, nullptr};
};

// Owns an avro_reader_t over caller-owned memory (the bytes must outlive it).
class AvroMemoryReader {
 public:
  AvroMemoryReader() = default;
  AvroMemoryReader(const AvroMemoryReader&) = delete;
  AvroMemoryReader& operator=(const AvroMemoryReader&) = delete;
  AvroMemoryReader(AvroMemoryReader&& o) noexcept : reader_(std::exchange(o.reader_, nullptr)) {}
  AvroMemoryReader& operator=(AvroMemoryReader&& o) noexcept {
    if (this != &o) {
      if (reader_ != nullptr) avro_reader_free(reader_);
      reader_ = std::exchange(o.reader_, nullptr);
    }
    return *this;
  }
  ~AvroMemoryReader() {
    if (reader_ != nullptr) avro_reader_free(reader_);
  }

  static Result<AvroMemoryReader> Make();
  // Points the reader at new bytes, from their start.
  void SetSource(std::string_view bytes) {
    avro_reader_memory_set_source(reader_, bytes.data(), static_cast<int64_t>(bytes.size()));
  }
  avro_reader_t get() const { return reader_; }

 private:
  avro_reader_t reader_ = nullptr;
};

// Owns an avro_writer_t over caller-owned memory of a fixed size.
class AvroMemoryWriter {
 public:
  AvroMemoryWriter() = default;
  AvroMemoryWriter(const AvroMemoryWriter&) = delete;
  AvroMemoryWriter& operator=(const AvroMemoryWriter&) = delete;
  AvroMemoryWriter(AvroMemoryWriter&& o) noexcept : writer_(std::exchange(o.writer_, nullptr)) {}
  AvroMemoryWriter& operator=(AvroMemoryWriter&& o) noexcept {
    if (this != &o) {
      if (writer_ != nullptr) avro_writer_free(writer_);
      writer_ = std::exchange(o.writer_, nullptr);
    }
    return *this;
  }
  ~AvroMemoryWriter() {
    if (writer_ != nullptr) avro_writer_free(writer_);
  }

  static Result<AvroMemoryWriter> Make();
  void SetDest(char* buffer, size_t size) {
    avro_writer_memory_set_dest(writer_, buffer, static_cast<int64_t>(size));
  }
  int64_t Tell() const { return avro_writer_tell(writer_); }
  avro_writer_t get() const { return writer_; }

 private:
  avro_writer_t writer_ = nullptr;
};

}  // namespace lakesync::avro
