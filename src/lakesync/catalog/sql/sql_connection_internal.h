// The one seam between the SQL catalog and its databases. The catalog's SQL text and its commit
// protocol (the compare-and-swap UPDATE) exist once, in sql_catalog.cc; a Connection only runs
// statements and answers the few questions whose SQL differs between databases (which tables and
// columns exist, how to serialise first-time initialisation).
//
// SQL text given to a Connection uses SQLite's parameter spelling, `?` (positional) or `?N`
// (numbered, 1-based), and only standard SQL that SQLite (3.24+) and PostgreSQL both run:
// `INSERT ... ON CONFLICT (...) DO NOTHING / DO UPDATE SET x = excluded.x`, `LIKE ... ESCAPE '!'`,
// `substr`, `length`, `UNION`, `LIMIT`. Parameters and result cells are text or NULL.
//
// Error kinds a Connection returns, which the catalog acts on: kAlreadyExists for a constraint
// violation, kUnavailable for a database that is busy, locked or unreachable (retryable),
// kCommitStateUnknown for a write whose connection broke after it was sent (it may have been
// applied), kCorrupt for a file that is not a database, kUnauthenticated / kForbidden, kIO otherwise.
//
// A Connection is NOT safe for concurrent use: the catalog serialises access with its own mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::catalog::sql_internal {

using Value = std::optional<std::string>;
using Row = std::vector<Value>;

class Connection {
 public:
  virtual ~Connection() = default;

  // Runs a statement and returns its rows (empty for DML).
  virtual Result<std::vector<Row>> Query(std::string_view sql, const std::vector<Value>& params = {}) = 0;
  // Runs a DML statement and returns the number of rows it changed.
  virtual Result<int64_t> Execute(std::string_view sql, const std::vector<Value>& params = {}) = 0;

  // Starts a transaction that will write. SQLite takes the write lock up front (BEGIN IMMEDIATE: a
  // deferred transaction that reads, then writes, can fail with SQLITE_BUSY instead of waiting);
  // PostgreSQL row locks and constraints need nothing more than BEGIN.
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;

  // Inside a transaction: makes concurrent initialisations of one database (two programs creating
  // the catalog tables at once) take turns. SQLite's immediate transaction already does.
  virtual Status LockForInit() { return Status::OK(); }

  // Which of `names` exist as tables (in PostgreSQL: in the connection's current schema).
  virtual Result<std::set<std::string>> ExistingTables(const std::vector<std::string>& names) = 0;
  // Whether `table` has a column named `column` (case-insensitive).
  virtual Result<bool> HasColumn(std::string_view table, std::string_view column) = 0;

  // Names the database in messages: "SQLite database /x/catalog.db", "PostgreSQL database db at h:5432".
  virtual const std::string& description() const = 0;
};

// A transaction that rolls back on destruction unless committed.
class Transaction {
 public:
  static Result<Transaction> Begin(Connection* connection);
  Transaction(Transaction&& other) noexcept : connection_(other.connection_) { other.connection_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  // Errors: as Connection::Commit; the transaction is rolled back when COMMIT fails.
  Status Commit();

 private:
  explicit Transaction(Connection* connection) : connection_(connection) {}
  Connection* connection_;
};

// Escapes a string for a LIKE pattern with `ESCAPE '!'` (as Java's JdbcCatalog and pyiceberg do):
// '!' → "!!", '%' → "!%", '_' → "!_".
std::string EscapeLike(std::string_view text);

// The first `max` characters of a statement, for error messages.
std::string_view AbbreviateSql(std::string_view sql);

}  // namespace lakesync::catalog::sql_internal
