// How writers open new files: a callback from a location ("file:///abs/x.parquet", "s3://b/k") to an
// output stream positioned at 0. The engine passes one built on FileIO; tests and tools use the local
// one below.
#pragma once

#include <arrow/io/interfaces.h>

#include <functional>
#include <memory>
#include <string>

#include "lakesync/common/status.h"

namespace lakesync::iceberg {

using OutputFactory =
    std::function<Result<std::shared_ptr<arrow::io::OutputStream>>(const std::string& location)>;

// Opens "file:///abs/path" (also "file:/abs/path" and a bare absolute path) as a local file,
// creating parent directories. Returns Unsupported for other schemes, IOError from the file system.
OutputFactory MakeLocalOutputFactory();

// The local path of a file: location (as above), or InvalidArgument.
Result<std::string> LocalPathOf(const std::string& location);

}  // namespace lakesync::iceberg
