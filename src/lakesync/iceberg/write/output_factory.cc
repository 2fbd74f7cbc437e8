#include "lakesync/iceberg/write/output_factory.h"

#include <arrow/io/file.h>

#include <filesystem>

namespace lakesync::iceberg {

Result<std::string> LocalPathOf(const std::string& location) {
  std::string path;
  if (location.rfind("file://", 0) == 0) {
    path = location.substr(7);
    if (path.empty() || path[0] != '/') {
      return InvalidArgument("'{}' is not a local file location with an absolute path (file:///abs/path)", location);
    }
  } else if (location.rfind("file:/", 0) == 0) {
    path = location.substr(5);
  } else if (!location.empty() && location[0] == '/') {
    path = location;
  } else if (location.find("://") != std::string::npos) {
    return Unsupported("the local output factory cannot write '{}'", location);
  } else {
    return InvalidArgument("'{}' is not an absolute location", location);
  }
  return path;
}

OutputFactory MakeLocalOutputFactory() {
  return [](const std::string& location) -> Result<std::shared_ptr<arrow::io::OutputStream>> {
    ARROW_ASSIGN_OR_RAISE(std::string path, LocalPathOf(location));
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (ec) return IOError("creating the directory of {}: {}", location, ec.message());
    auto out = arrow::io::FileOutputStream::Open(path);
    if (!out.ok()) return IOError("opening {} for writing: {}", location, out.status().message());
    return std::shared_ptr<arrow::io::OutputStream>(*out);
  };
}

}  // namespace lakesync::iceberg
