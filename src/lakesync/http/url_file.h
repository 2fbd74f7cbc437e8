// Files at http(s) URLs (a Delta Sharing server's signed URLs, an object store's pre-signed ones) as
// an arrow::fs filesystem, so that every reader that takes a FileIO (Parquet files, deletion vectors)
// reads them too: sizes with HEAD, bytes with GET and a Range header, both through http::Client and
// its retry rule. Read-only: every write or listing is Unsupported.
//
// The "path" of a file on this filesystem is its whole URL, query included (io::FileIO hands it over
// unchanged), because the query carries the signature.
#pragma once

#include <arrow/filesystem/filesystem.h>

#include <functional>
#include <memory>
#include <string>

#include "lakesync/http/client.h"

namespace lakesync::http {

struct UrlFileOptions {
  // A file whose size is known and below this is fetched with one GET on its first read and kept in
  // memory: Parquet readers issue several small ranged reads (footer, then columns), each a round trip.
  int64_t whole_file_below = int64_t{16} << 20;
  // Called when a server refuses a URL with 403 (a signed URL that expired or was revoked): returns a
  // fresh URL for the same file, and the read is retried once with it. Without it, 403 is an error.
  std::function<Result<std::string>(const std::string& url)> refresh;
};

// Errors of reads: NotFound for 404, Forbidden for a 403 that no refresh cured, Unavailable when the
// server cannot be reached, IOError for short reads and other answers. Messages name the URL without
// its query (which holds the signature).
std::shared_ptr<arrow::fs::FileSystem> MakeUrlFileSystem(std::shared_ptr<Client> client, UrlFileOptions options = {});

}  // namespace lakesync::http
