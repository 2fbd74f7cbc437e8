// Deletion vectors in Puffin files, the way an Iceberg v3 table uses them: many DVs per file, each
// located by a manifest entry's content_offset / content_size_in_bytes.
#pragma once

#include <arrow/io/interfaces.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/formats/puffin/positions_bitmap.h"
#include "lakesync/formats/puffin/puffin_metadata.h"
#include "lakesync/formats/puffin/puffin_writer.h"

namespace lakesync::puffin {

class PuffinReader;

// Reads one deletion vector straight from its byte range, without the Puffin footer (the manifest
// entry already says where it is). expected_cardinality is the entry's record_count.
// Returns InvalidArgument for a negative offset or a size outside what a DV blob can have; Corrupt if
// the range runs past the end of the file or the blob fails DeserializeDeletionVector's checks (the
// message names the offset); IOError from the file.
Result<PositionBitmap> ReadDeletionVector(arrow::io::RandomAccessFile& file, int64_t content_offset,
                                          int64_t content_size_in_bytes,
                                          std::optional<int64_t> expected_cardinality);

// Checks a manifest's deletion-vector entry against the footer of its Puffin file: the footer must
// list a deletion-vector-v1 blob at exactly [content_offset, content_offset + content_size_in_bytes)
// whose `referenced-data-file` property names the entry's referenced_data_file. The footer is the
// writer's own record of which data file each vector belongs to, so a manifest entry that disagrees
// has been damaged (applying it would delete rows of the wrong file, or of none). Returns Corrupt
// naming the Puffin file and both data files.
Status CheckDeletionVectorAgainstFooter(const FileMetadata& footer, std::string_view puffin_path,
                                        int64_t content_offset, int64_t content_size_in_bytes,
                                        std::string_view referenced_data_file);

// Reads the deletion vector a Puffin footer entry describes, checking what the spec requires of the
// entry itself: type deletion-vector-v1, no compression codec, a `referenced-data-file` property and a
// decimal `cardinality` property matching the vector.
// Returns Corrupt naming the data file and what disagreed; errors of PuffinReader::ReadBlob.
Result<PositionBitmap> ReadDeletionVectorBlob(const PuffinReader& reader, const BlobMetadata& blob);

// One deletion vector as written: what a v3 manifest entry for it needs.
struct WrittenDeletionVector {
  std::string referenced_data_file;
  int64_t content_offset = 0;
  int64_t content_size_in_bytes = 0;
  int64_t cardinality = 0;  // the entry's record_count
};

struct DeletionVectorFile {
  std::vector<WrittenDeletionVector> vectors;  // in the order they were added
  int64_t file_size_in_bytes = 0;
  int64_t footer_size_in_bytes = 0;
};

struct DeletionVectorWriterOptions {
  // Written as the file property "created-by": "lakesync <version>" when set.
  std::optional<std::string> lakesync_version;
};

// Writes many deletion vectors into one Puffin file, each blob tagged the way Iceberg Java tags them:
// fields [2147483645] (_pos), snapshot-id -1, sequence-number -1, properties referenced-data-file and
// cardinality.
class DeletionVectorWriter {
 public:
  // sink as for PuffinWriter::Make (a fresh stream; the caller closes it after Finish()).
  static Result<std::unique_ptr<DeletionVectorWriter>> Make(std::shared_ptr<arrow::io::OutputStream> sink,
                                                            DeletionVectorWriterOptions options = {});

  // Writes the DV for one data file. Returns InvalidArgument for an empty path or a data file that
  // already has a DV in this file (Iceberg allows one DV per data file); errors of PuffinWriter.
  Status Add(std::string_view referenced_data_file, const PositionBitmap& positions);
  // The same for a vector already serialized (SerializeDeletionVector) with its cardinality: lets
  // callers serialize the vectors of many data files in parallel and write them in a fixed order.
  Status AddSerialized(std::string_view referenced_data_file, std::string blob, int64_t cardinality);

  // Writes the footer. Returns the errors of PuffinWriter::Finish.
  Result<DeletionVectorFile> Finish();

 private:
  explicit DeletionVectorWriter(std::unique_ptr<PuffinWriter> writer) : writer_(std::move(writer)) {}

  std::unique_ptr<PuffinWriter> writer_;
  std::vector<WrittenDeletionVector> written_;
  std::set<std::string, std::less<>> data_files_;
};

}  // namespace lakesync::puffin
