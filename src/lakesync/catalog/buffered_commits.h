// A catalog that holds table commits back and commits them all at once with CommitTransaction: how a
// job writing several destination tables (a table-name template) makes them change atomically
// together. Everything but CommitTable goes straight to the wrapped catalog.
//
// CommitTable checks the requirements against the table as it is now (so a conflict is found, and
// retried by the commit loop, as early as without buffering), applies the updates to get the
// metadata the commit will produce, records the commit and returns that metadata (with the base's
// metadata location: nothing is written yet). CommitAll then sends every recorded commit in one
// transaction; a requirement that fails by then fails the whole transaction (kCommitConflict), and
// nothing is committed.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "lakesync/catalog/catalog.h"

namespace lakesync::catalog {

class BufferedCommitCatalog : public Catalog {
 public:
  // `inner` must support multi-table commits when more than one table is committed.
  explicit BufferedCommitCatalog(std::shared_ptr<Catalog> inner) : inner_(std::move(inner)) {}

  std::string name() const override { return inner_->name(); }
  std::shared_ptr<io::FileIO> io() const override { return inner_->io(); }

  Result<std::vector<Namespace>> ListNamespaces(const Namespace& parent) override { return inner_->ListNamespaces(parent); }
  Status CreateNamespace(const Namespace& ns, const Properties& properties) override {
    return inner_->CreateNamespace(ns, properties);
  }
  Result<Properties> LoadNamespaceMetadata(const Namespace& ns) override { return inner_->LoadNamespaceMetadata(ns); }
  Result<std::optional<std::string>> DefaultNamespaceLocation(const Namespace& ns) override {
    return inner_->DefaultNamespaceLocation(ns);
  }
  Result<bool> NamespaceExists(const Namespace& ns) override { return inner_->NamespaceExists(ns); }
  Status DropNamespace(const Namespace& ns) override { return inner_->DropNamespace(ns); }
  Status UpdateNamespaceProperties(const Namespace& ns, const std::vector<std::string>& removals,
                                   const Properties& updates) override {
    return inner_->UpdateNamespaceProperties(ns, removals, updates);
  }
  Result<std::vector<TableIdentifier>> ListTables(const Namespace& ns) override { return inner_->ListTables(ns); }
  Result<LoadedTable> CreateTable(const CreateTableRequest& request) override { return inner_->CreateTable(request); }
  Result<LoadedTable> StageCreateTable(const CreateTableRequest& request) override {
    return inner_->StageCreateTable(request);
  }
  Result<LoadedTable> LoadTable(const TableIdentifier& identifier) override { return inner_->LoadTable(identifier); }
  Result<bool> TableExists(const TableIdentifier& identifier) override { return inner_->TableExists(identifier); }
  Status DropTable(const TableIdentifier& identifier, bool purge) override { return inner_->DropTable(identifier, purge); }
  Status RenameTable(const TableIdentifier& from, const TableIdentifier& to) override {
    return inner_->RenameTable(from, to);
  }
  Result<LoadedTable> RegisterTable(const TableIdentifier& identifier, const std::string& metadata_location) override {
    return inner_->RegisterTable(identifier, metadata_location);
  }

  // Buffers the commit (see above). Errors: kCommitConflict when a requirement fails now;
  // kInvalidArgument when the table already has a buffered commit.
  Result<LoadedTable> CommitTable(const TableIdentifier& identifier,
                                  const std::vector<iceberg::TableRequirement>& requirements,
                                  const std::vector<iceberg::TableUpdate>& updates) override;
  bool SupportsMultiTableCommit() const override { return inner_->SupportsMultiTableCommit(); }
  Status CommitTransaction(const std::vector<TableChange>& changes) override {
    return inner_->CommitTransaction(changes);
  }

  // Commits every buffered change together (one table: a plain CommitTable) and clears the buffer.
  // Errors: as Catalog::CommitTransaction.
  Status CommitAll();
  // The tables with buffered commits, in the order they were buffered.
  std::vector<TableIdentifier> pending() const;

 private:
  std::shared_ptr<Catalog> inner_;
  mutable std::mutex mutex_;
  std::vector<TableChange> pending_;
};

}  // namespace lakesync::catalog
