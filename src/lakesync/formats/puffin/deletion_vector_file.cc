#include "lakesync/formats/puffin/deletion_vector_file.h"

#include <charconv>

#include "lakesync/formats/puffin/deletion_vector.h"
#include "lakesync/formats/puffin/puffin_reader.h"

namespace lakesync::puffin {
namespace {

// The largest blob the 32-bit length field allows: L = 4 + V <= INT32_MAX, content = L + 8.
constexpr int64_t kMaxDeletionVectorBlobSize = int64_t{INT32_MAX} + 8;

}  // namespace

Result<PositionBitmap> ReadDeletionVector(arrow::io::RandomAccessFile& file, int64_t content_offset,
                                          int64_t content_size_in_bytes,
                                          std::optional<int64_t> expected_cardinality) {
  if (content_offset < 0) {
    return InvalidArgument("deletion vector content_offset {} is negative", content_offset);
  }
  if (content_size_in_bytes < kMinDeletionVectorBlobSize || content_size_in_bytes > kMaxDeletionVectorBlobSize) {
    return InvalidArgument("deletion vector content_size_in_bytes {} is outside [{}, {}]", content_size_in_bytes,
                           kMinDeletionVectorBlobSize, kMaxDeletionVectorBlobSize);
  }
  LS_ASSIGN_OR_RAISE_CTX(std::shared_ptr<arrow::Buffer> blob, file.ReadAt(content_offset, content_size_in_bytes),
                         "reading deletion vector at offset {} ({} bytes)", content_offset, content_size_in_bytes);
  if (blob->size() != content_size_in_bytes) {
    return Corrupt("deletion vector at offset {} ({} bytes) extends past end of file: only {} bytes could be read",
                   content_offset, content_size_in_bytes, blob->size());
  }
  LS_ASSIGN_OR_RAISE_CTX(PositionBitmap positions, DeserializeDeletionVector(std::string_view(*blob), expected_cardinality),
                         "deletion vector at offset {} ({} bytes)", content_offset, content_size_in_bytes);
  return positions;
}

Status CheckDeletionVectorAgainstFooter(const FileMetadata& footer, std::string_view puffin_path,
                                        int64_t content_offset, int64_t content_size_in_bytes,
                                        std::string_view referenced_data_file) {
  for (const BlobMetadata& blob : footer.blobs) {
    if (blob.offset != content_offset) continue;
    if (blob.type != kDeletionVectorBlobType) {
      return Corrupt("the deletion vector for {} at offset {} of {} is a '{}' blob in the Puffin footer, not {}",
                     referenced_data_file, content_offset, puffin_path, blob.type, kDeletionVectorBlobType);
    }
    if (blob.length != content_size_in_bytes) {
      return Corrupt("the deletion vector for {} at offset {} of {} has {} bytes in the manifest but {} in the "
                     "Puffin footer",
                     referenced_data_file, content_offset, puffin_path, content_size_in_bytes, blob.length);
    }
    auto named = blob.properties.find(std::string(kReferencedDataFileProperty));
    if (named == blob.properties.end()) {
      return Corrupt("the deletion vector at offset {} of {} has no '{}' property in the Puffin footer", content_offset,
                     puffin_path, kReferencedDataFileProperty);
    }
    if (named->second != referenced_data_file) {
      return Corrupt("the manifest says the deletion vector at offset {} of {} deletes rows of {}, but the Puffin "
                     "footer says it belongs to {}",
                     content_offset, puffin_path, referenced_data_file, named->second);
    }
    return Status::OK();
  }
  return Corrupt("the manifest places the deletion vector for {} at offset {} of {}, where the Puffin footer lists no "
                 "blob",
                 referenced_data_file, content_offset, puffin_path);
}

Result<PositionBitmap> ReadDeletionVectorBlob(const PuffinReader& reader, const BlobMetadata& blob) {
  auto data_file = blob.properties.find(std::string(kReferencedDataFileProperty));
  const std::string name = data_file == blob.properties.end()
                               ? fmt::format("deletion vector at offset {}", blob.offset)
                               : fmt::format("deletion vector for {}", data_file->second);
  if (blob.type != kDeletionVectorBlobType) {
    return Corrupt("{}: blob type is '{}', expected '{}'", name, blob.type, kDeletionVectorBlobType);
  }
  if (data_file == blob.properties.end()) {
    return Corrupt("{}: missing required property '{}'", name, kReferencedDataFileProperty);
  }
  if (blob.compression_codec.has_value()) {
    return Corrupt("{}: compressed with '{}', but deletion vectors must not be compressed", name,
                   *blob.compression_codec);
  }
  auto cardinality_text = blob.properties.find(std::string(kCardinalityProperty));
  if (cardinality_text == blob.properties.end()) {
    return Corrupt("{}: missing required property '{}'", name, kCardinalityProperty);
  }
  const std::string& text = cardinality_text->second;
  int64_t cardinality = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), cardinality);
  if (ec != std::errc() || end != text.data() + text.size() || cardinality < 0) {
    return Corrupt("{}: property '{}' is '{}', not a non-negative decimal integer", name, kCardinalityProperty,
                   text);
  }
  LS_ASSIGN_OR_RAISE_CTX(std::shared_ptr<arrow::Buffer> bytes, reader.ReadBlob(blob), "reading {}", name);
  LS_ASSIGN_OR_RAISE_CTX(PositionBitmap positions, DeserializeDeletionVector(std::string_view(*bytes), cardinality),
                         "reading {}", name);
  return positions;
}

