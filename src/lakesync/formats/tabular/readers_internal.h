// The readers behind OpenReader that conform text input to a target schema themselves, so that their
// errors can name the line or row and the column (see tabular.h).
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <string>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::tabular {

// JSON Lines with a target schema: streams the file in chunks, at most `batch_rows` rows (or about
// 16 MiB of text) per batch. Errors (from ReadNext): InvalidArgument
// "<location>: line N (row M), column 'a.b': <reason>", or "<location>: line N (row M): <reason>"
// for a line that is not a JSON object.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenJsonlReader(std::shared_ptr<arrow::io::InputStream> input,
                                                                  std::string location,
                                                                  std::shared_ptr<arrow::Schema> target,
                                                                  int64_t batch_rows);

// CSV with a header row and a target schema: Arrow's CSV reader splits the cells (every column read
// as text), then the JSON Lines converters parse them. Errors: InvalidArgument
// "<location>: data row N, column 'x': <reason>" (N counts data rows from 1, without the header), and
// at open time for header columns not in the table or required columns the header lacks.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenCsvReader(std::shared_ptr<arrow::io::RandomAccessFile> input,
                                                                std::string location,
                                                                std::shared_ptr<arrow::Schema> target);

}  // namespace lakesync::tabular
