#include "lakesync/catalog/metastore_catalog.h"

#include "lakesync/catalog/metadata_files.h"

#include <list>
#include <mutex>
#include <regex>
#include <set>
#include <unordered_map>

#include "lakesync/common/logging.h"

namespace lakesync::catalog {

Status MetastoreCatalog::CheckNamespaceForCreate(const Namespace& ns) {
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace '{}' does not exist", NamespaceToString(ns));
  return Status::OK();
}

namespace {

// Parsed metadata files, shared by every catalog of the process. Only files named
// "<version>-<uuid>.metadata.json" are kept: each is written once under a fresh uuid and never
// rewritten, so a location always means the same content. ("v<N>.metadata.json" names come back
// when a table is dropped and created again at the same location, so those are always read.)
// Loading a table is then one pointer lookup in the catalog plus this cache: what a REST server
// answering many loadTable calls needs.
class MetadataCache {
 public:
  static MetadataCache& Instance() {
    static MetadataCache cache;
    return cache;
  }
  static bool Cacheable(const std::string& location) {
    static const std::regex kUnique(
        R"((^|/)\d+-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(\.gz)?\.metadata\.json$)");
    return std::regex_search(location, kUnique);
  }
  iceberg::TableMetadataPtr Get(const std::string& location) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(location);
    if (it == entries_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second.second);
    return it->second.first;
  }
  void Put(const std::string& location, iceberg::TableMetadataPtr metadata) {
    constexpr size_t kCapacity = 256;
    std::lock_guard lock(mutex_);
    if (entries_.count(location)) return;
    order_.push_front(location);
    entries_[location] = {std::move(metadata), order_.begin()};
    if (entries_.size() > kCapacity) {
      entries_.erase(order_.back());
      order_.pop_back();
    }
  }

 private:
  std::mutex mutex_;
  std::list<std::string> order_;  // most recently used first
  std::unordered_map<std::string, std::pair<iceberg::TableMetadataPtr, std::list<std::string>::iterator>> entries_;
};

}  // namespace

Result<LoadedTable> MetastoreCatalog::LoadTable(const TableIdentifier& identifier) {
  ARROW_ASSIGN_OR_RAISE(auto location, CurrentMetadataLocation(identifier));
  if (!location) return NotFound("table '{}' does not exist in catalog '{}'", identifier.ToString(), name());
  auto& cache = MetadataCache::Instance();
  const bool cacheable = MetadataCache::Cacheable(*location);
  if (cacheable) {
    if (auto cached = cache.Get(*location)) return LoadedTable{identifier, *location, cached, nullptr};
  }
  LS_ASSIGN_OR_RAISE_CTX(auto metadata, ReadTableMetadata(*io(), *location), "loading table '{}'",
                         identifier.ToString());
  if (cacheable) cache.Put(*location, metadata);
  return LoadedTable{identifier, *location, metadata, nullptr};
}

Result<LoadedTable> MetastoreCatalog::CreateTable(const CreateTableRequest& request) {
  ARROW_ASSIGN_OR_RAISE(auto staged, StageCreateTable(request));
  std::vector<iceberg::TableRequirement> requirements = {iceberg::AssertCreate{}};
  auto created = CommitTable(request.identifier, requirements, iceberg::UpdatesForNewTable(*staged.metadata));
  // Another writer can create the table between the check above and the commit; AssertCreate then
  // fails as a commit conflict, which for a create means the table already exists.
  if (!created.ok() && KindOf(created.status()) == ErrorKind::kCommitConflict) {
    return AlreadyExists("table '{}' already exists (created concurrently)", request.identifier.ToString());
  }
  return created;
}

Result<LoadedTable> MetastoreCatalog::StageCreateTable(const CreateTableRequest& request) {
  ARROW_RETURN_NOT_OK(CheckNamespaceForCreate(request.identifier.ns));
  ARROW_ASSIGN_OR_RAISE(bool exists, TableExists(request.identifier));
  if (exists) return AlreadyExists("table '{}' already exists", request.identifier.ToString());
  std::string location;
  if (request.location) {
    ARROW_ASSIGN_OR_RAISE(location, io::NormalizeLocation(*request.location));
  } else {
    ARROW_ASSIGN_OR_RAISE(location, DefaultTableLocation(request.identifier));
  }
  ARROW_ASSIGN_OR_RAISE(auto metadata, NewTableMetadata(request, location));
  return LoadedTable{request.identifier, "", metadata, nullptr};
}

