#include "lakesync/formats/avro/avro_file_writer.h"

#include <random>
#include <set>

#include "lakesync/formats/avro/avro_container_internal.h"

namespace lakesync::avro {

using internal::AppendAvroBytes;
using internal::AppendVarLong;

Result<std::unique_ptr<AvroFileWriter>> AvroFileWriter::Make(std::string schema_json,
                                                             std::vector<std::pair<std::string, std::string>> metadata,
                                                             AvroFileWriterOptions options) {
  std::unique_ptr<AvroFileWriter> writer(new AvroFileWriter());
  writer->options_ = std::move(options);
  LS_ASSIGN_OR_RAISE_CTX(writer->schema_, ParseAvroSchema(schema_json), "writer schema of {}", writer->options_.name);
  if (writer->schema_.root->type != AvroType::kRecord) {
    return InvalidArgument("the schema of {} must be a record", writer->options_.name);
  }
  if (writer->options_.block_size <= 0) return InvalidArgument("Avro block size must be positive");
  ARROW_ASSIGN_OR_RAISE(writer->record_, AvroGenericValue::Make(writer->schema_.avro_c.get()));
  ARROW_ASSIGN_OR_RAISE(writer->encoder_, AvroMemoryWriter::Make());

  std::set<std::string> seen;
  for (const auto& [key, value] : metadata) {
    if (key.rfind("avro.", 0) == 0) return InvalidArgument("file metadata key '{}' is reserved for Avro", key);
    if (!seen.insert(key).second) return InvalidArgument("file metadata key '{}' is given twice", key);
  }

  std::random_device random;
  std::mt19937_64 generator((static_cast<uint64_t>(random()) << 32) ^ random());
  for (size_t i = 0; i < internal::kSyncSize; ++i) writer->sync_.push_back(static_cast<char>(generator() & 0xFF));

  std::string& out = writer->out_;
  out.append(internal::kAvroMagic);
  AppendVarLong(&out, static_cast<int64_t>(metadata.size() + 2));
  AppendAvroBytes(&out, "avro.schema");
  AppendAvroBytes(&out, writer->schema_.json);
  AppendAvroBytes(&out, "avro.codec");
  AppendAvroBytes(&out, AvroCodecName(writer->options_.codec));
  for (const auto& [key, value] : metadata) {
    AppendAvroBytes(&out, key);
    AppendAvroBytes(&out, value);
  }
  AppendVarLong(&out, 0);
  out.append(writer->sync_);
  return writer;
}

avro_value_t* AvroFileWriter::NewRecord() {
  avro_value_reset(record_.get());
  return record_.get();
}

Status AvroFileWriter::Append() {
  if (finished_) return InvalidArgument("{} is already finished", options_.name);
  size_t size = 0;
  if (avro_value_sizeof(record_.get(), &size) != 0) {
    return AvroCError(ErrorKind::kInvalidArgument, fmt::format("encoding record {} of {}", records_, options_.name));
  }
  if (scratch_.size() < size) scratch_.resize(size);
  encoder_.SetDest(scratch_.data(), size);
  if (avro_value_write(encoder_.get(), record_.get()) != 0) {
    return AvroCError(ErrorKind::kInvalidArgument, fmt::format("encoding record {} of {}", records_, options_.name));
  }
  block_.append(scratch_.data(), static_cast<size_t>(encoder_.Tell()));
  ++block_records_;
  ++records_;
  if (static_cast<int64_t>(block_.size()) >= options_.block_size) return FlushBlock();
  return Status::OK();
}

Status AvroFileWriter::FlushBlock() {
  if (block_records_ == 0) return Status::OK();
  LS_ASSIGN_OR_RAISE_CTX(std::string compressed, CompressAvroBlock(options_.codec, block_), "writing {}",
                         options_.name);
  AppendVarLong(&out_, block_records_);
  AppendVarLong(&out_, static_cast<int64_t>(compressed.size()));
  out_ += compressed;
  out_ += sync_;
  block_.clear();
  block_records_ = 0;
  return Status::OK();
}

Result<std::string> AvroFileWriter::Finish() {
  if (finished_) return InvalidArgument("{} is already finished", options_.name);
  RETURN_NOT_OK(FlushBlock());
  finished_ = true;
  return std::move(out_);
}

}  // namespace lakesync::avro
