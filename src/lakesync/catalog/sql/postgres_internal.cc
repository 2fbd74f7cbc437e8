#include "lakesync/catalog/sql/postgres_internal.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace lakesync::catalog::sql_internal {
namespace {

// PostgreSQL's OID of `text`: parameters are sent as text so that functions such as length() and
// substr() resolve without casts in the shared SQL.
constexpr Oid kTextOid = 25;

// Advisory lock key serialising catalog initialisation ("lakesync" in ASCII, as a bigint).
constexpr char kInitLock[] = "SELECT pg_advisory_xact_lock(7810757633117925731)";

bool IsWrite(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
  std::string head;
  for (; i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i])) && head.size() < 8; ++i) {
    head.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i]))));
  }
  return head == "INSERT" || head == "UPDATE" || head == "DELETE" || head == "COMMIT";
}

bool IsCommit(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
  std::string head(sql.substr(i, 6));
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::toupper(c); });
  return head == "COMMIT";
}

ErrorKind KindForSqlState(std::string_view state) {
  if (state.size() != 5) return ErrorKind::kIO;
  const std::string_view cls = state.substr(0, 2);
  if (cls == "23") return ErrorKind::kAlreadyExists;
  if (cls == "08" || cls == "53" || cls == "40" || state.substr(0, 3) == "57P") return ErrorKind::kUnavailable;
  if (cls == "28") return ErrorKind::kUnauthenticated;
  if (state == "42501") return ErrorKind::kForbidden;
  if (state == "3D000") return ErrorKind::kNotFound;
  return ErrorKind::kIO;
}

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

struct ResultCloser {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultCloser>;

}  // namespace

std::string ToPostgresPlaceholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 0;
  bool quoted = false;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'') quoted = !quoted;  // '' inside a literal toggles twice: still quoted
    if (c != '?' || quoted) {
      out.push_back(c);
      continue;
    }
    size_t j = i + 1;
    while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) ++j;
    if (j > i + 1) {
      out += "$" + std::string(sql.substr(i + 1, j - i - 1));
      i = j - 1;
    } else {
      out += "$" + std::to_string(++next);
    }
  }
  return out;
}

PostgresConnection::PostgresConnection(PGconn* conn) : conn_(conn) {
  description_ = fmt::format("PostgreSQL catalog database {} at {}:{}", PQdb(conn_) ? PQdb(conn_) : "?",
                             PQhost(conn_) ? PQhost(conn_) : "?", PQport(conn_) ? PQport(conn_) : "?");
}

PostgresConnection::~PostgresConnection() { PQfinish(conn_); }

Result<std::unique_ptr<PostgresConnection>> PostgresConnection::Open(const PostgresOptions& options) {
  // dbname holds the URI (expand_dbname=1); keywords after it override what the URI says.
  std::vector<std::string> keys = {"dbname", "connect_timeout", "application_name", "keepalives",
                                   "keepalives_idle", "keepalives_interval", "keepalives_count",
                                   "tcp_user_timeout"};
  std::vector<std::string> values = {options.uri, std::to_string(options.connect_timeout_s), "lakesync", "1", "30",
                                     "10", "3", "60000"};
  for (const auto& [k, v] : options.overrides) {
    keys.push_back(k);
    values.push_back(v);
  }
  std::vector<const char*> k_ptrs, v_ptrs;
  for (size_t i = 0; i < keys.size(); ++i) {
    k_ptrs.push_back(keys[i].c_str());
    v_ptrs.push_back(values[i].c_str());
  }
  k_ptrs.push_back(nullptr);
  v_ptrs.push_back(nullptr);
  PGconn* conn = PQconnectdbParams(k_ptrs.data(), v_ptrs.data(), /*expand_dbname=*/1);
  if (conn == nullptr) return MakeError(ErrorKind::kUnavailable, "PostgreSQL: out of memory while connecting");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = Trim(PQerrorMessage(conn));
    PQfinish(conn);
    ErrorKind kind = ErrorKind::kUnavailable;
    if (message.find("password authentication failed") != std::string::npos ||
        message.find("no password supplied") != std::string::npos ||
        message.find("no pg_hba.conf entry") != std::string::npos) {
      kind = ErrorKind::kUnauthenticated;
    } else if (message.find("does not exist") != std::string::npos && message.find("database") != std::string::npos) {
      kind = ErrorKind::kNotFound;
    } else if (message.find("invalid") != std::string::npos && message.find("URI") != std::string::npos) {
      kind = ErrorKind::kInvalidArgument;
    }
    // libpq's message names host and port (and the database or user when they are the problem),
    // never the password.
    return MakeError(kind, "connecting to the PostgreSQL catalog database: " + message);
  }
  return std::unique_ptr<PostgresConnection>(new PostgresConnection(conn));
}

