// A Delta Sharing client: the protocol's calls against a server named by a profile (lakesync's own
// server, the reference server, Databricks). It asks for the delta response format with every reader
// feature lakesync reads, accepts parquet answers (legacy servers), follows list and file pages, and
// checks what the protocol says a client must check (Delta-Table-Version, the endStreamAction it
// asked for, errorMessage).
//
// SharedTable (shared_table.h) turns the answers into rows.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/http/client.h"
#include "lakesync/sharing/protocol.h"

namespace lakesync::sharing {

struct TableName {
  std::string share, schema, table;
  std::string Name() const { return share + "." + schema + "." + table; }
};

// What /metadata, /query and /changes answer.
struct TableAnswer {
  int64_t version = -1;  // Delta-Table-Version
  ResponseFormat format = ResponseFormat::kParquet;
  ProtocolLine protocol;
  MetadataLine metadata;
  std::vector<MetadataLine> historical_metadata;  // later metaData lines, in order
  std::vector<FileLine> files;                    // every page
  std::optional<EndStreamAction> end;             // of the last page
};

class SharingClient {
 public:
  // Errors: InvalidArgument for a malformed endpoint; Unauthenticated when the profile's token has
  // expired (by its expirationTime).
  static Result<std::shared_ptr<SharingClient>> Make(Profile profile, http::ClientOptions options = {});

  Result<std::vector<ShareItem>> ListShares();
  Result<std::vector<SchemaItem>> ListSchemas(const std::string& share);
  Result<std::vector<TableItem>> ListTables(const std::string& share, const std::string& schema);
  Result<std::vector<TableItem>> ListAllTables(const std::string& share);

  // The latest version, or with a timestamp the first version committed at or after it.
  Result<int64_t> TableVersion(const TableName& table, const std::optional<std::string>& starting_timestamp = {});
  Result<TableAnswer> Metadata(const TableName& table, std::optional<int64_t> version = {});
  // Follows nextPageToken until the last page.
  Result<TableAnswer> Query(const TableName& table, QueryRequest request);
  Result<TableAnswer> Changes(const TableName& table, ChangesRequest request);

  const Profile& profile() const { return profile_; }
  const std::shared_ptr<http::Client>& http() const { return http_; }

  // The capabilities this client sends.
  static Capabilities RequestCapabilities();

 private:
  SharingClient(Profile profile, std::shared_ptr<http::Client> http) : profile_(std::move(profile)), http_(std::move(http)) {}
  std::string TablePath(const TableName& table) const;
  template <typename T>
  Result<std::vector<T>> List(const std::string& path, Result<T> (*parse)(const Json&));
  Result<http::Response> Call(http::Request request, std::string_view what);
  // Adds one page's lines to `answer` (the first page sets its version, protocol and metadata).
  Status ParseAnswer(const http::Response& res, std::string_view what, TableAnswer& answer);

  Profile profile_;
  std::shared_ptr<http::Client> http_;
};

}  // namespace lakesync::sharing
