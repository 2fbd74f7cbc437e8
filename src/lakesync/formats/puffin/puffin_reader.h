// Reads a Puffin file: validates the footer on Open() and reads blobs on demand.
#pragma once

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lakesync/common/status.h"
#include "lakesync/formats/puffin/puffin_metadata.h"

namespace lakesync::puffin {

struct PuffinReaderOptions {
  // The file's size, when known (a manifest's file_size_in_bytes); saves a GetSize() call.
  std::optional<int64_t> file_size;
  // The footer's size, when known (a statistics file's file-footer-size-in-bytes). Lets the footer be
  // read in one request; it is still checked against the size recorded in the file.
  std::optional<int64_t> footer_size;
  // Limits that keep a corrupt or hostile file from exhausting memory; exceeding one is
  // InvalidArgument (raise the limit if the file is legitimate).
  int64_t max_footer_payload_size = int64_t{64} << 20;
  int64_t max_blob_size = int64_t{1} << 31;  // per blob, after decompression
};

class PuffinReader {
 public:
  // Opens a Puffin file and reads its footer. Blob indices in error messages are 0-based positions in
  // the footer's "blobs" list.
  // Returns Corrupt for a file too small to be Puffin, a header or footer magic mismatch (with the
  // offset), a payload size that does not fit the file, a footer_size option that disagrees with
  // the file, malformed footer JSON, or a blob range outside the data section (between the header
  // magic and the footer); Unsupported for reserved footer flag bits; InvalidArgument for a payload
  // above max_footer_payload_size; IOError from the file.
  static Result<std::unique_ptr<PuffinReader>> Open(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                    PuffinReaderOptions options = {});
  // Same over a whole file already in memory.
  static Result<std::unique_ptr<PuffinReader>> Open(std::shared_ptr<arrow::Buffer> whole_file,
                                                    PuffinReaderOptions options = {});
  static Result<std::unique_ptr<PuffinReader>> OpenBytes(std::string whole_file, PuffinReaderOptions options = {});

  const FileMetadata& metadata() const { return metadata_; }
  const std::vector<BlobMetadata>& blobs() const { return metadata_.blobs; }
  int64_t file_size() const { return file_size_; }
  int64_t footer_size() const { return footer_size_; }
  bool footer_compressed() const { return footer_compressed_; }

  // Reads blob `index` and decompresses it if its footer entry names a codec.
  // Returns InvalidArgument for an index out of range or a blob above max_blob_size (stored or
  // decompressed), Unsupported for an unknown codec, Corrupt if the stored bytes do not decompress,
  // IOError from the file.
  Result<std::shared_ptr<arrow::Buffer>> ReadBlob(size_t index) const;
  // Reads the blob a footer entry describes (e.g. one rebuilt from a manifest), checking that it lies
  // within the data section of this file. Errors as above.
  Result<std::shared_ptr<arrow::Buffer>> ReadBlob(const BlobMetadata& blob) const;

 private:
  PuffinReader(std::shared_ptr<arrow::io::RandomAccessFile> file, PuffinReaderOptions options)
      : file_(std::move(file)), options_(options) {}

  Status ReadFooter();
  Result<std::shared_ptr<arrow::Buffer>> ReadBlobImpl(const BlobMetadata& blob, const std::string& name) const;

  std::shared_ptr<arrow::io::RandomAccessFile> file_;
  PuffinReaderOptions options_;
  FileMetadata metadata_;
  int64_t file_size_ = 0;
  int64_t footer_size_ = 0;
  bool footer_compressed_ = false;
};

// Checks that a blob's byte range lies in the data section [4, footer_start) of a file of file_size
// bytes; `name` (e.g. "blob 2 (deletion-vector-v1)") starts the Corrupt message otherwise.
Status CheckBlobRange(const BlobMetadata& blob, int64_t footer_start, int64_t file_size, const std::string& name);

}  // namespace lakesync::puffin