Status PostgresConnection::EnsureConnected() {
  if (PQstatus(conn_) == CONNECTION_OK) return Status::OK();
  // A transaction that lost its connection is gone with it; the caller's next statement fails.
  if (in_transaction_) {
    return MakeError(ErrorKind::kUnavailable, description_ + ": the connection was lost inside a transaction");
  }
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return MakeError(ErrorKind::kUnavailable,
                     fmt::format("{}: cannot reconnect: {}", description_, Trim(PQerrorMessage(conn_))));
  }
  return Status::OK();
}

Result<std::vector<Row>> PostgresConnection::Run(std::string_view sql, const std::vector<Value>& params,
                                                 int64_t* changed) {
  ARROW_RETURN_NOT_OK(EnsureConnected());
  const std::string text = ToPostgresPlaceholders(sql);
  std::vector<const char*> values;
  std::vector<Oid> types(params.size(), kTextOid);
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  ResultPtr result(PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), types.data(), values.data(),
                                nullptr, nullptr, /*resultFormat=text*/ 0));
  const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    const bool lost = PQstatus(conn_) != CONNECTION_OK;
    std::string message = Trim(result ? PQresultErrorMessage(result.get()) : PQerrorMessage(conn_));
    if (message.empty()) message = Trim(PQerrorMessage(conn_));
    const std::string full = fmt::format("{}: {} (running \"{}\")", description_, message, AbbreviateSql(sql));
    if (lost) {
      if (in_transaction_ && !IsCommit(sql)) {
        // An uncommitted transaction dies with its connection: nothing of it was applied.
        return MakeError(ErrorKind::kUnavailable, full + "; the connection was lost");
      }
      if (IsWrite(sql)) {
        return MakeError(ErrorKind::kCommitStateUnknown,
                         full + "; the connection was lost after the statement was sent, so whether the server "
                                "applied it is unknown");
      }
      return MakeError(ErrorKind::kUnavailable, full + "; the connection was lost");
    }
    const char* state = result ? PQresultErrorField(result.get(), PG_DIAG_SQLSTATE) : nullptr;
    return MakeError(KindForSqlState(state ? state : ""), full);
  }
  if (changed) {
    const char* tuples = PQcmdTuples(result.get());
    *changed = tuples && *tuples ? std::stoll(tuples) : 0;
  }
  std::vector<Row> rows;
  if (status == PGRES_TUPLES_OK) {
    const int n = PQntuples(result.get());
    const int columns = PQnfields(result.get());
    rows.reserve(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      Row row(static_cast<size_t>(columns));
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(result.get(), r, c)) continue;
        row[static_cast<size_t>(c)] =
            std::string(PQgetvalue(result.get(), r, c), static_cast<size_t>(PQgetlength(result.get(), r, c)));
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

Result<std::vector<Row>> PostgresConnection::Query(std::string_view sql, const std::vector<Value>& params) {
  return Run(sql, params, nullptr);
}

Result<int64_t> PostgresConnection::Execute(std::string_view sql, const std::vector<Value>& params) {
  int64_t changed = 0;
  ARROW_RETURN_NOT_OK(Run(sql, params, &changed).status());
  return changed;
}

Status PostgresConnection::Begin() {
  ARROW_RETURN_NOT_OK(Run("BEGIN", {}, nullptr).status());
  in_transaction_ = true;
  return Status::OK();
}

Status PostgresConnection::Commit() {
  auto st = Run("COMMIT", {}, nullptr).status();
  in_transaction_ = false;
  return st;
}

Status PostgresConnection::Rollback() {
  if (!in_transaction_) return Status::OK();
  in_transaction_ = false;
  if (PQstatus(conn_) != CONNECTION_OK) return Status::OK();  // the server dropped it already
  return Run("ROLLBACK", {}, nullptr).status();
}

Status PostgresConnection::LockForInit() { return Run(kInitLock, {}, nullptr).status(); }

Result<std::set<std::string>> PostgresConnection::ExistingTables(const std::vector<std::string>& names) {
  ARROW_ASSIGN_OR_RAISE(auto rows, Query("SELECT table_name FROM information_schema.tables WHERE table_schema = "
                                         "current_schema()"));
  std::set<std::string> out;
  for (const Row& row : rows) {
    if (row[0] && std::find(names.begin(), names.end(), *row[0]) != names.end()) out.insert(*row[0]);
  }
  return out;
}

Result<bool> PostgresConnection::HasColumn(std::string_view table, std::string_view column) {
  ARROW_ASSIGN_OR_RAISE(auto rows, Query("SELECT 1 FROM information_schema.columns WHERE table_schema = "
                                         "current_schema() AND table_name = ? AND lower(column_name) = lower(?)",
                                         {std::string(table), std::string(column)}));
  return !rows.empty();
}

}  // namespace lakesync::catalog::sql_internal
