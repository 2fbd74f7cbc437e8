#include "lakesync/catalog/metadata_files.h"

#include <arrow/buffer.h>
#include <arrow/util/compression.h>
#include <fmt/format.h>

#include <regex>

#include "lakesync/common/text.h"
#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/iceberg/model/json_serde.h"

namespace lakesync::catalog {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<std::string> Gunzip(const std::string& data) {
  ARROW_ASSIGN_OR_RAISE(auto codec, arrow::util::Codec::Create(arrow::Compression::GZIP));
  ARROW_ASSIGN_OR_RAISE(auto decompressor, codec->MakeDecompressor());
  std::string out;
  std::string chunk(1 << 16, '\0');
  size_t in_pos = 0;
  while (!decompressor->IsFinished()) {
    ARROW_ASSIGN_OR_RAISE(auto r, decompressor->Decompress(
                                      static_cast<int64_t>(data.size() - in_pos),
                                      reinterpret_cast<const uint8_t*>(data.data() + in_pos),
                                      static_cast<int64_t>(chunk.size()), reinterpret_cast<uint8_t*>(chunk.data())));
    in_pos += static_cast<size_t>(r.bytes_read);
    out.append(chunk.data(), static_cast<size_t>(r.bytes_written));
    if (r.bytes_read == 0 && r.bytes_written == 0 && !r.need_more_output) {
      if (in_pos >= data.size()) return Corrupt("gzip stream is truncated");
    }
  }
  return out;
}

Result<std::string> Gzip(const std::string& data) {
  ARROW_ASSIGN_OR_RAISE(auto codec, arrow::util::Codec::Create(arrow::Compression::GZIP));
  const int64_t max_len = codec->MaxCompressedLen(static_cast<int64_t>(data.size()),
                                                  reinterpret_cast<const uint8_t*>(data.data()));
  std::string out(static_cast<size_t>(max_len), '\0');
  ARROW_ASSIGN_OR_RAISE(int64_t n, codec->Compress(static_cast<int64_t>(data.size()),
                                                   reinterpret_cast<const uint8_t*>(data.data()), max_len,
                                                   reinterpret_cast<uint8_t*>(out.data())));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

Result<std::shared_ptr<iceberg::TableMetadata>> ReadTableMetadata(const io::FileIO& io, const std::string& location) {
  LS_ASSIGN_OR_RAISE_CTX(std::string text, io.ReadAll(location), "reading table metadata");
  if (EndsWith(location, ".gz.metadata.json") || EndsWith(location, ".metadata.json.gz")) {
    LS_ASSIGN_OR_RAISE_CTX(text, Gunzip(text), "decompressing {}", location);
  }
  LS_ASSIGN_OR_RAISE_CTX(auto metadata, iceberg::ParseTableMetadata(text), "reading table metadata {}", location);
  return metadata;
}

bool MetadataIsCompressed(const iceberg::TableMetadata& metadata) {
  return AsciiLower(metadata.Property(iceberg::kPropMetadataCompression, "none")) == "gzip";
}

Result<std::string> EncodeTableMetadata(const iceberg::TableMetadata& metadata) {
  std::string text = iceberg::SerializeTableMetadata(metadata);
  if (MetadataIsCompressed(metadata)) return Gzip(text);
  return text;
}

std::string MetadataDirectory(const iceberg::TableMetadata& metadata) {
  auto it = metadata.properties.find(iceberg::kPropMetadataPath);
  if (it != metadata.properties.end() && !it->second.empty()) return it->second;
  return io::JoinLocation(metadata.location, "metadata");
}

int ParseMetadataVersion(const std::string& location) {
  static const std::regex kPattern(R"((?:^|/)(?:v(\d+)|(\d+)-[0-9a-fA-F-]+)(?:\.gz)?\.metadata\.json(?:\.gz)?$)");
  std::smatch m;
  if (!std::regex_search(location, m, kPattern)) return -1;
  try {
    return std::stoi(m[1].matched ? m[1].str() : m[2].str());
  } catch (...) {
    return -1;
  }
}

std::string NewMetadataLocation(const iceberg::TableMetadata& metadata, int version) {
  const char* suffix = MetadataIsCompressed(metadata) ? ".gz.metadata.json" : ".metadata.json";
  return io::JoinLocation(MetadataDirectory(metadata),
                          fmt::format("{:05d}-{}{}", version, iceberg::NewUuid(), suffix));
}

namespace {
thread_local std::function<Status(const std::string&)> metadata_file_recorder;
}  // namespace

ScopedMetadataFileRecorder::ScopedMetadataFileRecorder(std::function<Status(const std::string&)> recorder)
    : previous_(std::move(metadata_file_recorder)) {
  metadata_file_recorder = std::move(recorder);
}

ScopedMetadataFileRecorder::~ScopedMetadataFileRecorder() { metadata_file_recorder = std::move(previous_); }

Status RecordMetadataFile(const std::string& location) {
  return metadata_file_recorder ? metadata_file_recorder(location) : Status::OK();
}

}  // namespace lakesync::catalog
