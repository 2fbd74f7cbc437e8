// Writes a Puffin file to an arrow::io::OutputStream: the header magic, blobs one after another, and
// on Finish() the footer.
#pragma once

#include <arrow/io/interfaces.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/formats/puffin/puffin_metadata.h"

namespace lakesync::puffin {

struct PuffinWriterOptions {
  // When set, the footer gets the file property "created-by": "lakesync <version>". Left unset, no
  // created-by is written (Java's byte-exact empty file has none).
  std::optional<std::string> lakesync_version;
  // Further file properties. Giving "created-by" here as well as lakesync_version is an error.
  std::map<std::string, std::string> properties;
  // Compress the footer payload as an LZ4 frame. Off by default: pyiceberg cannot read such footers.
  bool compress_footer = false;
};

// What the caller knows about one blob; offset and length are the writer's to fill in.
struct PuffinBlob {
  std::string type;
  std::vector<int32_t> fields;
  int64_t snapshot_id = -1;
  int64_t sequence_number = -1;
  std::map<std::string, std::string> properties;
  // deletion-vector-v1 blobs must stay uncompressed.
  PuffinCodec compression = PuffinCodec::kNone;
};

struct PuffinFileInfo {
  std::vector<BlobMetadata> blobs;  // as written to the footer, with absolute offsets
  int64_t file_size_in_bytes = 0;
  int64_t footer_size_in_bytes = 0;  // both footer magics, payload, size and flags
};

class PuffinWriter {
 public:
  // sink must be positioned at the start of a new file: blob offsets are counted from the first byte
  // this writer writes. Nothing is written until the first AddBlob() or Finish().
  // Returns InvalidArgument if sink is null, already has bytes written (when it can tell), or the
  // options conflict.
  static Result<std::unique_ptr<PuffinWriter>> Make(std::shared_ptr<arrow::io::OutputStream> sink,
                                                    PuffinWriterOptions options = {});

  // Writes one blob (compressing it if blob.compression asks) and returns its footer entry.
  // Returns InvalidArgument for an empty type, a compressed deletion vector, or a writer already
  // finished; IOError from the sink with the blob named.
  Result<BlobMetadata> AddBlob(const PuffinBlob& blob, std::string_view data);

  // Writes the footer and returns every blob's metadata with the file and footer sizes (the values an
  // Iceberg manifest or statistics file entry needs). Does not close the sink: the caller does,
  // since closing is what commits the object on some stores. Finishing twice is InvalidArgument.
  Result<PuffinFileInfo> Finish();

  // Bytes written so far (the offset the next blob would get).
  int64_t position() const { return position_; }

 private:
  PuffinWriter(std::shared_ptr<arrow::io::OutputStream> sink, PuffinWriterOptions options)
      : sink_(std::move(sink)), options_(std::move(options)) {}

  Status Write(std::string_view bytes);
  Status WriteHeaderIfNeeded();

  std::shared_ptr<arrow::io::OutputStream> sink_;
  PuffinWriterOptions options_;
  std::vector<BlobMetadata> blobs_;
  int64_t position_ = 0;
  bool finished_ = false;
};

}  // namespace lakesync::puffin
