#include "lakesync/io/location.h"

#include <cctype>
#include <filesystem>
#include <system_error>

namespace lakesync::io {
namespace {

// RFC 3986: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ). A single letter is not taken as a
// scheme so that nothing that looks like a drive letter is mistaken for one.
bool IsScheme(std::string_view s) {
  if (s.size() < 2 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Lexical normalization only: symlinks are not resolved, because a location names a file the
// way the table metadata does, not the way the kernel would reach it.
std::string NormalizeAbsolutePath(const std::string& absolute) {
  std::string out = std::filesystem::path(absolute).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

Result<std::string> LocalPathFromPlainPath(std::string_view location) {
  std::filesystem::path path{std::string(location)};
  if (path.is_relative()) {
    std::error_code ec;
    std::filesystem::path cwd = std::filesystem::current_path(ec);
    if (ec) {
      return IOError("resolving relative path '{}': cannot read the current directory: {}", location,
                     ec.message());
    }
    path = cwd / path;
  }
  return NormalizeAbsolutePath(path.string());
}

Result<std::string> LocalPathFromFileUri(std::string_view location, std::string_view rest) {
  std::string_view path = rest;
  if (rest.substr(0, 2) == "//") {
    rest.remove_prefix(2);
    const size_t slash = rest.find('/');
    const std::string_view host = rest.substr(0, slash);
    if (!host.empty() && ToLower(host) != "localhost") {
      return InvalidArgument("file location '{}' names host '{}'; only local files are supported",
                             location, host);
    }
    path = slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
  }
  if (path.empty() || path.front() != '/') {
    return InvalidArgument("file location '{}' must hold an absolute path", location);
  }
  return NormalizeAbsolutePath(std::string(path));
}

}  // namespace

Result<ParsedLocation> ParseLocation(std::string_view location) {
  if (location.empty()) return InvalidArgument("empty location");
  ParsedLocation parsed;
  const size_t colon = location.find(':');
  const bool has_scheme = colon != std::string_view::npos && IsScheme(location.substr(0, colon));
  if (!has_scheme) {
    parsed.kind = StorageKind::kLocal;
    parsed.scheme = "file";
    ARROW_ASSIGN_OR_RAISE(parsed.path, LocalPathFromPlainPath(location));
    return parsed;
  }
  parsed.scheme = ToLower(location.substr(0, colon));
  const std::string_view rest = location.substr(colon + 1);
  if (parsed.scheme == "file") {
    parsed.kind = StorageKind::kLocal;
    ARROW_ASSIGN_OR_RAISE(parsed.path, LocalPathFromFileUri(location, rest));
    return parsed;
  }
  if (parsed.scheme == "s3" || parsed.scheme == "s3a" || parsed.scheme == "s3n") {
    parsed.kind = StorageKind::kS3;
  } else if (parsed.scheme == "gs") {
    parsed.kind = StorageKind::kGcs;
  } else if (parsed.scheme == "abfs" || parsed.scheme == "abfss") {
    parsed.kind = StorageKind::kAzure;
  } else {
    return Unsupported(
        "location '{}' has scheme '{}'; supported are file, s3, s3a, s3n, gs, abfs and abfss",
        location, parsed.scheme);
  }
  if (rest.substr(0, 2) != "//") {
    return InvalidArgument("location '{}' must have the form {}://<bucket>/<path>", location,
                           parsed.scheme);
  }
  std::string_view after = rest.substr(2);
  const size_t slash = after.find('/');
  parsed.authority = std::string(after.substr(0, slash));
  if (parsed.authority.empty()) {
    return InvalidArgument("location '{}' names no bucket or container", location);
  }
  if (slash != std::string_view::npos) {
    std::string_view key = after.substr(slash);
    while (!key.empty() && key.front() == '/') key.remove_prefix(1);
    parsed.path = std::string(key);
  }
  return parsed;
}

Result<std::string> NormalizeLocation(std::string_view path_or_uri) {
  ARROW_ASSIGN_OR_RAISE(ParsedLocation parsed, ParseLocation(path_or_uri));
  if (parsed.kind == StorageKind::kLocal) return "file://" + parsed.path;
  return std::string(path_or_uri);
}

std::string ResolveRelativePath(std::string_view path_or_uri, std::string_view base_dir) {
  if (path_or_uri.empty() || path_or_uri.front() == '/' || base_dir.empty()) return std::string(path_or_uri);
  if (path_or_uri.find("://") != std::string_view::npos || ToLower(path_or_uri.substr(0, 5)) == "file:") {
    return std::string(path_or_uri);
  }
  return (std::filesystem::path(std::string(base_dir)) / std::string(path_or_uri)).lexically_normal().string();
}

std::string JoinLocation(std::string_view base, std::string_view relative) {
  while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
  if (base.empty()) return std::string(relative);
  // Trailing slashes go, but never the ones that belong to a root: "/" or "file:///" stay whole
  // so that joining onto a root still yields an absolute location.
  size_t keep = 1;
  if (const size_t sep = base.find("://"); sep != std::string_view::npos) {
    keep = sep + 3;
    if (ToLower(base.substr(0, sep)) == "file" && base.size() > keep && base[keep] == '/') ++keep;
  }
  while (base.size() > keep && base.back() == '/') base.remove_suffix(1);
  if (relative.empty()) return std::string(base);
  std::string out(base);
  if (out.back() != '/') out.push_back('/');
  out.append(relative);
  return out;
}

}  // namespace lakesync::io
