// The SQL catalog's connection to PostgreSQL through libpq (sql_connection_internal.h), so that a team
// shares one catalog in a database server the way Java's JdbcCatalog and pyiceberg's SqlCatalog do.
//
// - One libpq connection; `?`/`?N` parameters become `$N`, every parameter is sent as text (type
//   `text`, so `length(?)` resolves) and every cell read back as text.
// - A broken connection is re-established before the next statement. A write statement (INSERT,
//   UPDATE, DELETE, COMMIT) whose connection broke after it was sent may have been applied by the
//   server: it is kCommitStateUnknown, never retried here. Anything else that could not reach the
//   server is kUnavailable.
// - TCP keepalives (and a TCP user timeout) make a vanished server an error within about a minute
//   instead of a hang.
// - SQLSTATE classes map to kinds: 23 (constraint) kAlreadyExists, 08/57P/53 (connection, shutdown,
//   resources) and 40 (serialisation, deadlock) kUnavailable, 28 kUnauthenticated, 42501 kForbidden,
//   3D000 (no such database) kNotFound, the rest kIO.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "lakesync/catalog/sql/sql_connection_internal.h"

typedef struct pg_conn PGconn;

namespace lakesync::catalog::sql_internal {

struct PostgresOptions {
  // A libpq connection URI: postgresql://[user[:password]@][host][:port][/dbname][?param=value&...]
  std::string uri;
  // Keywords that override the URI's (Java's jdbc.user / jdbc.password), e.g. {"user", "x"}.
  std::map<std::string, std::string> overrides;
  int connect_timeout_s = 10;
};

class PostgresConnection : public Connection {
 public:
  // Connects. Errors: kUnavailable (server unreachable), kUnauthenticated, kNotFound (no such
  // database), InvalidArgument (a malformed URI); the message names host, port and database but never
  // the password.
  static Result<std::unique_ptr<PostgresConnection>> Open(const PostgresOptions& options);

  ~PostgresConnection() override;
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  Result<std::vector<Row>> Query(std::string_view sql, const std::vector<Value>& params = {}) override;
  Result<int64_t> Execute(std::string_view sql, const std::vector<Value>& params = {}) override;
  Status Begin() override;
  Status Commit() override;
  Status Rollback() override;
  Status LockForInit() override;
  Result<std::set<std::string>> ExistingTables(const std::vector<std::string>& names) override;
  Result<bool> HasColumn(std::string_view table, std::string_view column) override;
  const std::string& description() const override { return description_; }

 private:
  explicit PostgresConnection(PGconn* conn);
  Status EnsureConnected();
  Result<std::vector<Row>> Run(std::string_view sql, const std::vector<Value>& params, int64_t* changed);

  PGconn* conn_;
  std::string description_;
  bool in_transaction_ = false;
};

// `?` → `$1`, `$2`, ...; `?N` → `$N`; quoted literals ('...') are left alone.
std::string ToPostgresPlaceholders(std::string_view sql);

}  // namespace lakesync::catalog::sql_internal
