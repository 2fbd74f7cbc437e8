// Locations are the strings that Iceberg and Delta metadata use to name files: URIs such as
// "s3://bucket/t/data/x.parquet" or local paths in either of the forms that writers produce
// ("file:///tmp/t/x.parquet" from most tools, "file:/tmp/t/x.parquet" from Java's Hadoop Path).
// This file parses and builds them; it does no I/O.
#pragma once

#include <string>
#include <string_view>

#include "lakesync/common/status.h"

namespace lakesync::io {

// The storage systems FileIO knows. A location's scheme picks one.
enum class StorageKind {
  kLocal,  // file:// and plain paths
  kS3,     // s3://, s3a://, s3n://
  kGcs,    // gs://
  kAzure,  // abfs://, abfss://
  kHttp,   // http://, https://: read-only, through a filesystem the FileIO's maker lends (signed URLs)
};

// A location split into the parts FileIO needs to pick and address a filesystem.
struct ParsedLocation {
  StorageKind kind = StorageKind::kLocal;
  // Lower-case scheme as written ("file" for plain local paths).
  std::string scheme;
  // The part between "scheme://" and the next '/': a bucket, "container@account.host", or empty
  // for local files.
  std::string authority;
  // For local files the absolute, lexically normalized path ("/tmp/t/x"). For object stores the
  // key inside the bucket or container without a leading '/' ("t/data/x.parquet"), possibly empty.
  std::string path;
};

// Splits a location into scheme, authority and path. Plain relative paths are made absolute
// against the current directory.
// Errors: InvalidArgument for an empty location, a URI without bucket, or a file:// URI naming
// a remote host; Unsupported for schemes FileIO cannot serve (http, hdfs, ...).
Result<ParsedLocation> ParseLocation(std::string_view location);

// Turns a user path into a canonical location: relative and absolute local paths, and file:
// URIs in any of their forms, become "file:///abs/path" (normalized: no "." or ".." segments,
// no doubled or trailing slash). Object-store URIs (s3://, s3a://, gs://, abfs(s)://) are
// returned unchanged. Local paths are taken literally: no percent-decoding.
// Errors: as ParseLocation.
Result<std::string> NormalizeLocation(std::string_view path_or_uri);

// A relative local path made absolute against `base_dir` (a local directory) instead of the current
// directory: job files name their inputs relative to the file's own folder. URIs (anything with a
// scheme, file: included), absolute paths and empty strings are returned unchanged. No I/O.
std::string ResolveRelativePath(std::string_view path_or_uri, std::string_view base_dir);

// Joins a base location and a relative path with exactly one '/' between them
// ("s3://b/t/" + "/metadata" -> "s3://b/t/metadata"). An empty side returns the other.
std::string JoinLocation(std::string_view base, std::string_view relative);

}  // namespace lakesync::io
