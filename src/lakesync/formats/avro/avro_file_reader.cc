#include "lakesync/formats/avro/avro_file_reader.h"

#include "lakesync/formats/avro/avro_container_internal.h"

namespace lakesync::avro {

using internal::ByteCursor;

namespace {

// Walks one datum of `node` in the binary encoding, checking what Avro C would trust. Returns a
// reason on failure (the caller names the file and record).
Status CheckDatum(const AvroNode& node, ByteCursor* in) {
  auto varint = [&](const char* what) -> Result<int64_t> {
    auto v = in->ReadVarLong();
    if (!v) return Corrupt("truncated or overlong {}", what);
    return *v;
  };
  auto skip = [&](size_t n, const char* what) -> Status {
    if (!in->ReadBytes(n)) return Corrupt("{} runs past the end of the block", what);
    return Status::OK();
  };
  switch (node.type) {
    case AvroType::kNull: return Status::OK();
    case AvroType::kBoolean: return skip(1, "a boolean");
    case AvroType::kInt: {
      ARROW_ASSIGN_OR_RAISE(int64_t v, varint("int"));
      if (v < INT32_MIN || v > INT32_MAX) return Corrupt("int value {} is out of range", v);
      return Status::OK();
    }
    case AvroType::kLong: return varint("long").status();
    case AvroType::kFloat: return skip(4, "a float");
    case AvroType::kDouble: return skip(8, "a double");
    case AvroType::kBytes:
    case AvroType::kString: {
      ARROW_ASSIGN_OR_RAISE(int64_t length, varint("length"));
      if (length < 0) return Corrupt("negative length {}", length);
      if (static_cast<uint64_t>(length) > in->remaining()) {
        return Corrupt("a length of {} runs past the end of the block", length);
      }
      return skip(static_cast<size_t>(length), "a string");
    }
    case AvroType::kFixed: return skip(static_cast<size_t>(node.size), "a fixed value");
    case AvroType::kEnum: {
      ARROW_ASSIGN_OR_RAISE(int64_t index, varint("enum index"));
      if (index < 0 || static_cast<uint64_t>(index) >= node.symbol_count) {
        return Corrupt("enum index {} is out of range", index);
      }
      return Status::OK();
    }
    case AvroType::kUnion: {
      ARROW_ASSIGN_OR_RAISE(int64_t index, varint("union index"));
      if (index < 0 || static_cast<uint64_t>(index) >= node.branches.size()) {
        return Corrupt("union branch {} is out of range", index);
      }
      return CheckDatum(*node.branches[static_cast<size_t>(index)], in);
    }
    case AvroType::kRecord:
      for (const auto& field : node.fields) RETURN_NOT_OK(CheckDatum(*field.type, in));
      return Status::OK();
    case AvroType::kArray:
    case AvroType::kMap: {
      while (true) {
        ARROW_ASSIGN_OR_RAISE(int64_t count, varint("block count"));
        if (count == 0) return Status::OK();
        if (count < 0) {
          if (count == INT64_MIN) return Corrupt("invalid block count");
          count = -count;
          ARROW_ASSIGN_OR_RAISE(int64_t bytes, varint("block size"));
          if (bytes < 0) return Corrupt("negative block size {}", bytes);
        }
        // Every item takes at least a byte (ParseAvroSchema refuses arrays of empty items).
        if (static_cast<uint64_t>(count) > in->remaining()) {
          return Corrupt("{} items cannot fit in the rest of the block", count);
        }
        for (int64_t i = 0; i < count; ++i) {
          if (node.type == AvroType::kMap) {
            ARROW_ASSIGN_OR_RAISE(int64_t length, varint("map key length"));
            if (length < 0 || static_cast<uint64_t>(length) > in->remaining()) {
              return Corrupt("invalid map key length {}", length);
            }
            RETURN_NOT_OK(skip(static_cast<size_t>(length), "a map key"));
          }
          RETURN_NOT_OK(CheckDatum(*node.items, in));
        }
      }
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<AvroFileReader>> AvroFileReader::Open(std::string_view bytes, std::string name,
                                                             AvroFileReaderOptions options) {
  std::unique_ptr<AvroFileReader> reader(new AvroFileReader());
  reader->bytes_ = bytes;
  reader->name_ = std::move(name);
  reader->options_ = options;
  const std::string& file = reader->name_;

  ByteCursor cursor(bytes);
  auto magic = cursor.ReadBytes(internal::kAvroMagic.size());
  if (!magic || *magic != internal::kAvroMagic) return Corrupt("{} is not an Avro file: bad magic", file);

  // The metadata map: blocks of entries, a negative count carrying the block's byte size.
  while (true) {
    auto count = cursor.ReadVarLong();
    if (!count) return Corrupt("{}: truncated Avro header", file);
    if (*count == 0) break;
    if (*count < 0) {
      if (*count == INT64_MIN) return Corrupt("{}: malformed Avro header", file);
      *count = -*count;
      if (!cursor.ReadVarLong()) return Corrupt("{}: truncated Avro header", file);
    }
    // Each entry takes at least two bytes (two empty strings); anything larger is corrupt.
    if (*count > static_cast<int64_t>(cursor.remaining() / 2)) return Corrupt("{}: malformed Avro header", file);
    for (int64_t i = 0; i < *count; ++i) {
      auto key = cursor.ReadLengthPrefixed();
      auto value = key ? cursor.ReadLengthPrefixed() : std::nullopt;
      if (!key || !value) return Corrupt("{}: truncated Avro header metadata", file);
      reader->metadata_[std::string(*key)] = std::string(*value);
    }
  }
  auto sync = cursor.ReadBytes(internal::kSyncSize);
  if (!sync) return Corrupt("{}: truncated Avro header (no sync marker)", file);
  reader->sync_ = std::string(*sync);
  reader->position_ = cursor.position();

  auto codec_it = reader->metadata_.find("avro.codec");
  if (codec_it != reader->metadata_.end() && !codec_it->second.empty()) {
    LS_ASSIGN_OR_RAISE_CTX(reader->codec_, ParseAvroCodec(codec_it->second), "reading {}", file);
  }
  auto schema_it = reader->metadata_.find("avro.schema");
  if (schema_it == reader->metadata_.end()) return Corrupt("{}: the Avro header has no avro.schema", file);
  LS_ASSIGN_OR_RAISE_CTX(reader->schema_, ParseAvroSchema(schema_it->second), "writer schema of {}", file);
  if (reader->schema_.root->min_encoded_size == 0) {
    // A block header could then claim any number of records without holding any bytes.
    return Unsupported("{}: records that encode to zero bytes are not supported", file);
  }
  ARROW_ASSIGN_OR_RAISE(reader->record_, AvroGenericValue::Make(reader->schema_.avro_c.get()));
  ARROW_ASSIGN_OR_RAISE(reader->decoder_, AvroMemoryReader::Make());
  return reader;
}

std::optional<std::string> AvroFileReader::FindMetadata(const std::string& key) const {
  auto it = metadata_.find(key);
  if (it == metadata_.end()) return std::nullopt;
  return it->second;
}

Result<bool> AvroFileReader::LoadBlock() {
  while (position_ < bytes_.size()) {
    block_start_ = position_;
    ByteCursor cursor(bytes_.substr(position_));
    auto count = cursor.ReadVarLong();
    auto size = count ? cursor.ReadVarLong() : std::nullopt;
    if (!count || !size) return Corrupt("{}: truncated block header at offset {}", name_, block_start_);
    if (*count < 0 || *size < 0) return Corrupt("{}: negative block count or size at offset {}", name_, block_start_);
    auto data = cursor.ReadBytes(static_cast<size_t>(*size));
    if (!data) {
      return Corrupt("{}: block at offset {} is truncated", name_, block_start_);
    }
    auto sync = cursor.ReadBytes(internal::kSyncSize);
    if (!sync) return Corrupt("{}: block at offset {} is truncated (no sync marker)", name_, block_start_);
    if (*sync != sync_) return Corrupt("{}: sync marker mismatch after the block at offset {}", name_, block_start_);
    position_ += cursor.position();
    if (*count == 0) continue;

    std::string_view block;
    if (codec_ == AvroCodec::kNull) {
      block = *data;
    } else {
      LS_ASSIGN_OR_RAISE_CTX(block_storage_, DecompressAvroBlock(codec_, *data, options_.max_block_size),
                             "{}: block at offset {}", name_, block_start_);
      block = block_storage_;
    }
    // Each record takes at least min_encoded_size bytes, so the count is bounded by the block size.
    if (*count > static_cast<int64_t>(block.size()) / schema_.root->min_encoded_size) {
      return Corrupt("{}: block at offset {} claims {} records in {} bytes", name_, block_start_, *count, block.size());
    }
    block_ = block;
    block_position_ = 0;
    block_remaining_ = *count;
    return true;
  }
  return false;
}

Result<const avro_value_t*> AvroFileReader::Next() {
  if (block_remaining_ == 0) {
    ARROW_ASSIGN_OR_RAISE(bool loaded, LoadBlock());
    if (!loaded) return nullptr;
  }
  ByteCursor cursor(block_.substr(block_position_));
  Status well_formed = CheckDatum(*schema_.root, &cursor);
  if (!well_formed.ok()) {
    block_remaining_ = 0;
    position_ = bytes_.size();
    return Corrupt("{}: record {} (block at offset {}) is malformed: {}", name_, records_read_, block_start_,
                   well_formed.message());
  }
  decoder_.SetSource(block_.substr(block_position_, cursor.position()));
  block_position_ += cursor.position();
  if (block_remaining_ == 1 && block_position_ != block_.size()) {
    block_remaining_ = 0;
    position_ = bytes_.size();
    return Corrupt("{}: block at offset {} has {} bytes after its last record", name_, block_start_,
                   block_.size() - block_position_);
  }
  if (avro_value_read(decoder_.get(), record_.get()) != 0) {
    block_remaining_ = 0;
    position_ = bytes_.size();  // stop: the rest of the file cannot be trusted
    return AvroCError(ErrorKind::kCorrupt, fmt::format("{}: cannot decode record {} (block at offset {})", name_,
                                                       records_read_, block_start_));
  }
  --block_remaining_;
  ++records_read_;
  return record_.get();
}

}  // namespace lakesync::avro