Result<std::unique_ptr<DeletionVectorWriter>> DeletionVectorWriter::Make(std::shared_ptr<arrow::io::OutputStream> sink,
                                                                         DeletionVectorWriterOptions options) {
  PuffinWriterOptions puffin_options;
  puffin_options.lakesync_version = std::move(options.lakesync_version);
  ARROW_ASSIGN_OR_RAISE(auto writer, PuffinWriter::Make(std::move(sink), std::move(puffin_options)));
  return std::unique_ptr<DeletionVectorWriter>(new DeletionVectorWriter(std::move(writer)));
}

Status DeletionVectorWriter::Add(std::string_view referenced_data_file, const PositionBitmap& positions) {
  LS_ASSIGN_OR_RAISE_CTX(std::string blob, SerializeDeletionVector(positions), "deletion vector for {}",
                         referenced_data_file);
  return AddSerialized(referenced_data_file, std::move(blob), positions.Cardinality());
}

Status DeletionVectorWriter::AddSerialized(std::string_view referenced_data_file, std::string blob,
                                           int64_t cardinality) {
  if (referenced_data_file.empty()) return InvalidArgument("deletion vector needs a referenced data file path");
  if (data_files_.find(referenced_data_file) != data_files_.end()) {
    return InvalidArgument("data file {} already has a deletion vector in this Puffin file", referenced_data_file);
  }
  PuffinBlob puffin_blob;
  puffin_blob.type = std::string(kDeletionVectorBlobType);
  puffin_blob.fields = {kRowPositionFieldId};
  puffin_blob.snapshot_id = -1;
  puffin_blob.sequence_number = -1;
  puffin_blob.properties.emplace(std::string(kReferencedDataFileProperty), std::string(referenced_data_file));
  puffin_blob.properties.emplace(std::string(kCardinalityProperty), std::to_string(cardinality));
  LS_ASSIGN_OR_RAISE_CTX(BlobMetadata written, writer_->AddBlob(puffin_blob, blob), "deletion vector for {}",
                         referenced_data_file);
  data_files_.emplace(referenced_data_file);
  written_.push_back(WrittenDeletionVector{std::string(referenced_data_file), written.offset, written.length,
                                           cardinality});
  return Status::OK();
}

Result<DeletionVectorFile> DeletionVectorWriter::Finish() {
  ARROW_ASSIGN_OR_RAISE(PuffinFileInfo info, writer_->Finish());
  DeletionVectorFile out;
  out.vectors = written_;
  out.file_size_in_bytes = info.file_size_in_bytes;
  out.footer_size_in_bytes = info.footer_size_in_bytes;
  return out;
}

}  // namespace lakesync::puffin