Result<MetastoreCatalog::PreparedCommit> MetastoreCatalog::PrepareCommit(
    const TableIdentifier& identifier, const std::vector<iceberg::TableRequirement>& requirements,
    const std::vector<iceberg::TableUpdate>& updates) {
  const std::string what = "committing to table '" + identifier.ToString() + "'";
  PreparedCommit prepared{identifier, std::nullopt, nullptr};
  ARROW_ASSIGN_OR_RAISE(auto current_location, CurrentMetadataLocation(identifier));
  if (current_location) {
    ARROW_ASSIGN_OR_RAISE(auto loaded, LoadTable(identifier));
    prepared.base = std::move(loaded);
  }
  const iceberg::TableMetadata* base_metadata = prepared.base ? prepared.base->metadata.get() : nullptr;
  LS_RETURN_NOT_OK_CTX(iceberg::CheckRequirements(base_metadata, requirements), "{}", what);
  iceberg::ApplyOptions options;
  if (prepared.base) {
    options.base_metadata_location = prepared.base->metadata_location;
    options.max_previous_versions =
        static_cast<int>(prepared.base->metadata->PropertyAsInt(iceberg::kPropMetadataPreviousVersionsMax, 100));
  }
  LS_ASSIGN_OR_RAISE_CTX(prepared.next, iceberg::ApplyUpdates(base_metadata, updates, options), "{}", what);
  return prepared;
}

Result<LoadedTable> MetastoreCatalog::CommitTable(const TableIdentifier& identifier,
                                                  const std::vector<iceberg::TableRequirement>& requirements,
                                                  const std::vector<iceberg::TableUpdate>& updates) {
  ARROW_ASSIGN_OR_RAISE(auto prepared, PrepareCommit(identifier, requirements, updates));
  const auto& base = prepared.base;
  LS_ASSIGN_OR_RAISE_CTX(std::string new_location,
                         SwapMetadata(identifier, base ? base->metadata_location : std::string(), *prepared.next),
                         "committing to table '{}'", identifier.ToString());
  if (base && prepared.next->Property(iceberg::kPropMetadataDeleteAfterCommit, "false") == "true") {
    DeleteExpiredMetadata(*base, *prepared.next);
  }
  return LoadedTable{identifier, new_location, prepared.next, nullptr};
}

Result<std::vector<std::string>> MetastoreCatalog::SwapMetadataAll(const std::vector<PreparedCommit>& commits) {
  return Unsupported("catalog '{}' cannot commit several tables atomically", name());
}

Status MetastoreCatalog::CommitTransaction(const std::vector<TableChange>& changes) {
  if (changes.empty()) return Status::OK();
  std::set<TableIdentifier> seen;
  std::vector<PreparedCommit> prepared;
  for (const auto& change : changes) {
    if (!seen.insert(change.identifier).second) {
      return InvalidArgument("a transaction names table '{}' more than once", change.identifier.ToString());
    }
    ARROW_ASSIGN_OR_RAISE(auto p, PrepareCommit(change.identifier, change.requirements, change.updates));
    prepared.push_back(std::move(p));
  }
  ARROW_ASSIGN_OR_RAISE(auto locations, SwapMetadataAll(prepared));
  for (const auto& p : prepared) {
    if (p.base && p.next->Property(iceberg::kPropMetadataDeleteAfterCommit, "false") == "true") {
      DeleteExpiredMetadata(*p.base, *p.next);
    }
  }
  return Status::OK();
}

void MetastoreCatalog::DeleteExpiredMetadata(const LoadedTable& base, const iceberg::TableMetadata& next) {
  // Metadata files that fell off the metadata log (write.metadata.previous-versions-max) are no
  // longer reachable from the table; deleting them is best effort, like Java's.
  std::set<std::string> kept;
  for (const auto& e : next.metadata_log) kept.insert(e.metadata_file);
  std::vector<std::string> candidates;
  for (const auto& e : base.metadata->metadata_log) candidates.push_back(e.metadata_file);
  candidates.push_back(base.metadata_location);
  for (const auto& file : candidates) {
    if (kept.count(file)) continue;
    auto st = io()->Delete(file);
    if (!st.ok()) LS_LOG_WARN("could not delete old metadata file {}: {}", file, st.message());
  }
}

}  // namespace lakesync::catalog
