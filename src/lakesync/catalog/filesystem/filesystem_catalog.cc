#include "lakesync/catalog/filesystem/filesystem_catalog.h"

#include <arrow/filesystem/filesystem.h>

#include <cctype>
#include <charconv>
#include <regex>

#include "lakesync/catalog/metadata_files.h"
#include "lakesync/common/logging.h"
#include "lakesync/common/text.h"
#include "lakesync/io/file_io.h"

namespace lakesync::catalog {
namespace {

constexpr char kMetadataDir[] = "metadata";

// v<N>.metadata.json or v<N>.gz.metadata.json; the file name only.
std::optional<int64_t> VersionOfFileName(std::string_view file_name) {
  static const std::regex kPattern(R"(^v(\d{1,18})(?:\.gz)?\.metadata\.json$)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(file_name.begin(), file_name.end(), m, kPattern)) return std::nullopt;
  return std::stoll(m[1].str());
}

std::string_view FileName(std::string_view location) {
  const size_t slash = location.rfind('/');
  return slash == std::string_view::npos ? location : location.substr(slash + 1);
}

// The hint holds bare digits; Java writes no newline but tolerates surrounding whitespace when
// reading, and so do we. Anything else is no hint.
std::optional<int64_t> ParseHint(std::string_view text) {
  text = TrimSpace(text);
  int64_t value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::string VersionFileName(int64_t version, bool compressed) {
  return fmt::format("v{}{}", version, compressed ? ".gz.metadata.json" : ".metadata.json");
}

Status ValidateLevel(const Namespace& ns, const std::string& level) {
  // Levels become directory names: no separators, no "." or "..", and no hidden names, which
  // listings skip (temporary files and tool directories start with '.').
  if (level.empty() || level.find('/') != std::string::npos || level.front() == '.') {
    return InvalidArgument("invalid namespace or table name '{}' in '{}': names must be non-empty, contain no '/' "
                           "and not start with '.'",
                           level, NamespaceToString(ns));
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<FilesystemCatalog>> FilesystemCatalog::Make(FilesystemCatalogOptions options) {
  std::shared_ptr<FilesystemCatalog> catalog(new FilesystemCatalog(std::move(options)));
  ARROW_RETURN_NOT_OK(catalog->Init());
  return catalog;
}

Status FilesystemCatalog::Init() {
  if (options_.catalog_name.empty()) return InvalidArgument("filesystem catalog: the catalog name must not be empty");
  if (options_.warehouse.empty()) {
    return InvalidArgument("filesystem catalog '{}': warehouse is required", options_.catalog_name);
  }
  if (!options_.io) return InvalidArgument("filesystem catalog '{}': no FileIO given", options_.catalog_name);
  LS_ASSIGN_OR_RAISE_CTX(options_.warehouse, io::NormalizeLocation(options_.warehouse),
                         "filesystem catalog '{}': warehouse", options_.catalog_name);
  return Status::OK();
}

Result<std::string> FilesystemCatalog::NamespaceLocation(const Namespace& ns) const {
  std::string location = options_.warehouse;
  for (const auto& level : ns) {
    ARROW_RETURN_NOT_OK(ValidateLevel(ns, level));
    location = io::JoinLocation(location, level);
  }
  return location;
}

Result<std::string> FilesystemCatalog::TableLocation(const TableIdentifier& identifier) const {
  ARROW_ASSIGN_OR_RAISE(std::string ns_location, NamespaceLocation(identifier.ns));
  ARROW_RETURN_NOT_OK(ValidateLevel(identifier.ns, identifier.name));
  return io::JoinLocation(ns_location, identifier.name);
}

Result<std::string> FilesystemCatalog::DefaultTableLocation(const TableIdentifier& identifier) {
  return TableLocation(identifier);
}

Result<bool> FilesystemCatalog::IsDirectory(const std::string& location) const {
  auto info = options_.io->Stat(location);
  if (!info.ok()) {
    if (KindOf(info.status()) == ErrorKind::kNotFound) return false;
    return info.status();
  }
  return info->is_dir;
}

Result<bool> FilesystemCatalog::IsTableDirectory(const std::string& dir) const {
  ARROW_ASSIGN_OR_RAISE(auto entries, options_.io->List(io::JoinLocation(dir, kMetadataDir)));
  for (const auto& entry : entries) {
    if (entry.is_dir) continue;
    const std::string_view name = FileName(entry.location);
    if (name == kVersionHintFile || VersionOfFileName(name)) return true;
  }
  return false;
}

Status FilesystemCatalog::CheckNoTableOnPath(const Namespace& ns, bool include_self) const {
  const size_t end = include_self ? ns.size() : (ns.empty() ? 0 : ns.size() - 1);
  std::string location = options_.warehouse;
  for (size_t i = 0; i < end; ++i) {
    ARROW_RETURN_NOT_OK(ValidateLevel(ns, ns[i]));
    location = io::JoinLocation(location, ns[i]);
    ARROW_ASSIGN_OR_RAISE(bool is_table, IsTableDirectory(location));
    if (is_table) {
      return InvalidArgument("'{}' is a table, not a namespace (in '{}')",
                             NamespaceToString(Namespace(ns.begin(), ns.begin() + static_cast<long>(i) + 1)),
                             NamespaceToString(ns));
    }
  }
  return Status::OK();
}

// ---- namespaces -----------------------------------------------------------------------------

Result<bool> FilesystemCatalog::NamespaceExists(const Namespace& ns) {
  if (ns.empty()) return true;
  ARROW_ASSIGN_OR_RAISE(std::string location, NamespaceLocation(ns));
  ARROW_ASSIGN_OR_RAISE(bool is_dir, IsDirectory(location));
  if (!is_dir) return false;
  ARROW_ASSIGN_OR_RAISE(bool is_table, IsTableDirectory(location));
  if (is_table) return false;
  // A directory inside a table ("t.metadata") is not a namespace.
  Status st = CheckNoTableOnPath(ns, /*include_self=*/false);
  if (!st.ok()) {
    if (KindOf(st) == ErrorKind::kInvalidArgument) return false;
    return st;
  }
  return true;
}

Result<std::vector<Namespace>> FilesystemCatalog::ListNamespaces(const Namespace& parent) {
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExists(parent));
  if (!exists) return NotFound("namespace '{}' does not exist in catalog '{}'", NamespaceToString(parent), name());
  ARROW_ASSIGN_OR_RAISE(std::string location, NamespaceLocation(parent));
  ARROW_ASSIGN_OR_RAISE(auto entries, options_.io->List(location));
  std::vector<Namespace> out;
  for (const auto& entry : entries) {
    if (!entry.is_dir) continue;
    const std::string child(FileName(entry.location));
    if (child.empty() || child.front() == '.') continue;
    ARROW_ASSIGN_OR_RAISE(bool is_table, IsTableDirectory(entry.location));
    if (is_table) continue;
    Namespace ns = parent;
    ns.push_back(child);
    out.push_back(std::move(ns));
  }
  return out;
}

Status FilesystemCatalog::CreateNamespace(const Namespace& ns, const Properties& properties) {
  if (ns.empty()) return InvalidArgument("cannot create the root namespace");
  if (!properties.empty()) {
    return Unsupported("creating namespace '{}': the filesystem catalog cannot store namespace properties",
                       NamespaceToString(ns));
  }
  ARROW_ASSIGN_OR_RAISE(std::string location, NamespaceLocation(ns));
  ARROW_RETURN_NOT_OK(CheckNoTableOnPath(ns, /*include_self=*/true));
  ARROW_ASSIGN_OR_RAISE(bool is_dir, IsDirectory(location));
  if (is_dir) return AlreadyExists("namespace '{}' already exists in catalog '{}'", NamespaceToString(ns), name());
  ARROW_ASSIGN_OR_RAISE(auto resolved, options_.io->Resolve(location));
  Status st = resolved.filesystem->CreateDir(resolved.path, /*recursive=*/true);
  if (!st.ok()) return IOError("creating namespace directory {}: {}", location, st.message());
  return Status::OK();
}

Result<Properties> FilesystemCatalog::LoadNamespaceMetadata(const Namespace& ns) {
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace '{}' does not exist in catalog '{}'", NamespaceToString(ns), name());
  ARROW_ASSIGN_OR_RAISE(std::string location, NamespaceLocation(ns));
  return Properties{{"location", location}};
}

Status FilesystemCatalog::DropNamespace(const Namespace& ns) {
  if (ns.empty()) return InvalidArgument("cannot drop the root namespace");
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace '{}' does not exist in catalog '{}'", NamespaceToString(ns), name());
  ARROW_ASSIGN_OR_RAISE(std::string location, NamespaceLocation(ns));
  ARROW_ASSIGN_OR_RAISE(auto entries, options_.io->List(location));
  if (!entries.empty()) {
    return NamespaceNotEmpty("namespace '{}' is not empty: {} exists", NamespaceToString(ns), entries[0].location);
  }
  return options_.io->DeleteDir(location);
}

Status FilesystemCatalog::UpdateNamespaceProperties(const Namespace& ns, const std::vector<std::string>& removals,
                                                    const Properties& updates) {
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace '{}' does not exist in catalog '{}'", NamespaceToString(ns), name());
  if (removals.empty() && updates.empty()) return Status::OK();
  return Unsupported("namespace '{}': the filesystem catalog cannot store namespace properties",
                     NamespaceToString(ns));
}

// ---- tables ---------------------------------------------------------------------------------

Result<std::vector<TableIdentifier>> FilesystemCatalog::ListTables(const Namespace& ns) {
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace '{}' does not exist in catalog '{}'", NamespaceToString(ns), name());
  ARROW_ASSIGN_OR_RAISE(std::string location, NamespaceLocation(ns));
  ARROW_ASSIGN_OR_RAISE(auto entries, options_.io->List(location));
  std::vector<TableIdentifier> out;
  for (const auto& entry : entries) {
    if (!entry.is_dir) continue;
    const std::string child(FileName(entry.location));
    if (child.empty() || child.front() == '.') continue;
    ARROW_ASSIGN_OR_RAISE(bool is_table, IsTableDirectory(entry.location));
    if (is_table) out.push_back(TableIdentifier{ns, child});
  }
  return out;
}

Status FilesystemCatalog::CheckNamespaceForCreate(const Namespace& ns) {
  return CheckNoTableOnPath(ns, /*include_self=*/true);
}

Result<LoadedTable> FilesystemCatalog::CreateTable(const CreateTableRequest& request) {
  ARROW_ASSIGN_OR_RAISE(std::string expected, TableLocation(request.identifier));
  // Refuse before touching the store, so the error is the clear one, not a listing failure.
  ARROW_RETURN_NOT_OK(CheckCommitAllowed(expected));
  if (request.location) {
    ARROW_ASSIGN_OR_RAISE(std::string requested, io::NormalizeLocation(*request.location));
    if (requested != expected) {
      return InvalidArgument("creating '{}': the filesystem catalog keeps tables at {}, not {}",
                             request.identifier.ToString(), expected, requested);
    }
  }
  return MetastoreCatalog::CreateTable(request);
}

Result<std::optional<std::string>> FilesystemCatalog::FindVersion(const std::string& metadata_dir,
                                                                  int64_t version) const {
  for (bool compressed : {false, true}) {
    std::string location = io::JoinLocation(metadata_dir, VersionFileName(version, compressed));
    ARROW_ASSIGN_OR_RAISE(bool exists, options_.io->Exists(location));
    if (exists) return location;
  }
  return std::nullopt;
}

Result<std::optional<std::string>> FilesystemCatalog::CurrentMetadataLocation(const TableIdentifier& identifier) {
  ARROW_ASSIGN_OR_RAISE(std::string table_location, TableLocation(identifier));
  const std::string metadata_dir = io::JoinLocation(table_location, kMetadataDir);
  std::optional<int64_t> version;
  std::optional<std::string> location;
  auto hint_text = options_.io->ReadAll(io::JoinLocation(metadata_dir, kVersionHintFile));
  if (hint_text.ok()) {
    if (auto hint = ParseHint(*hint_text)) {
      ARROW_ASSIGN_OR_RAISE(location, FindVersion(metadata_dir, *hint));
      if (location) version = hint;
    }
  } else if (KindOf(hint_text.status()) != ErrorKind::kNotFound) {
    return WithContext(hint_text.status(), fmt::format("reading the version hint of table '{}'", identifier.ToString()));
  }
  if (!version) {
    // No usable hint: the highest version in a listing.
    ARROW_ASSIGN_OR_RAISE(auto entries, options_.io->List(metadata_dir));
    for (const auto& entry : entries) {
      if (entry.is_dir) continue;
      auto v = VersionOfFileName(FileName(entry.location));
      if (v && (!version || *v > *version)) version = v;
    }
    if (!version) return std::nullopt;
    ARROW_ASSIGN_OR_RAISE(location, FindVersion(metadata_dir, *version));
    if (!location) return std::nullopt;  // deleted since the listing
  }
  // The hint may lag behind: writers update it after the version file, best effort.
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto next, FindVersion(metadata_dir, *version + 1));
    if (!next) break;
    ++*version;
    location = std::move(next);
  }
  return location;
}

Result<bool> FilesystemCatalog::TableExists(const TableIdentifier& identifier) {
  ARROW_ASSIGN_OR_RAISE(auto location, CurrentMetadataLocation(identifier));
  return location.has_value();
}

Status FilesystemCatalog::CheckCommitAllowed(const std::string& table_location) const {
  ARROW_ASSIGN_OR_RAISE(auto parsed, io::ParseLocation(table_location));
  if (parsed.kind == io::StorageKind::kLocal || options_.allow_unsafe_object_store_commits) return Status::OK();
  return Unsupported(
      "refusing to commit to the filesystem-catalog table at {}: object stores cannot create a file only if it "
      "is absent, so two concurrent commits could both succeed and one would be lost. Use the SQL or REST "
      "catalog for this table, or set the catalog property {}=true if only one writer ever commits to it",
      table_location, kPropAllowUnsafeObjectStoreCommits);
}

Result<std::string> FilesystemCatalog::SwapMetadata(const TableIdentifier& identifier, const std::string& base_location,
                                                    const iceberg::TableMetadata& metadata) {
  ARROW_ASSIGN_OR_RAISE(std::string table_location, TableLocation(identifier));
  ARROW_RETURN_NOT_OK(CheckCommitAllowed(table_location));
  // A cheap early check; the create-if-absent below is what actually decides.
  ARROW_ASSIGN_OR_RAISE(auto current, CurrentMetadataLocation(identifier));
  if (current.value_or("") != base_location) {
    if (base_location.empty()) {
      return AlreadyExists("table '{}' already exists in catalog '{}'", identifier.ToString(), name());
    }
    return CommitConflict("table '{}' was changed concurrently: its current metadata is {}, not {}",
                          identifier.ToString(), current.value_or("(none)"), base_location);
  }
  int64_t version = 1;
  if (!base_location.empty()) {
    auto base_version = VersionOfFileName(FileName(base_location));
    if (!base_version) return Corrupt("table '{}': {} is not a v<N>.metadata.json file", identifier.ToString(), base_location);
    version = *base_version + 1;
  }
  const bool compressed = MetadataIsCompressed(metadata);
  const std::string metadata_dir = io::JoinLocation(table_location, kMetadataDir);
  const std::string location = io::JoinLocation(metadata_dir, VersionFileName(version, compressed));
  ARROW_ASSIGN_OR_RAISE(std::string encoded, EncodeTableMetadata(metadata));
  Status written = options_.io->WriteNew(location, encoded);
  if (!written.ok()) {
    if (KindOf(written) != ErrorKind::kAlreadyExists) return WithContext(written, "writing table metadata");
    if (base_location.empty()) {
      return AlreadyExists("table '{}' already exists in catalog '{}' (created concurrently)", identifier.ToString(),
                           name());
    }
    return CommitConflict("table '{}' was changed concurrently: version {} was committed first", identifier.ToString(),
                          version);
  }
  // v<N>.metadata.json and v<N>.gz.metadata.json are different names, so two writers with different
  // codecs could both create "their" version N. Whoever sees the other name after creating its own
  // backs off (both may; never neither), so at most one of them reports success.
  const std::string other = io::JoinLocation(metadata_dir, VersionFileName(version, !compressed));
  auto other_exists = options_.io->Exists(other);
  if (!other_exists.ok() || *other_exists) {
    (void)options_.io->Delete(location);
    if (!other_exists.ok()) return WithContext(other_exists.status(), "checking for a concurrent commit");
    return CommitConflict("table '{}' was changed concurrently: {} was committed at the same time",
                          identifier.ToString(), other);
  }
  // The hint only speeds up reads (readers probe past it), so failing to refresh it does not fail
  // the commit. WriteAll replaces it atomically (temporary file and rename) on local disks.
  Status hint = options_.io->WriteAll(io::JoinLocation(metadata_dir, kVersionHintFile), std::to_string(version));
  if (!hint.ok()) LS_LOG_WARN("table '{}': could not update {}: {}", identifier.ToString(), kVersionHintFile, hint.ToString());
  return location;
}

Status FilesystemCatalog::DropTable(const TableIdentifier& identifier, bool /*purge*/) {
  ARROW_ASSIGN_OR_RAISE(auto current, CurrentMetadataLocation(identifier));
  if (!current) return NotFound("table '{}' does not exist in catalog '{}'", identifier.ToString(), name());
  ARROW_ASSIGN_OR_RAISE(std::string table_location, TableLocation(identifier));
  return options_.io->DeleteDir(table_location);
}

Status FilesystemCatalog::RenameTable(const TableIdentifier& from, const TableIdentifier& to) {
  return Unsupported("renaming '{}' to '{}': the filesystem catalog cannot rename tables", from.ToString(),
                     to.ToString());
}

Result<LoadedTable> FilesystemCatalog::RegisterTable(const TableIdentifier& identifier, const std::string& metadata_location) {
  return Unsupported("registering '{}' from {}: the filesystem catalog cannot register tables (a table is its directory)",
                     identifier.ToString(), metadata_location);
}

}  // namespace lakesync::catalog
