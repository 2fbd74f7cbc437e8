#include "lakesync/formats/puffin/puffin_reader.h"

#include <arrow/io/memory.h>

#include "lakesync/formats/puffin/bytes_internal.h"
#include "lakesync/formats/puffin/compression_internal.h"

namespace lakesync::puffin {
namespace {

// Bytes at the very end of the file: payload size (4), flags (4), magic (4).
constexpr int64_t kFooterTrailerSize = 12;
// Without a known footer size, the first read takes this much of the file's tail, which holds the
// whole footer of any file with a few dozen blobs.
constexpr int64_t kSpeculativeTailSize = 16 * 1024;

Status CheckMagic(std::string_view found, int64_t offset, std::string_view which) {
  if (found != kPuffinMagic) {
    return Corrupt("Puffin {} magic mismatch at offset {}: expected {} (\"PFA1\"), found {}", which, offset,
                   internal::HexBytes(kPuffinMagic), internal::HexBytes(found));
  }
  return Status::OK();
}

std::string BlobName(size_t index, const BlobMetadata& blob) {
  return fmt::format("blob {} ({})", index, blob.type);
}

}  // namespace

Status CheckBlobRange(const BlobMetadata& blob, int64_t footer_start, int64_t file_size, const std::string& name) {
  if (blob.offset < 0 || blob.length < 0) {
    return Corrupt("{} has a negative offset or length ({}, {})", name, blob.offset, blob.length);
  }
  if (blob.offset < kPuffinMagicSize) {
    return Corrupt("{} starts at offset {}, inside the {}-byte header magic", name, blob.offset, kPuffinMagicSize);
  }
  // offset <= file_size is checked before the sum so the addition cannot overflow.
  if (blob.offset > file_size || blob.length > file_size - blob.offset) {
    return Corrupt("{} extends past end of file: offset {} + length {} > file size {}", name, blob.offset,
                   blob.length, file_size);
  }
  if (blob.offset + blob.length > footer_start) {
    return Corrupt("{} overlaps the footer: offset {} + length {} > footer start {}", name, blob.offset, blob.length,
                   footer_start);
  }
  return Status::OK();
}

Result<std::unique_ptr<PuffinReader>> PuffinReader::Open(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                         PuffinReaderOptions options) {
  if (file == nullptr) return InvalidArgument("PuffinReader needs a file, got null");
  std::unique_ptr<PuffinReader> reader(new PuffinReader(std::move(file), options));
  ARROW_RETURN_NOT_OK(reader->ReadFooter());
  return reader;
}

Result<std::unique_ptr<PuffinReader>> PuffinReader::Open(std::shared_ptr<arrow::Buffer> whole_file,
                                                         PuffinReaderOptions options) {
  if (whole_file == nullptr) return InvalidArgument("PuffinReader needs a buffer, got null");
  if (!options.file_size.has_value()) options.file_size = whole_file->size();
  return Open(std::make_shared<arrow::io::BufferReader>(std::move(whole_file)), options);
}

Result<std::unique_ptr<PuffinReader>> PuffinReader::OpenBytes(std::string whole_file, PuffinReaderOptions options) {
  return Open(arrow::Buffer::FromString(std::move(whole_file)), options);
}

Status PuffinReader::ReadFooter() {
  if (options_.file_size.has_value()) {
    file_size_ = *options_.file_size;
  } else {
    ARROW_ASSIGN_OR_RAISE(file_size_, file_->GetSize());
  }
  const int64_t min_size = kPuffinMagicSize + kPuffinFooterOverhead;
  if (file_size_ < min_size) {
    return Corrupt("Puffin file is {} bytes, smaller than the {} bytes of header magic and empty footer", file_size_,
                   min_size);
  }

  // Read the tail: the known footer, or a guess that usually covers it.
  int64_t tail_size = std::min(file_size_, kSpeculativeTailSize);
  if (options_.footer_size.has_value()) {
    if (*options_.footer_size < kPuffinFooterOverhead || *options_.footer_size > file_size_ - kPuffinMagicSize) {
      return Corrupt("Puffin footer size {} is impossible for a {}-byte file", *options_.footer_size, file_size_);
    }
    tail_size = *options_.footer_size;
  }
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> tail, file_->ReadAt(file_size_ - tail_size, tail_size));
  if (tail->size() != tail_size) {
    return IOError("short read of the Puffin footer: wanted {} bytes at offset {}, got {}", tail_size,
                   file_size_ - tail_size, tail->size());
  }
  std::string_view tail_view = std::string_view(*tail);
  const std::string_view trailer = tail_view.substr(tail_view.size() - kFooterTrailerSize);
  ARROW_RETURN_NOT_OK(CheckMagic(trailer.substr(8, 4), file_size_ - kPuffinMagicSize, "footer"));

  const uint8_t* flags = internal::Bytes(trailer) + 4;
  if ((flags[0] & ~kPuffinFooterPayloadCompressed) != 0 || flags[1] != 0 || flags[2] != 0 || flags[3] != 0) {
    return Unsupported("Puffin footer flags {} at offset {} use reserved bits", internal::HexBytes(trailer.substr(4, 4)),
                       file_size_ - 8);
  }
  footer_compressed_ = (flags[0] & kPuffinFooterPayloadCompressed) != 0;

