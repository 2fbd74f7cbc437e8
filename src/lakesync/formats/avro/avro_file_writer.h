// Writes Avro object container files (Avro spec "Object Container Files") to memory.
//
// Avro C's own container writer (avro_file_writer_*) can only write to a FILE* and has no way to add
// file metadata beyond avro.schema and avro.codec, while Iceberg keeps the table schema, partition
// spec and format version in exactly that metadata. So the container framing — the "Obj\x01" magic,
// the metadata map, the sync marker and the blocks — is written here, and Avro C only encodes the
// records themselves (avro_value_write into a memory writer).
#pragma once

#include <avro.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/formats/avro/avro_c.h"
#include "lakesync/formats/avro/avro_codec.h"
#include "lakesync/formats/avro/avro_schema.h"

namespace lakesync::avro {

struct AvroFileWriterOptions {
  AvroCodec codec = AvroCodec::kDeflate;
  // Uncompressed bytes collected before a block is compressed and written.
  int64_t block_size = 256 * 1024;
  // What the file will be called, for error messages.
  std::string name;
};

class AvroFileWriter {
 public:
  // `schema_json` is stored verbatim as avro.schema (so it keeps Iceberg's field ids); `metadata`
  // follows avro.schema and avro.codec in the header, in the given order. Returns Corrupt or
  // Unsupported from ParseAvroSchema, and InvalidArgument for metadata keys starting with "avro.",
  // repeated keys, or a root schema that is not a record.
  static Result<std::unique_ptr<AvroFileWriter>> Make(std::string schema_json,
                                                      std::vector<std::pair<std::string, std::string>> metadata,
                                                      AvroFileWriterOptions options = {});

  // The parsed writer schema, for finding the index of each field to fill.
  const AvroNode& schema() const { return *schema_.root; }

  // An empty record of the writer schema to fill before the next Append.
  avro_value_t* NewRecord();
  // Encodes the record handed out by NewRecord. Returns InvalidArgument naming the record number
  // when it is incomplete (e.g. a union without a selected branch).
  Status Append();
  int64_t records_written() const { return records_; }

  // Flushes the last block and returns the whole file. The writer cannot be used afterwards.
  Result<std::string> Finish();

 private:
  AvroFileWriter() = default;
  Status FlushBlock();

  AvroFileWriterOptions options_;
  AvroSchema schema_;
  AvroGenericValue record_;
  AvroMemoryWriter encoder_;
  std::string scratch_;
  std::string out_;
  std::string block_;
  int64_t block_records_ = 0;
  int64_t records_ = 0;
  std::string sync_;
  bool finished_ = false;
};

}  // namespace lakesync::avro
