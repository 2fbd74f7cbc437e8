#include "lakesync/catalog/sql/sqlite_internal.h"

#include <sqlite3.h>

#include <algorithm>

namespace lakesync::catalog::sql_internal {
namespace {

// Finalizes a prepared statement on every way out.
struct StatementCloser {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using StatementPtr = std::unique_ptr<sqlite3_stmt, StatementCloser>;

}  // namespace

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::string& path, int busy_timeout_ms) {
  sqlite3* db = nullptr;
  // FULLMUTEX is belt and braces: the catalog already serialises access to the connection.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return IOError("opening SQLite catalog database {}: {}", path, message);
  }
  sqlite3_extended_result_codes(db, 1);
  std::unique_ptr<SqliteConnection> out(new SqliteConnection(db, path));
  // busy_timeout is a connection setting (not stored in the file), so setting it never changes
  // the database for other programs that share it.
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return out;
}

SqliteConnection::~SqliteConnection() { sqlite3_close_v2(db_); }

Status SqliteConnection::Error(int rc, std::string_view sql) const {
  const int primary = rc & 0xff;
  const std::string message = fmt::format("SQLite catalog database {}: {} (running \"{}\")", path_,
                                          sqlite3_errmsg(db_), AbbreviateSql(sql));
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return MakeError(ErrorKind::kUnavailable, message + "; another process held the lock past the busy timeout");
    case SQLITE_CONSTRAINT:
      return MakeError(ErrorKind::kAlreadyExists, message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return MakeError(ErrorKind::kCorrupt, message);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return MakeError(ErrorKind::kForbidden, message);
    default:
      return MakeError(ErrorKind::kIO, message);
  }
}

Result<std::vector<Row>> SqliteConnection::Query(std::string_view sql, const std::vector<Value>& params) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  StatementPtr stmt(raw);
  if (rc != SQLITE_OK) return Error(rc, sql);
  if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(stmt.get())) {
    return InvalidArgument("SQL statement \"{}\" takes {} parameters, got {}", AbbreviateSql(sql),
                           sqlite3_bind_parameter_count(stmt.get()), params.size());
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    rc = params[i] ? sqlite3_bind_text(stmt.get(), index, params[i]->data(), static_cast<int>(params[i]->size()),
                                       SQLITE_TRANSIENT)
                   : sqlite3_bind_null(stmt.get(), index);
    if (rc != SQLITE_OK) return Error(rc, sql);
  }
  std::vector<Row> rows;
  const int columns = sqlite3_column_count(stmt.get());
  while (true) {
    rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return Error(rc, sql);
    Row row(static_cast<size_t>(columns));
    for (int c = 0; c < columns; ++c) {
      if (sqlite3_column_type(stmt.get(), c) == SQLITE_NULL) continue;
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), c));
      row[static_cast<size_t>(c)] = std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt.get(), c)));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<int64_t> SqliteConnection::Execute(std::string_view sql, const std::vector<Value>& params) {
  ARROW_RETURN_NOT_OK(Query(sql, params));
  return static_cast<int64_t>(sqlite3_changes(db_));
}

Status SqliteConnection::Begin() { return Execute("BEGIN IMMEDIATE").status(); }
Status SqliteConnection::Commit() { return Execute("COMMIT").status(); }
Status SqliteConnection::Rollback() { return Execute("ROLLBACK").status(); }

Result<std::set<std::string>> SqliteConnection::ExistingTables(const std::vector<std::string>& names) {
  ARROW_ASSIGN_OR_RAISE(auto rows, Query("SELECT name FROM sqlite_master WHERE type = 'table'"));
  std::set<std::string> out;
  for (const Row& row : rows) {
    if (row[0] && std::find(names.begin(), names.end(), *row[0]) != names.end()) out.insert(*row[0]);
  }
  return out;
}

Result<bool> SqliteConnection::HasColumn(std::string_view table, std::string_view column) {
  ARROW_ASSIGN_OR_RAISE(auto rows, Query("SELECT 1 FROM pragma_table_info(?) WHERE lower(name) = lower(?)",
                                         {std::string(table), std::string(column)}));
  return !rows.empty();
}

}  // namespace lakesync::catalog::sql_internal
