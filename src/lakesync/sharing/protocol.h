// The Delta Sharing protocol (delta-io/delta-sharing PROTOCOL.md; digest in shared/specs/delta-sharing.md),
// defined once for lakesync's server and its client: the capabilities header, request bodies and
// query strings, the NDJSON lines of both response formats (`parquet` and `delta`), the error body
// {"errorCode", "message"}, profile files and table URLs.
//
// Every ToJson gives one JSON object to be written on one line (list answers too: the Python client
// reads only the first line of a body). Absent optional fields are left out, never sent as null.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"
#include "lakesync/delta/actions.h"

namespace lakesync::sharing {

using Json = nlohmann::json;

// ---- Headers ----

inline constexpr char kCapabilitiesHeader[] = "delta-sharing-capabilities";
inline constexpr char kTableVersionHeader[] = "Delta-Table-Version";
inline constexpr char kFileIdHashHeader[] = "fileidhash";

enum class ResponseFormat { kParquet, kDelta };
std::string_view ResponseFormatName(ResponseFormat format);

// delta-sharing-capabilities: "responseformat=delta,parquet;readerfeatures=deletionvectors;includeendstreamaction=true".
// Keys and values are case-insensitive; unknown keys are ignored (the protocol grows by adding keys).
struct Capabilities {
  std::vector<ResponseFormat> response_formats;  // as asked, in order; empty: not asked (parquet)
  std::set<std::string> reader_features;         // lower-cased
  bool include_end_stream_action = false;
  bool async_query = false;

  // Errors: InvalidArgument for an unknown response format or a malformed boolean.
  static Result<Capabilities> Parse(std::string_view header);
  std::string ToHeader() const;
};

// ---- Error body ----

// The protocol's error codes (the reference server's spellings).
inline constexpr char kInvalidParameterValue[] = "INVALID_PARAMETER_VALUE";
inline constexpr char kResourceDoesNotExist[] = "RESOURCE_DOES_NOT_EXIST";
inline constexpr char kUnsupportedOperation[] = "UNSUPPORTED_OPERATION";
inline constexpr char kMalformedRequest[] = "MALFORMED_REQUEST";
inline constexpr char kUnauthenticated[] = "UNAUTHENTICATED";
inline constexpr char kPermissionDenied[] = "PERMISSION_DENIED";
inline constexpr char kInternalError[] = "INTERNAL_ERROR";

struct ErrorBody {
  std::string error_code;
  std::string message;
  Json ToJson() const;
  // A body that is not the error JSON becomes {INTERNAL_ERROR, <the body's start>}.
  static ErrorBody FromText(std::string_view body);
};

// The error code a server answers for an error kind (the HTTP status comes from http::StatusCodeFor,
// except that sharing answers Unsupported with 400 as the protocol does).
const char* ErrorCodeFor(ErrorKind kind);
int HttpStatusFor(ErrorKind kind);
// A client's Status for a non-2xx answer: the kind from the status code, the server's message.
Status StatusFromAnswer(int http_status, std::string_view body, std::string_view what);

// ---- Profiles and table URLs ----

struct Profile {
  int share_credentials_version = 1;
  std::string endpoint;  // without a trailing '/'
  std::string bearer_token;
  std::optional<int64_t> expiration_time_ms;

  // {"shareCredentialsVersion":1,"endpoint":...,"bearerToken":...,"expirationTime":"2021-11-12T00:12:29.0Z"}
  // (version 2 with "type":"bearer_token" too). Errors: InvalidArgument naming the field; Unsupported
  // for other credential types (OAuth, basic).
  static Result<Profile> FromJson(const Json& json);
  // Errors: also NotFound for a missing file, naming it.
  static Result<Profile> Load(const std::string& path);
};

// "<profile file>#<share>.<schema>.<table>": split on the last '#', then exactly three dot-separated
// names (as the Python client does). Errors: InvalidArgument naming the URL.
struct TableUrl {
  std::string profile;
  std::string share, schema, table;
  static Result<TableUrl> Parse(std::string_view url);
  std::string Name() const { return share + "." + schema + "." + table; }
};

// ---- List answers ----

struct ShareItem {
  std::string name;
  std::optional<std::string> id;
};
struct SchemaItem {
  std::string name, share;
};
struct TableItem {
  std::string name, schema, share;
  std::optional<std::string> share_id, id;
};
Json ToJson(const ShareItem& item);
Json ToJson(const SchemaItem& item);
Json ToJson(const TableItem& item);
Result<ShareItem> ShareItemFromJson(const Json& json);
Result<SchemaItem> SchemaItemFromJson(const Json& json);
Result<TableItem> TableItemFromJson(const Json& json);

// ---- Requests ----

// The body of POST .../query. Unknown fields are ignored; wrong types are MALFORMED_REQUEST.
struct QueryRequest {
  std::vector<std::string> predicate_hints;
  std::optional<std::string> json_predicate_hints;
  std::optional<int64_t> limit_hint;
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;
  std::optional<int64_t> starting_version;
  std::optional<int64_t> ending_version;
  std::optional<int64_t> max_files;
  std::optional<std::string> page_token;
  bool include_refresh_token = false;
  std::optional<std::string> refresh_token;
  bool include_historical_protocol = false;