  const int32_t payload_size = static_cast<int32_t>(internal::LoadU32LE(internal::Bytes(trailer)));
  if (payload_size < 0) {
    return Corrupt("Puffin footer payload size at offset {} is negative ({})", file_size_ - kFooterTrailerSize,
                   payload_size);
  }
  footer_size_ = int64_t{payload_size} + kPuffinFooterOverhead;
  if (footer_size_ > file_size_ - kPuffinMagicSize) {
    return Corrupt("Puffin footer payload size {} (footer {} bytes) does not fit a {}-byte file", payload_size,
                   footer_size_, file_size_);
  }
  if (options_.footer_size.has_value() && *options_.footer_size != footer_size_) {
    return Corrupt("Puffin footer size given as {} bytes, but the file records a {}-byte payload (footer {} bytes)",
                   *options_.footer_size, payload_size, footer_size_);
  }
  if (payload_size > options_.max_footer_payload_size) {
    return InvalidArgument("Puffin footer payload of {} bytes is above max_footer_payload_size ({})", payload_size,
                           options_.max_footer_payload_size);
  }
  if (footer_size_ > tail_size) {
    ARROW_ASSIGN_OR_RAISE(tail, file_->ReadAt(file_size_ - footer_size_, footer_size_));
    if (tail->size() != footer_size_) {
      return IOError("short read of the Puffin footer: wanted {} bytes at offset {}, got {}", footer_size_,
                     file_size_ - footer_size_, tail->size());
    }
    tail_view = std::string_view(*tail);
  }
  const std::string_view footer = tail_view.substr(tail_view.size() - footer_size_);
  const int64_t footer_start = file_size_ - footer_size_;
  ARROW_RETURN_NOT_OK(CheckMagic(footer.substr(0, 4), footer_start, "footer"));

  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> head, file_->ReadAt(0, kPuffinMagicSize));
  ARROW_RETURN_NOT_OK(CheckMagic(std::string_view(*head), 0, "header"));

  std::string_view payload = footer.substr(kPuffinMagicSize, payload_size);
  std::shared_ptr<arrow::Buffer> decompressed;
  if (footer_compressed_) {
    LS_ASSIGN_OR_RAISE_CTX(decompressed,
                           internal::DecompressFrame(PuffinCodec::kLz4, payload, options_.max_footer_payload_size),
                           "decompressing the Puffin footer payload");
    payload = std::string_view(*decompressed);
  }
  ARROW_ASSIGN_OR_RAISE(metadata_, ParseFileMetadata(payload));
  for (size_t i = 0; i < metadata_.blobs.size(); ++i) {
    ARROW_RETURN_NOT_OK(CheckBlobRange(metadata_.blobs[i], footer_start, file_size_, BlobName(i, metadata_.blobs[i])));
  }
  return Status::OK();
}

Result<std::shared_ptr<arrow::Buffer>> PuffinReader::ReadBlob(size_t index) const {
  if (index >= metadata_.blobs.size()) {
    return InvalidArgument("Puffin blob index {} out of range: the file has {} blobs", index, metadata_.blobs.size());
  }
  return ReadBlobImpl(metadata_.blobs[index], BlobName(index, metadata_.blobs[index]));
}

Result<std::shared_ptr<arrow::Buffer>> PuffinReader::ReadBlob(const BlobMetadata& blob) const {
  const std::string name = fmt::format("blob at offset {} ({})", blob.offset, blob.type);
  ARROW_RETURN_NOT_OK(CheckBlobRange(blob, file_size_ - footer_size_, file_size_, name));
  return ReadBlobImpl(blob, name);
}

Result<std::shared_ptr<arrow::Buffer>> PuffinReader::ReadBlobImpl(const BlobMetadata& blob,
                                                                  const std::string& name) const {
  PuffinCodec codec = PuffinCodec::kNone;
  if (blob.compression_codec.has_value()) {
    LS_ASSIGN_OR_RAISE_CTX(codec, ParsePuffinCodec(*blob.compression_codec), "reading Puffin {}", name);
  }
  if (blob.length > options_.max_blob_size) {
    return InvalidArgument("Puffin {} is {} bytes, above max_blob_size ({})", name, blob.length,
                           options_.max_blob_size);
  }
  LS_ASSIGN_OR_RAISE_CTX(std::shared_ptr<arrow::Buffer> stored, file_->ReadAt(blob.offset, blob.length),
                         "reading Puffin {}", name);
  if (stored->size() != blob.length) {
    return IOError("short read of Puffin {}: wanted {} bytes at offset {}, got {}", name, blob.length, blob.offset,
                   stored->size());
  }
  if (codec == PuffinCodec::kNone) return stored;
  LS_ASSIGN_OR_RAISE_CTX(std::shared_ptr<arrow::Buffer> plain,
                         internal::DecompressFrame(codec, std::string_view(*stored), options_.max_blob_size),
                         "decompressing Puffin {}", name);
  return plain;
}

}  // namespace lakesync::puffin
