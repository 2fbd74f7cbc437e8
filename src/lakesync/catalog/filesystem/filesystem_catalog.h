// The filesystem ("hadoop") catalog: tables are directories under the warehouse, and the current
// metadata is the highest metadata/v<N>.metadata.json (or v<N>.gz.metadata.json), with
// metadata/version-hint.text holding N (digits only, no newline) as a hint. Namespaces are the
// directories that are not tables. See shared/specs/iceberg.md §10.1 (and Java's HadoopCatalog /
// HadoopTableOperations, whose behaviour this follows).
//
// A commit creates v<N+1> only if it does not exist yet (FileIO::WriteNew): that create-if-absent
// IS the compare-and-swap, so it must be atomic. It is on local filesystems (renameat2 /
// link). On object stores FileIO can only check and then write, two writers can both "win" and one
// commit is silently lost, so commits there are refused unless the catalog property
// `filesystem.allow-unsafe-object-store-commits=true` says that only one writer ever commits
// (reads always work). Use the SQL or REST catalog for shared tables on object stores.
//
// Safe to use from many threads and processes at once (on local filesystems).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "lakesync/catalog/metastore_catalog.h"

namespace lakesync::catalog {

inline constexpr char kPropAllowUnsafeObjectStoreCommits[] = "filesystem.allow-unsafe-object-store-commits";
inline constexpr char kVersionHintFile[] = "version-hint.text";

struct FilesystemCatalogOptions {
  std::string catalog_name;
  std::string warehouse;  // root directory of all namespaces and tables (a local path or URI)
  std::shared_ptr<io::FileIO> io;
  // See the file comment: without it, commits to object stores fail with kUnsupported.
  bool allow_unsafe_object_store_commits = false;
};

class FilesystemCatalog : public MetastoreCatalog {
 public:
  // Errors: InvalidArgument for an empty name or warehouse, a malformed warehouse, or a null FileIO.
  static Result<std::shared_ptr<FilesystemCatalog>> Make(FilesystemCatalogOptions options);

  std::string name() const override { return options_.catalog_name; }
  std::shared_ptr<io::FileIO> io() const override { return options_.io; }

  // Namespaces are plain directories: CreateNamespace makes one and takes no properties
  // (kUnsupported otherwise, as in Java); LoadNamespaceMetadata returns {"location": <dir>};
  // UpdateNamespaceProperties is kUnsupported; DropNamespace removes an empty directory and fails
  // with kNamespaceNotEmpty when anything is inside it.
  Result<std::vector<Namespace>> ListNamespaces(const Namespace& parent) override;
  Status CreateNamespace(const Namespace& ns, const Properties& properties) override;
  Result<Properties> LoadNamespaceMetadata(const Namespace& ns) override;
  Result<bool> NamespaceExists(const Namespace& ns) override;
  Status DropNamespace(const Namespace& ns) override;
  Status UpdateNamespaceProperties(const Namespace& ns, const std::vector<std::string>& removals,
                                   const Properties& updates) override;

  Result<std::vector<TableIdentifier>> ListTables(const Namespace& ns) override;
  // A table must live at <warehouse>/<ns...>/<name>: a different requested location is
  // InvalidArgument. Missing namespace directories are created (as in Java).
  Result<LoadedTable> CreateTable(const CreateTableRequest& request) override;
  Result<bool> TableExists(const TableIdentifier& identifier) override;
  // The table directory is the catalog entry, so dropping deletes it with everything inside, with
  // or without purge (as Java's HadoopCatalog does). Errors: NotFound.
  Status DropTable(const TableIdentifier& identifier, bool purge) override;
  // kUnsupported: a path-based table cannot move without rewriting its metadata.
  Status RenameTable(const TableIdentifier& from, const TableIdentifier& to) override;
  // kUnsupported: the table's identity is its directory.
  Result<LoadedTable> RegisterTable(const TableIdentifier& identifier, const std::string& metadata_location) override;

  // The table directory for an identifier.
  Result<std::string> TableLocation(const TableIdentifier& identifier) const;

 protected:
  // The highest existing version: parse the hint, then probe v<N+1>, v<N+2>... while they exist;
  // with no usable hint (missing, not a number, naming a missing file) list the metadata directory.
  Result<std::optional<std::string>> CurrentMetadataLocation(const TableIdentifier& identifier) override;
  Result<std::string> SwapMetadata(const TableIdentifier& identifier, const std::string& base_location,
                                   const iceberg::TableMetadata& metadata) override;
  Result<std::string> DefaultTableLocation(const TableIdentifier& identifier) override;
  // Namespaces are created implicitly; only a namespace path that runs through a table is refused.
  Status CheckNamespaceForCreate(const Namespace& ns) override;

 protected:
  // For Make and for tests that reach the commit primitives through a subclass: construct, then
  // Init() (which validates the options).
  explicit FilesystemCatalog(FilesystemCatalogOptions options) : options_(std::move(options)) {}
  Status Init();

 private:
  Result<std::string> NamespaceLocation(const Namespace& ns) const;
  Result<bool> IsTableDirectory(const std::string& dir) const;
  Result<bool> IsDirectory(const std::string& location) const;
  // Errors with InvalidArgument when a proper prefix of `ns` (or `ns` itself when `include_self`)
  // is a table directory.
  Status CheckNoTableOnPath(const Namespace& ns, bool include_self) const;
  // The location of version `version`'s metadata file if one exists (plain name first, as Java).
  Result<std::optional<std::string>> FindVersion(const std::string& metadata_dir, int64_t version) const;
  Status CheckCommitAllowed(const std::string& table_location) const;

  FilesystemCatalogOptions options_;
};

}  // namespace lakesync::catalog
