// Reads Avro object container files from memory, one record at a time.
//
// The framing (magic, metadata map, sync markers, blocks) is parsed here with bounds checks, because
// Avro C's container reader needs a FILE* and does not expose the file metadata Iceberg relies on.
// Avro C decodes each record with the writer schema into a generic value that the caller walks
// (see avro_value.h); the schema tree tells the caller which field is which.
//
// Before Avro C sees a record, a quick pass over its bytes checks it against the writer schema:
// lengths within the block, union and enum indexes in range, ints in range. Avro C 1.11 trusts
// lengths it reads (a negative or huge bytes length becomes a malloc of that size), so it is only
// ever handed a record known to be well formed, and only that record's bytes.
//
// Every malformed input — bad magic, truncated or oversized blocks, a sync marker that does not
// match, records that do not decode — is reported as Corrupt naming the file.
#pragma once

#include <avro.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "lakesync/common/status.h"
#include "lakesync/formats/avro/avro_c.h"
#include "lakesync/formats/avro/avro_codec.h"
#include "lakesync/formats/avro/avro_schema.h"

namespace lakesync::avro {

struct AvroFileReaderOptions {
  // Largest decompressed block accepted; protects against blocks that expand without bound.
  int64_t max_block_size = int64_t{1} << 30;
};

class AvroFileReader {
 public:
  // Parses the header. `bytes` must outlive the reader; `name` (a path) is used in error messages.
  // Returns Corrupt for a malformed header or schema, Unsupported for an unknown codec or a schema
  // ParseAvroSchema refuses.
  static Result<std::unique_ptr<AvroFileReader>> Open(std::string_view bytes, std::string name,
                                                      AvroFileReaderOptions options = {});

  const std::string& name() const { return name_; }
  // All header metadata, including avro.schema and avro.codec.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::optional<std::string> FindMetadata(const std::string& key) const;
  // The writer schema.
  const AvroNode& schema() const { return *schema_.root; }
  const std::string& schema_json() const { return schema_.json; }
  AvroCodec codec() const { return codec_; }

  // Decodes the next record. Returns nullptr after the last one; the value is overwritten by the
  // next call.
  Result<const avro_value_t*> Next();
  // Records returned so far.
  int64_t records_read() const { return records_read_; }

 private:
  AvroFileReader() = default;
  // Loads the next non-empty block; false at the end of the file.
  Result<bool> LoadBlock();

  std::string_view bytes_;
  std::string name_;
  AvroFileReaderOptions options_;
  std::map<std::string, std::string> metadata_;
  AvroSchema schema_;
  AvroCodec codec_ = AvroCodec::kNull;
  std::string sync_;
  size_t position_ = 0;          // start of the next block in bytes_
  size_t block_start_ = 0;       // of the current block, for messages
  std::string block_storage_;    // the decompressed current block (unused for the null codec)
  std::string_view block_;       // the current block's records
  size_t block_position_ = 0;    // of the next record in block_
  int64_t block_remaining_ = 0;  // records left in the current block
  AvroMemoryReader decoder_;
  AvroGenericValue record_;
  int64_t records_read_ = 0;
};

}  // namespace lakesync::avro
