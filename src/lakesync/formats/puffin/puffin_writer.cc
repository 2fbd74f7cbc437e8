#include "lakesync/formats/puffin/puffin_writer.h"

#include "lakesync/formats/puffin/bytes_internal.h"
#include "lakesync/formats/puffin/compression_internal.h"
#include "lakesync/formats/puffin/deletion_vector.h"

namespace lakesync::puffin {

Result<std::unique_ptr<PuffinWriter>> PuffinWriter::Make(std::shared_ptr<arrow::io::OutputStream> sink,
                                                         PuffinWriterOptions options) {
  if (sink == nullptr) return InvalidArgument("PuffinWriter needs an output stream, got null");
  if (options.lakesync_version.has_value() && options.properties.count(std::string(kCreatedByProperty)) > 0) {
    return InvalidArgument("Puffin writer options set '{}' twice: through lakesync_version and properties",
                           kCreatedByProperty);
  }
  // Offsets are absolute, so a stream that already holds bytes would make every offset wrong. Streams
  // that cannot tell their position are trusted.
  if (auto at = sink->Tell(); at.ok() && *at != 0) {
    return InvalidArgument("Puffin output stream is at offset {}, not at the start of a new file", *at);
  }
  return std::unique_ptr<PuffinWriter>(new PuffinWriter(std::move(sink), std::move(options)));
}

Status PuffinWriter::Write(std::string_view bytes) {
  ARROW_RETURN_NOT_OK(sink_->Write(bytes.data(), static_cast<int64_t>(bytes.size())));
  position_ += static_cast<int64_t>(bytes.size());
  return Status::OK();
}

Status PuffinWriter::WriteHeaderIfNeeded() {
  if (position_ == 0) LS_RETURN_NOT_OK_CTX(Write(kPuffinMagic), "writing the Puffin header magic");
  return Status::OK();
}

Result<BlobMetadata> PuffinWriter::AddBlob(const PuffinBlob& blob, std::string_view data) {
  if (finished_) return InvalidArgument("cannot add a {} blob: the Puffin writer is already finished", blob.type);
  if (blob.type.empty()) return InvalidArgument("Puffin blob {} has an empty type", blobs_.size());
  if (blob.type == kDeletionVectorBlobType && blob.compression != PuffinCodec::kNone) {
    return InvalidArgument("{} blobs must not be compressed (asked for {})", kDeletionVectorBlobType,
                           PuffinCodecName(blob.compression));
  }
  ARROW_RETURN_NOT_OK(WriteHeaderIfNeeded());

  std::string compressed;
  std::string_view stored = data;
  if (blob.compression != PuffinCodec::kNone) {
    LS_ASSIGN_OR_RAISE_CTX(compressed, internal::CompressFrame(blob.compression, data),
                           "compressing Puffin blob {} ({})", blobs_.size(), blob.type);
    stored = compressed;
  }
  BlobMetadata metadata;
  metadata.type = blob.type;
  metadata.fields = blob.fields;
  metadata.snapshot_id = blob.snapshot_id;
  metadata.sequence_number = blob.sequence_number;
  metadata.offset = position_;
  metadata.length = static_cast<int64_t>(stored.size());
  if (blob.compression != PuffinCodec::kNone) metadata.compression_codec = std::string(PuffinCodecName(blob.compression));
  metadata.properties = blob.properties;
  LS_RETURN_NOT_OK_CTX(Write(stored), "writing Puffin blob {} ({}) at offset {}", blobs_.size(), blob.type,
                       metadata.offset);
  blobs_.push_back(metadata);
  return metadata;
}

Result<PuffinFileInfo> PuffinWriter::Finish() {
  if (finished_) return InvalidArgument("the Puffin writer is already finished");
  ARROW_RETURN_NOT_OK(WriteHeaderIfNeeded());

  FileMetadata metadata;
  metadata.blobs = blobs_;
  metadata.properties = options_.properties;
  if (options_.lakesync_version.has_value()) {
    metadata.properties[std::string(kCreatedByProperty)] = "lakesync " + *options_.lakesync_version;
  }
  ARROW_ASSIGN_OR_RAISE(std::string payload, SerializeFileMetadata(metadata));
  uint8_t flags0 = 0;
  if (options_.compress_footer) {
    LS_ASSIGN_OR_RAISE_CTX(payload, internal::CompressFrame(PuffinCodec::kLz4, payload),
                           "compressing the Puffin footer");
    flags0 |= kPuffinFooterPayloadCompressed;
  }
  if (payload.size() > static_cast<size_t>(INT32_MAX)) {
    return InvalidArgument("Puffin footer payload of {} bytes does not fit the 32-bit size field", payload.size());
  }
  std::string footer;
  footer.reserve(payload.size() + kPuffinFooterOverhead);
  footer.append(kPuffinMagic);
  footer.append(payload);
  internal::AppendU32LE(&footer, static_cast<uint32_t>(payload.size()));
  footer.push_back(static_cast<char>(flags0));
  footer.append(3, '\0');
  footer.append(kPuffinMagic);
  LS_RETURN_NOT_OK_CTX(Write(footer), "writing the Puffin footer at offset {}", position_);
  finished_ = true;

  PuffinFileInfo info;
  info.blobs = blobs_;
  info.file_size_in_bytes = position_;
  info.footer_size_in_bytes = static_cast<int64_t>(footer.size());
  return info;
}

}  // namespace lakesync::puffin
