// A small RAII layer over the SQLite C API for the SQL catalog: one connection, parameterised
// statements with text parameters, and IMMEDIATE transactions. Every error names the database
// file and carries a kind the catalog acts on (kUnavailable for a database still locked after
// the busy timeout, kCorrupt for a file that is not a SQLite database, kAlreadyExists for a
// constraint violation, kIO for the rest).
//
// A SqliteDb is NOT safe for concurrent use: the SQL catalog serialises access with its own mutex,
// because statements of different threads on one connection would join each other's transactions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"

struct sqlite3;

namespace lakesync::catalog::sql_internal {

// Statement parameters and result cells: every column the catalog uses is text or NULL.
using Value = std::optional<std::string>;
using Row = std::vector<Value>;

class SqliteDb {
 public:
  // Opens (creating if missing) the database at `path` (":memory:" for a private in-memory one)
  // and sets `PRAGMA busy_timeout`, so that a connection in another process holding the lock
  // makes us wait up to `busy_timeout_ms` instead of failing at once.
  // Errors: IOError naming the path when it cannot be opened (missing directory, permissions).
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, int busy_timeout_ms);

  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs a statement and returns its rows (empty for DML).
  Result<std::vector<Row>> Query(std::string_view sql, const std::vector<Value>& params = {});
  // Runs a DML statement and returns the number of rows it changed.
  Result<int64_t> Execute(std::string_view sql, const std::vector<Value>& params = {});

  const std::string& path() const { return path_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Error(int rc, std::string_view sql) const;

  sqlite3* db_;
  std::string path_;
};

// BEGIN IMMEDIATE takes the write lock up front. A deferred transaction that reads and then
// writes can fail with SQLITE_BUSY without waiting (SQLite refuses to wait when waiting could
// deadlock two readers upgrading at once); an immediate one waits in the busy handler instead.
// Rolls back on destruction unless committed.
class Transaction {
 public:
  static Result<Transaction> BeginImmediate(SqliteDb* db);
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  // Errors: as SqliteDb::Execute; the transaction is rolled back when COMMIT fails.
  Status Commit();

 private:
  explicit Transaction(SqliteDb* db) : db_(db) {}
  SqliteDb* db_;
};

// Escapes a string for a LIKE pattern with `ESCAPE '!'` (as Java's JdbcCatalog and pyiceberg do):
// '!' → "!!", '%' → "!%", '_' → "!_".
std::string EscapeLike(std::string_view text);

}  // namespace lakesync::catalog::sql_internal
