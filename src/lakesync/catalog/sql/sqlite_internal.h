// The SQL catalog's connection to SQLite (sql_connection_internal.h): one connection with a busy
// timeout, parameterised statements with text parameters, IMMEDIATE transactions. Errors name the
// database file: kUnavailable for a database still locked after the busy timeout, kCorrupt for a
// file that is not a SQLite database, kAlreadyExists for a constraint violation, kIO for the rest.
#pragma once

#include <memory>
#include <string>

#include "lakesync/catalog/sql/sql_connection_internal.h"

struct sqlite3;

namespace lakesync::catalog::sql_internal {

class SqliteConnection : public Connection {
 public:
  // Opens (creating if missing) the database at `path` (":memory:" for a private in-memory one)
  // and sets the busy timeout, so that a connection in another process holding the lock makes us
  // wait up to `busy_timeout_ms` instead of failing at once.
  // Errors: IOError naming the path when it cannot be opened (missing directory, permissions).
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::string& path, int busy_timeout_ms);

  ~SqliteConnection() override;
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  Result<std::vector<Row>> Query(std::string_view sql, const std::vector<Value>& params = {}) override;
  Result<int64_t> Execute(std::string_view sql, const std::vector<Value>& params = {}) override;
  Status Begin() override;
  Status Commit() override;
  Status Rollback() override;
  Result<std::set<std::string>> ExistingTables(const std::vector<std::string>& names) override;
  Result<bool> HasColumn(std::string_view table, std::string_view column) override;
  const std::string& description() const override { return description_; }

  const std::string& path() const { return path_; }

 private:
  SqliteConnection(sqlite3* db, std::string path)
      : db_(db), path_(std::move(path)), description_("SQLite catalog database " + path_) {}
  Status Error(int rc, std::string_view sql) const;

  sqlite3* db_;
  std::string path_;
  std::string description_;
};

}  // namespace lakesync::catalog::sql_internal