  Json ToJson() const;
  // Errors: InvalidArgument (the server answers MALFORMED_REQUEST) naming the field.
  static Result<QueryRequest> FromJson(const Json& json);
};

// The query string of GET .../changes.
struct ChangesRequest {
  std::optional<int64_t> starting_version;
  std::optional<std::string> starting_timestamp;
  std::optional<int64_t> ending_version;
  std::optional<std::string> ending_timestamp;
  bool include_historical_metadata = false;
  std::optional<int64_t> max_files;
  std::optional<std::string> page_token;

  std::multimap<std::string, std::string> ToQuery() const;
  // Booleans are read case-insensitively ("True" from Python). Errors: InvalidArgument naming the parameter.
  static Result<ChangesRequest> FromQuery(const std::multimap<std::string, std::string>& params);
};

// A boolean query or header value: true/false in any case. Errors: InvalidArgument naming `name`.
Result<bool> ParseBool(std::string_view text, std::string_view name);

// ---- NDJSON lines ----

// protocol line. Parquet: {"protocol":{"minReaderVersion":1}}. Delta: {"protocol":{"deltaProtocol":{...}}}.
struct ProtocolLine {
  int32_t min_reader_version = 1;               // parquet
  std::optional<delta::Protocol> delta_protocol;  // delta
  std::optional<int64_t> version;
};

// metaData line. The metadata fields are Delta's; in parquet format they are sent flat, in delta
// format as deltaMetadata.
struct MetadataLine {
  delta::Metadata metadata;
  std::optional<int64_t> version, size, num_files;
};

// A file line: `file` (snapshot), `add`, `cdf`, `remove` (parquet changes); in delta format always
// `file` wrapping the Delta action, whose path is the URL.
struct FileLine {
  enum class Kind { kFile, kAdd, kCdf, kRemove } kind = Kind::kFile;
  std::string url;
  std::string id;
  std::optional<std::string> deletion_vector_file_id;
  std::map<std::string, std::optional<std::string>> partition_values;
  int64_t size = 0;
  std::optional<std::string> stats;
  std::optional<int64_t> version, timestamp, expiration_timestamp;
  std::optional<delta::FileAction> action;  // delta format: the action (path = url)
};

struct EndStreamAction {
  std::optional<std::string> refresh_token, next_page_token, error_message;
  std::optional<int64_t> min_url_expiration_timestamp;
};

struct Line {
  std::optional<ProtocolLine> protocol;
  std::optional<MetadataLine> metadata;
  std::optional<FileLine> file;
  std::optional<EndStreamAction> end_stream;
};

Json ToJson(const ProtocolLine& line, ResponseFormat format);
Json ToJson(const MetadataLine& line, ResponseFormat format);
Json ToJson(const FileLine& line, ResponseFormat format);
Json ToJson(const EndStreamAction& line);

// Parses one line of a metadata, query or changes answer. Lines of other kinds (queryStatus, lines
// of future protocol versions) come back empty. Errors: Corrupt naming the line number.
Result<Line> ParseLine(std::string_view text, ResponseFormat format, int line_number);

// The file action a line stands for, with path = URL: the delta format's own action; in parquet
// format `file`/`add` are adds, `remove` removes and `cdf` cdc files, partition values keyed by the
// (logical = physical) column names.
delta::FileAction ToFileAction(const FileLine& line);

}  // namespace lakesync::sharing
