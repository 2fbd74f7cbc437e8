#include "lakesync/sharing/client.h"

#include <chrono>

#include "lakesync/http/url.h"

namespace lakesync::sharing {

Capabilities SharingClient::RequestCapabilities() {
  Capabilities caps;
  caps.response_formats = {ResponseFormat::kDelta, ResponseFormat::kParquet};
  caps.reader_features = {"deletionvectors", "columnmapping", "timestampntz", "v2checkpoint", "vacuumprotocolcheck",
                          "typewidening"};
  caps.include_end_stream_action = true;
  return caps;
}

Result<std::shared_ptr<SharingClient>> SharingClient::Make(Profile profile, http::ClientOptions options) {
  ARROW_RETURN_NOT_OK(http::ParseUrl(profile.endpoint).status());
  if (profile.expiration_time_ms) {
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    if (now >= *profile.expiration_time_ms) {
      return MakeError(ErrorKind::kUnauthenticated,
                       fmt::format("the profile's bearer token expired (expirationTime {} ms); ask the provider for a "
                                   "new profile",
                                   *profile.expiration_time_ms));
    }
  }
  options.default_headers.emplace("Authorization", "Bearer " + profile.bearer_token);
  options.default_headers.emplace("User-Agent", "lakesync-delta-sharing");
  ARROW_ASSIGN_OR_RAISE(auto http, http::Client::Make(std::move(options)));
  return std::shared_ptr<SharingClient>(new SharingClient(std::move(profile), std::move(http)));
}

std::string SharingClient::TablePath(const TableName& t) const {
  return profile_.endpoint + "/shares/" + http::PercentEncode(t.share) + "/schemas/" + http::PercentEncode(t.schema) +
         "/tables/" + http::PercentEncode(t.table);
}

Result<http::Response> SharingClient::Call(http::Request request, std::string_view what) {
  ARROW_ASSIGN_OR_RAISE(auto res, http_->Send(request));
  if (res.status < 200 || res.status >= 300) return StatusFromAnswer(res.status, res.body, what);
  return res;
}

template <typename T>
Result<std::vector<T>> SharingClient::List(const std::string& path, Result<T> (*parse)(const Json&)) {
  std::vector<T> out;
  std::string token;
  for (int pages = 0; pages < 100000; ++pages) {
    std::string url = profile_.endpoint + path;
    if (!token.empty()) url += "?pageToken=" + http::PercentEncode(token);
    ARROW_ASSIGN_OR_RAISE(auto res, Call(http::Request::Get(url), "listing " + path));
    const std::string first = res.body.substr(0, res.body.find('\n'));
    auto j = Json::parse(first, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Corrupt("listing {}: the answer is not a JSON object", path);
    if (auto items = j.find("items"); items != j.end() && items->is_array()) {
      for (const auto& item : *items) {
        ARROW_ASSIGN_OR_RAISE(auto v, parse(item));
        out.push_back(std::move(v));
      }
    }
    auto next = j.find("nextPageToken");
    if (next == j.end() || !next->is_string() || next->get<std::string>().empty()) return out;
    token = next->get<std::string>();
  }
  return Corrupt("listing {}: the server keeps sending pages", path);
}

Result<std::vector<ShareItem>> SharingClient::ListShares() { return List<ShareItem>("/shares", ShareItemFromJson); }

Result<std::vector<SchemaItem>> SharingClient::ListSchemas(const std::string& share) {
  return List<SchemaItem>("/shares/" + http::PercentEncode(share) + "/schemas", SchemaItemFromJson);
}

Result<std::vector<TableItem>> SharingClient::ListTables(const std::string& share, const std::string& schema) {
  return List<TableItem>("/shares/" + http::PercentEncode(share) + "/schemas/" + http::PercentEncode(schema) + "/tables",
                         TableItemFromJson);
}

Result<std::vector<TableItem>> SharingClient::ListAllTables(const std::string& share) {
  return List<TableItem>("/shares/" + http::PercentEncode(share) + "/all-tables", TableItemFromJson);
}

Result<int64_t> SharingClient::TableVersion(const TableName& table, const std::optional<std::string>& starting_timestamp) {
  std::string url = TablePath(table) + "/version";
  if (starting_timestamp) url += "?startingTimestamp=" + http::PercentEncode(*starting_timestamp);
  ARROW_ASSIGN_OR_RAISE(auto res, Call(http::Request::Get(url), "version of shared table " + table.Name()));
  const std::string v = res.Header(kTableVersionHeader);
  try {
    size_t used = 0;
    const int64_t version = std::stoll(v, &used);
    if (used == v.size()) return version;
  } catch (...) {
  }
  return Corrupt("version of shared table {}: the answer has no valid {} header", table.Name(), kTableVersionHeader);
}

Status SharingClient::ParseAnswer(const http::Response& res, std::string_view what, TableAnswer& a) {
  const std::string version = res.Header(kTableVersionHeader);
  if (version.empty()) return Corrupt("{}: the answer has no {} header", what, kTableVersionHeader);
  if (a.version < 0) {
    try {
      a.version = std::stoll(version);
    } catch (...) {
      return Corrupt("{}: {} header '{}' is not a number", what, kTableVersionHeader, version);
    }
  }
  // The server states its format; a parquet answer to a delta request is allowed (legacy servers).
  ARROW_ASSIGN_OR_RAISE(auto caps, Capabilities::Parse(res.Header(kCapabilitiesHeader)));
  a.format = !caps.response_formats.empty() && caps.response_formats[0] == ResponseFormat::kDelta
                 ? ResponseFormat::kDelta
                 : ResponseFormat::kParquet;
  const bool expect_end = caps.include_end_stream_action;
  bool seen_protocol = false, seen_metadata = false;
  a.end.reset();
  size_t pos = 0;
  int number = 0;
  while (pos < res.body.size()) {
    size_t eol = res.body.find('\n', pos);
    if (eol == std::string::npos) eol = res.body.size();
    std::string_view text(res.body.data() + pos, eol - pos);
    pos = eol + 1;
    ++number;
    if (text.empty()) continue;
    LS_ASSIGN_OR_RAISE_CTX(auto line, ParseLine(text, a.format, number), "{}", what);
    if (line.end_stream) {
      if (line.end_stream->error_message) {
        return IOError("{}: the server failed while answering: {}", what, *line.end_stream->error_message);
      }
      a.end = std::move(line.end_stream);
    } else if (line.protocol) {
      if (!seen_protocol) a.protocol = std::move(*line.protocol);
      seen_protocol = true;
    } else if (line.metadata) {
      if (!seen_metadata) {
        a.metadata = std::move(*line.metadata);
      } else {
        a.historical_metadata.push_back(std::move(*line.metadata));
      }
      seen_metadata = true;
    } else if (line.file) {
      a.files.push_back(std::move(*line.file));
    }
  }
  if (!seen_protocol || !seen_metadata) return Corrupt("{}: the answer lacks its protocol or metaData line", what);
  if (expect_end && !a.end) {
    return IOError("{}: the answer ended without the endStreamAction the server promised (truncated?)", what);
  }
  return Status::OK();
}

Result<TableAnswer> SharingClient::Metadata(const TableName& table, std::optional<int64_t> version) {
  std::string url = TablePath(table) + "/metadata";
  if (version) url += "?version=" + std::to_string(*version);
  http::Request req = http::Request::Get(url);
  Capabilities caps = RequestCapabilities();
  caps.include_end_stream_action = false;
  req.headers.emplace(kCapabilitiesHeader, caps.ToHeader());
  const std::string what = "metadata of shared table " + table.Name();
  ARROW_ASSIGN_OR_RAISE(auto res, Call(req, what));
  TableAnswer answer;
  ARROW_RETURN_NOT_OK(ParseAnswer(res, what, answer));
  return answer;
}

Result<TableAnswer> SharingClient::Query(const TableName& table, QueryRequest request) {
  const std::string what = "query of shared table " + table.Name();
  TableAnswer answer;
  for (int page = 0;; ++page) {
    http::Request req = http::Request::Post(TablePath(table) + "/query", request.ToJson().dump());
    req.idempotent = true;  // a query changes nothing on the server
    req.headers.emplace(kCapabilitiesHeader, RequestCapabilities().ToHeader());
    ARROW_ASSIGN_OR_RAISE(auto res, Call(req, what));
    ARROW_RETURN_NOT_OK(ParseAnswer(res, what, answer));
    if (!answer.end || !answer.end->next_page_token || answer.end->next_page_token->empty()) return answer;
    request.page_token = answer.end->next_page_token;
    request.include_refresh_token = false;
  }
}

Result<TableAnswer> SharingClient::Changes(const TableName& table, ChangesRequest request) {
  const std::string what = "changes of shared table " + table.Name();
  TableAnswer answer;
  for (int page = 0;; ++page) {
    http::Request req = http::Request::Get(TablePath(table) + "/changes?" + http::EncodeQuery(request.ToQuery()));
    req.headers.emplace(kCapabilitiesHeader, RequestCapabilities().ToHeader());
    ARROW_ASSIGN_OR_RAISE(auto res, Call(req, what));
    ARROW_RETURN_NOT_OK(ParseAnswer(res, what, answer));
    if (!answer.end || !answer.end->next_page_token || answer.end->next_page_token->empty()) return answer;
    request.page_token = answer.end->next_page_token;
  }
}

}  // namespace lakesync::sharing
