#include "lakesync/catalog/sql/sql_connection_internal.h"

namespace lakesync::catalog::sql_internal {

Result<Transaction> Transaction::Begin(Connection* connection) {
  ARROW_RETURN_NOT_OK(connection->Begin());
  return Transaction(connection);
}

Transaction::~Transaction() {
  if (connection_) (void)connection_->Rollback();
}

Status Transaction::Commit() {
  Connection* connection = connection_;
  Status st = connection->Commit();
  // A failed COMMIT leaves the transaction open (SQLite: SQLITE_BUSY) or already rolled back; the
  // destructor's ROLLBACK settles both. On success there is nothing left to roll back.
  if (st.ok()) connection_ = nullptr;
  return st;
}

std::string EscapeLike(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '!' || c == '%' || c == '_') out.push_back('!');
    out.push_back(c);
  }
  return out;
}

std::string_view AbbreviateSql(std::string_view sql) {
  constexpr size_t kMax = 80;
  return sql.size() <= kMax ? sql : sql.substr(0, kMax);
}

}  // namespace lakesync::catalog::sql_internal
