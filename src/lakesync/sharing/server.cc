#include "lakesync/sharing/server.h"

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>
#include <openssl/crypto.h>

#include <arrow/type.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <list>
#include <mutex>

#include "lakesync/common/logging.h"
#include "lakesync/common/text.h"
#include "lakesync/delta/deletion_vector.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/delta/table_config.h"
#include "lakesync/http/url.h"
#include "lakesync/io/file_io.h"
#include "lakesync/io/location.h"
#include "lakesync/sharing/predicate.h"
#include "lakesync/sharing/protocol.h"
#include "lakesync/sharing/signer.h"

namespace lakesync::sharing {
namespace {

constexpr char kNdjson[] = "application/x-ndjson; charset=utf-8";
constexpr char kJson[] = "application/json; charset=utf-8";
constexpr int64_t kMaxListResults = 500;
// The query key of a file URL's signature. Named as Databricks' pre-signed URLs name theirs (the
// value is lakesync's own HMAC-SHA256) because delta-kernel-rs, inside the Python client, DuckDB and
// ClickHouse, takes a URL for a pre-signed one only by such a known key (X-Amz-Signature, sp,
// X-Goog-Credential, X-OSS-Credential, X-Databricks-Signature); any other URL it reads from the
// local filesystem by its path.
constexpr char kSignatureParam[] = "X-Databricks-Signature";

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// An error the handlers answer with: the kind picks the HTTP status, `code` overrides the error code.
struct Reply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<const std::string> body;
  std::string content_type = kNdjson;
};

Reply ErrorReply(const Status& st, const char* code = nullptr) {
  Reply r;
  const ErrorKind kind = KindOf(st);
  r.status = HttpStatusFor(kind);
  ErrorBody body{code ? code : ErrorCodeFor(kind), EscapeInvalidUtf8(st.message())};
  if (r.status >= 500) body.error_code = kInternalError;
  r.body = std::make_shared<const std::string>(body.ToJson().dump());
  r.content_type = kJson;
  return r;
}

void Send(const Reply& reply, httplib::Response& res) {
  res.status = reply.status;
  for (const auto& [k, v] : reply.headers) res.set_header(k.c_str(), v);
  if (!reply.body) return;
  auto body = reply.body;
  if (body->size() < (1u << 16)) {
    res.set_content(*body, reply.content_type.c_str());
    return;
  }
  // Large answers (10,000 files) are written from the shared, possibly cached, body without a copy.
  res.set_content_provider(body->size(), reply.content_type.c_str(),
                           [body](size_t offset, size_t length, httplib::DataSink& sink) {
                             sink.write(body->data() + offset, length);
                             return true;
                           });
}

// Thrown inside handlers and turned into an error reply at the route: keeps each handler a straight
// line of checks. Never escapes this file.
struct HandlerError {
  Status status;
  const char* code = nullptr;
};

[[noreturn]] void Fail(Status st, const char* code = nullptr) { throw HandlerError{std::move(st), code}; }

template <typename T>
T Check(Result<T> r, const char* code = nullptr) {
  if (!r.ok()) Fail(r.status(), code);
  return std::move(r).ValueUnsafe();
}

struct Principal {
  std::string name;  // recipient name, or "" for the shared bearer token
  bool all_shares = false;
  std::set<std::string> shares;  // lower-case
};

// A table's snapshot as the server serves it, cached by location and version.
struct Snapshot {
  delta::Protocol protocol;
  delta::Metadata metadata;
  std::vector<delta::FileAction> files;  // in a stable order (the log replay's keys)
  int64_t size = 0;
};

// One NDJSON body being written.
struct Body {
  std::string text;
  void Add(const Json& line) {
    text += line.dump(-1, ' ', false, Json::error_handler_t::replace);
    text += '\n';
  }
};

std::string Join(const std::string& a, const std::string& b) { return a + "\n" + b; }

}  // namespace

struct SharingService::Impl {
  ServerConfig config;
  SharingServiceOptions options;
  std::shared_ptr<io::FileIO> io;
  std::unique_ptr<Signer> signer;

  std::map<std::string, const ShareConfig*> shares;  // lower-case name
  struct TableRef {
    const ShareConfig* share = nullptr;
    const SharedSchemaConfig* schema = nullptr;
    const SharedTableConfig* table = nullptr;
    std::string Name() const { return share->name + "." + schema->name + "." + table->name; }
  };

  std::mutex cache_mutex;
  std::list<std::pair<std::string, std::shared_ptr<const Snapshot>>> snapshots;  // LRU, front newest
  std::list<std::pair<std::string, std::shared_ptr<const Reply>>> replies;

  int64_t Now() const { return options.now_ms ? options.now_ms() : SystemNowMs(); }

  // URLs issued within the same bucket share an expiry, so a cached answer stays byte-identical for a
  // while; every URL still lives at least the configured timeout.
  int64_t UrlExpiry() const {
    const int64_t timeout = config.url_timeout_seconds * 1000;
    const int64_t bucket = std::clamp<int64_t>(timeout / 60, 1, 60'000);
    const int64_t t = Now() + timeout;
    return (t + bucket - 1) / bucket * bucket;
  }

  // ---- Authentication and lookup ----

  Principal Authenticate(const httplib::Request& req) const {
    const std::string auth = req.get_header_value("Authorization");
    if (auth.size() < 7 || AsciiLower(auth.substr(0, 7)) != "bearer ") {
      Fail(MakeError(ErrorKind::kUnauthenticated, "a bearer token is required (Authorization: Bearer <token>)"));
    }
    std::string token = auth.substr(7);
    while (!token.empty() && token.front() == ' ') token.erase(token.begin());
    if (config.bearer_token && config.bearer_token->size() == token.size() &&
        CRYPTO_memcmp(config.bearer_token->data(), token.data(), token.size()) == 0) {
      Principal p;
      p.all_shares = true;
      return p;
    }
    const std::string hash = Sha256Hex(token);
    for (const auto& r : config.recipients) {
      if (CRYPTO_memcmp(hash.data(), r.token_sha256.data(), hash.size()) != 0) continue;
      if (r.expires_ms && Now() >= *r.expires_ms) {
        Fail(MakeError(ErrorKind::kUnauthenticated, fmt::format("the token of recipient '{}' has expired", r.name)));
      }
      Principal p;
      p.name = r.name;
      p.shares = r.shares;
      return p;
    }
    Fail(MakeError(ErrorKind::kUnauthenticated, "the bearer token is not valid"));
  }

  bool MaySee(const Principal& p, const ShareConfig& share) const {
    return p.all_shares || p.shares.count(AsciiLower(share.name)) > 0;
  }

  const ShareConfig& FindShare(const Principal& p, const std::string& name) const {
    auto it = shares.find(AsciiLower(name));
    // A recipient learns nothing about shares it was not given: unknown and not granted read alike.
    if (!p.all_shares && (it == shares.end() || !MaySee(p, *it->second))) {
      Fail(MakeError(ErrorKind::kForbidden,
                     fmt::format("share '{}' is not shared with recipient '{}'", name, p.name)));
    }
    if (it == shares.end()) Fail(NotFound("share '{}' does not exist", name));
    return *it->second;
  }

  const SharedSchemaConfig& FindSchema(const ShareConfig& share, const std::string& name) const {
    for (const auto& s : share.schemas) {
      if (AsciiLower(s.name) == AsciiLower(name)) return s;
    }
    Fail(NotFound("schema '{}' does not exist in share '{}'", name, share.name));
  }

  TableRef FindTable(const Principal& p, const httplib::Request& req) const {
    TableRef ref;
    ref.share = &FindShare(p, req.matches[1]);
    ref.schema = &FindSchema(*ref.share, req.matches[2]);
    const std::string name = req.matches[3];
    for (const auto& t : ref.schema->tables) {
      if (AsciiLower(t.name) == AsciiLower(name)) ref.table = &t;
    }
    if (!ref.table) Fail(NotFound("table '{}' does not exist in {}.{}", name, ref.share->name, ref.schema->name));
    return ref;
  }

  std::shared_ptr<delta::DeltaTable> OpenTable(const TableRef& ref) const {
    auto table = delta::DeltaTable::Open(ref.table->location, io);
    if (!table.ok()) {
      Fail(WithContext(table.status(), fmt::format("shared table {}", ref.Name())));
    }
    return *table;
  }

  void RequireHistory(const TableRef& ref, std::string_view what) const {
    if (!ref.table->history_shared) {
      Fail(InvalidArgument("{} needs history sharing, and table {} is shared without it (historyShared: true in "
                           "shares.yaml)",
                           what, ref.Name()));
    }
  }

  void CheckStartVersion(const TableRef& ref, int64_t version) const {
    if (version < 0) Fail(InvalidArgument("version {} is negative", version));
    if (version < ref.table->start_version) {
      Fail(InvalidArgument("you can only query table {} since version {}", ref.Name(), ref.table->start_version));
    }
  }

  int64_t ParseTimestamp(const std::string& text, const char* what) const {
    auto ms = delta::ParseTimestampMillis(text);
    if (!ms.ok()) Fail(InvalidArgument("{}: {}", what, ms.status().message()));
    return *ms;
  }

  // ---- Snapshots ----

  std::shared_ptr<const Snapshot> LoadSnapshot(delta::DeltaTable& table, int64_t version) {
    const std::string key = table.location() + "@" + std::to_string(version);
    {
      std::lock_guard<std::mutex> lock(cache_mutex);
      for (auto it = snapshots.begin(); it != snapshots.end(); ++it) {
        if (it->first == key) {
          snapshots.splice(snapshots.begin(), snapshots, it);
          return it->second;
        }
      }
    }
    auto state = Check(table.StateAt(version, true));
    auto snap = std::make_shared<Snapshot>();
    snap->protocol = *state.protocol;
    snap->metadata = *state.metadata;
    snap->files.reserve(state.files.size());
    for (auto& [k, f] : state.files) {
      snap->size += f.size.value_or(0);
      snap->files.push_back(std::move(f));
    }
    std::lock_guard<std::mutex> lock(cache_mutex);
    snapshots.emplace_front(key, snap);
    while (snapshots.size() > 8) snapshots.pop_back();
    return snap;
  }

  // ---- Response format ----

  struct Negotiated {
    ResponseFormat format = ResponseFormat::kParquet;
    bool end_stream = false;
    bool delta_ids = false;  // file ids with the delta scheme (SHA-256) rather than parquet's (MD5)
    std::string file_id_hash;  // echoed when asked
  };

  // Which reader features a protocol + metadata need from a client (the ones the parquet format
  // cannot carry).
  static std::pair<bool, bool> AdvancedFeatures(const delta::Protocol& protocol, const delta::Metadata& md) {
    bool dv = false, cm = false;
    if (protocol.reader_features) {
      for (const auto& f : *protocol.reader_features) {
        if (f == "deletionVectors") dv = true;
      }
    }
    if (auto it = md.configuration.find("delta.enableDeletionVectors"); it != md.configuration.end()) {
      if (AsciiLower(it->second) == "true") dv = true;
    }
    auto mode = delta::ColumnMapping(protocol, md);
    if (mode.ok() && *mode != delta::ColumnMappingMode::kNone) cm = true;
    return {dv, cm};
  }

  Negotiated Negotiate(const httplib::Request& req, const TableRef& ref,
                       const std::vector<std::pair<const delta::Protocol*, const delta::Metadata*>>& states) const {
    auto caps = Check(Capabilities::Parse(req.get_header_value(kCapabilitiesHeader)));
    bool dv = false, cm = false, simple = true;
    for (const auto& [p, m] : states) {
      auto [d, c] = AdvancedFeatures(*p, *m);
      dv |= d;
      cm |= c;
      simple &= p->min_reader_version == 1;
    }
    Negotiated n;
    const auto& formats = caps.response_formats;
    const bool wants_delta = std::find(formats.begin(), formats.end(), ResponseFormat::kDelta) != formats.end();
    const bool wants_parquet =
        formats.empty() || std::find(formats.begin(), formats.end(), ResponseFormat::kParquet) != formats.end();
    if (wants_delta && (!wants_parquet || !simple || dv || cm)) {
      n.format = ResponseFormat::kDelta;
    } else if (dv || cm) {
      Fail(Unsupported("table {} uses {}, which the parquet response format cannot carry: ask for "
                       "responseformat=delta with readerfeatures={}",
                       ref.Name(), dv && cm ? "deletion vectors and column mapping" : dv ? "deletion vectors" : "column mapping",
                       dv && cm ? "deletionvectors,columnmapping" : dv ? "deletionvectors" : "columnmapping"));
    }
    if (n.format == ResponseFormat::kDelta) {
      if (dv && !caps.reader_features.count("deletionvectors")) {
        Fail(Unsupported("table {} has deletion vectors: the client must list deletionvectors in readerfeatures",
                         ref.Name()));
      }
      if (cm && !caps.reader_features.count("columnmapping")) {
        Fail(Unsupported("table {} uses column mapping: the client must list columnmapping in readerfeatures",
                         ref.Name()));
      }
    }
    n.end_stream = caps.include_end_stream_action;
    n.delta_ids = n.format == ResponseFormat::kDelta;
    const std::string hash = AsciiLower(req.get_header_value(kFileIdHashHeader));
    if (!hash.empty()) {
      if (hash != "parquet" && hash != "delta") {
        Fail(InvalidArgument("header {} must be parquet or delta, not '{}'", kFileIdHashHeader, hash));
      }
      n.delta_ids = hash == "delta";
      n.file_id_hash = hash;
    }
    return n;
  }

  void ResponseHeaders(Reply& reply, const Negotiated& n, int64_t version, bool end_stream) const {
    reply.headers.emplace_back(kTableVersionHeader, std::to_string(version));
    // Exactly one format, never an echo of the request: the Python client tests for substrings.
    std::string caps = std::string("responseformat=") + std::string(ResponseFormatName(n.format));
    if (end_stream) caps += ";includeendstreamaction=true";
    reply.headers.emplace_back(kCapabilitiesHeader, caps);
    if (!n.file_id_hash.empty()) reply.headers.emplace_back(kFileIdHashHeader, n.file_id_hash);
  }

  // The metadata a client sees. Parquet: configuration reduced to the change feed flag, as the
  // reference server does. `for_changes`: a change feed in delta format of a table that records none
  // says enableChangeDataFeed, because this server vouches for the feed it computes (docs/sharing.md).
  MetadataLine MetadataFor(const TableRef& ref, const delta::Metadata& md, ResponseFormat format,
                           bool for_changes) const {
    MetadataLine line;
    line.metadata = md;
    if (ref.table->id) line.metadata.id = *ref.table->id;
    if (format == ResponseFormat::kParquet) {
      line.metadata.configuration.clear();
      if (ref.table->history_shared && (delta::ChangeDataFeedEnabled(md) || for_changes)) {
        line.metadata.configuration["enableChangeDataFeed"] = "true";
      }
    } else if (for_changes) {
      line.metadata.configuration["delta.enableChangeDataFeed"] = "true";
    }
    return line;
  }

  ProtocolLine ProtocolFor(const delta::Protocol& protocol) const {
    ProtocolLine line;
    line.delta_protocol = protocol;
    return line;
  }

  // ---- Signed URLs ----

  std::string BaseUrl(const httplib::Request& req) const {
    if (!options.public_url.empty()) return options.public_url;
    std::string host = req.get_header_value("Host");
    if (host.empty()) host = req.local_addr + ":" + std::to_string(req.local_port);
    return "http://" + host;
  }

  // The path of a file (or deletion vector) below the table root, for its URL. Files outside the
  // root are refused: a shared table exposes its own directory and nothing else.
  std::string RelativePath(const TableRef& ref, const std::string& root, const std::string& raw) const {
    std::string prefix = root;
    if (prefix.back() != '/') prefix += '/';
    if (raw.rfind(prefix, 0) == 0 && raw.find("/.") == std::string::npos) return raw.substr(prefix.size());
    // file:/x, file:///x and /x name the same file; compare canonical spellings.
    const std::string location = Check(io::NormalizeLocation(raw));
    if (location.rfind(prefix, 0) != 0) {
      Fail(Unsupported("table {} references {}, which is outside its directory {}; lakesync shares only files "
                       "below a table's root",
                       ref.Name(), location, root));
    }
    return location.substr(prefix.size());
  }

  std::string SignUrl(const std::string& base, const TableRef& ref, const std::string& rel, int64_t expires) const {
    const std::string triple = ref.share->name + "/" + ref.schema->name + "/" + ref.table->name;
    std::string path;
    size_t start = 0;
    while (true) {
      const size_t slash = rel.find('/', start);
      path += "/" + http::PercentEncode(std::string_view(rel).substr(start, slash == std::string::npos ? slash : slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    const std::string sig = signer->Sign(Join(Join(triple, rel), std::to_string(expires)));
    return base + config.endpoint + "/files/" + http::PercentEncode(ref.share->name) + "/" +
           http::PercentEncode(ref.schema->name) + "/" + http::PercentEncode(ref.table->name) + path +
           "?expires=" + std::to_string(expires) + "&" + kSignatureParam + "=" + sig;
  }

  struct UrlContext {
    std::string base;
    std::string root;
    int64_t expires = 0;
  };

  // A file line for one action: its URL signed, its deletion vector pointed at a signed URL too.
  FileLine MakeFileLine(const TableRef& ref, const UrlContext& u, const delta::FileAction& f, const Negotiated& n,
                        FileLine::Kind kind) const {
    FileLine line;
    line.kind = kind;
    const std::string location = Check(delta::ResolveLogPath(u.root, f.path));
    line.url = SignUrl(u.base, ref, RelativePath(ref, u.root, location), u.expires);
    line.id = n.delta_ids ? Sha256Hex(f.path) : Md5Hex(f.path);
    if (f.partition_values) {
      line.partition_values = *f.partition_values;
    }
    line.size = f.size.value_or(0);
    line.stats = f.stats;
    line.expiration_timestamp = u.expires;
    if (n.format == ResponseFormat::kDelta) {
      delta::FileAction a = f;
      a.path = line.url;
      if (a.deletion_vector && a.deletion_vector->storage_type != "i" && a.deletion_vector->cardinality > 0) {
        const std::string dv_location = Check(delta::DeletionVectorLocation(u.root, *a.deletion_vector));
        line.deletion_vector_file_id = Sha256Hex(a.deletion_vector->UniqueId());
        a.deletion_vector->storage_type = "p";
        a.deletion_vector->path_or_inline_dv = SignUrl(u.base, ref, RelativePath(ref, u.root, dv_location), u.expires);
      }
      line.action = std::move(a);
    }
    return line;
  }

  // ---- Tokens ----

  // A hash of the request fields that a page token binds: a token for one query cannot page another.
  static std::string ParamsHash(const Json& params) { return Md5Hex(params.dump()); }

  struct Page {
    int64_t offset = 0;
    int64_t limit = -1;  // -1: everything
  };

  Page OpenPage(const std::optional<std::string>& token, std::optional<int64_t> max_files, const std::string& kind,
                const std::string& hash, std::optional<int64_t>* pinned_version) const {
    Page page;
    if (max_files) {
      if (*max_files <= 0) Fail(InvalidArgument("maxFiles must be greater than 0, not {}", *max_files));
      page.limit = std::min(*max_files, config.page_size_limit);
    }
    if (!token) return page;
    auto claims = Check(signer->Open(*token, "pageToken"));
    if (claims.value("k", "") != kind || claims.value("h", "") != hash) {
      Fail(InvalidArgument("pageToken belongs to another request (its parameters or table differ)"));
    }
    if (claims.value("x", int64_t{0}) < Now()) Fail(InvalidArgument("pageToken has expired"));
    page.offset = claims.value("o", int64_t{0});
    if (pinned_version && claims.contains("v")) *pinned_version = claims["v"].get<int64_t>();
    return page;
  }

  std::string NextPageToken(const std::string& kind, const std::string& hash, int64_t offset, int64_t version) const {
    return signer->Seal(Json{{"k", kind}, {"h", hash}, {"o", offset}, {"v", version}, {"x", Now() + config.page_token_ttl_ms}});
  }

  // ---- Endpoints ----

  Reply ListShares(const httplib::Request& req) {
    const Principal p = Authenticate(req);
    std::vector<Json> items;
    for (const auto& s : config.shares) {
      if (MaySee(p, s)) items.push_back(ToJson(ShareItem{s.name, std::nullopt}));
    }
    return ListReply(req, items, "shares");
  }

  Reply GetShare(const httplib::Request& req) {
    const Principal p = Authenticate(req);
    const ShareConfig& share = FindShare(p, req.matches[1]);
    Reply r;
    r.content_type = kJson;
    r.body = std::make_shared<const std::string>(Json{{"share", ToJson(ShareItem{share.name, std::nullopt})}}.dump());
    return r;
  }

  Reply ListSchemas(const httplib::Request& req) {
    const Principal p = Authenticate(req);
    const ShareConfig& share = FindShare(p, req.matches[1]);
    std::vector<Json> items;
    for (const auto& s : share.schemas) items.push_back(ToJson(SchemaItem{s.name, share.name}));
    return ListReply(req, items, "schemas/" + AsciiLower(share.name));
  }

  Reply ListTables(const httplib::Request& req, bool all) {
    const Principal p = Authenticate(req);
    const ShareConfig& share = FindShare(p, req.matches[1]);
    std::vector<Json> items;
    std::string scope = "tables/" + AsciiLower(share.name);
    for (const auto& s : share.schemas) {
      if (!all && AsciiLower(s.name) != AsciiLower(std::string(req.matches[2]))) continue;
      for (const auto& t : s.tables) items.push_back(ToJson(TableItem{t.name, s.name, share.name, std::nullopt, t.id}));
    }
    if (!all) {
      const SharedSchemaConfig& schema = FindSchema(share, req.matches[2]);
      scope += "/" + AsciiLower(schema.name);
    }
    return ListReply(req, items, scope);
  }

  Reply ListReply(const httplib::Request& req, const std::vector<Json>& items, const std::string& scope) {
    int64_t max = kMaxListResults;
    if (req.has_param("maxResults")) {
      const std::string text = req.get_param_value("maxResults");
      int64_t v = -1;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || v < 0 || v > kMaxListResults) {
        Fail(InvalidArgument("maxResults must be a whole number from 0 to {}, not '{}'", kMaxListResults, text));
      }
      max = v;
    }
    int64_t offset = 0;
    if (req.has_param("pageToken") && !req.get_param_value("pageToken").empty()) {
      auto claims = Check(signer->Open(req.get_param_value("pageToken"), "pageToken"));
      if (claims.value("k", "") != "list" || claims.value("s", "") != scope) {
        Fail(InvalidArgument("pageToken belongs to another listing"));
      }
      offset = claims.value("o", int64_t{0});
    }
    Json out = Json::object();
    Json page = Json::array();
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = offset; i < std::min(n, offset + max); ++i) page.push_back(items[i]);
    out["items"] = std::move(page);
    if (offset + max < n) out["nextPageToken"] = signer->Seal(Json{{"k", "list"}, {"s", scope}, {"o", offset + max}});
    Reply r;
    r.content_type = kJson;
    r.body = std::make_shared<const std::string>(out.dump());
    return r;
  }

  Reply TableVersion(const httplib::Request& req) {
    const Principal p = Authenticate(req);
    const TableRef ref = FindTable(p, req);
    auto table = OpenTable(ref);
    int64_t version = table->latest_version();
    if (req.has_param("startingTimestamp")) {
      RequireHistory(ref, "startingTimestamp");
      const int64_t ts = ParseTimestamp(req.get_param_value("startingTimestamp"), "startingTimestamp");
      version = Check(table->VersionAtOrAfter(ts));
      version = std::max(version, ref.table->start_version);
    }
    Reply r;
    r.headers.emplace_back(kTableVersionHeader, std::to_string(version));
    r.body = std::make_shared<const std::string>();
    r.content_type = kJson;
    return r;
  }

  int64_t SnapshotVersion(const TableRef& ref, delta::DeltaTable& table, const std::optional<int64_t>& version,
                          const std::optional<std::string>& timestamp) const {
    if (version && timestamp) Fail(InvalidArgument("give version or timestamp, not both"));
    if (version || timestamp) RequireHistory(ref, version ? "version" : "timestamp");
    delta::SnapshotScanOptions o;
    o.version = version;
    if (timestamp) o.as_of_timestamp_ms = ParseTimestamp(*timestamp, "timestamp");
    const int64_t v = Check(table.ResolveSnapshotVersion(o));
    if (version || timestamp) CheckStartVersion(ref, v);
    return v;
  }

  Reply Metadata(const httplib::Request& req) {
    const Principal p = Authenticate(req);
    const TableRef ref = FindTable(p, req);
    auto table = OpenTable(ref);
    std::optional<int64_t> version;
    std::optional<std::string> timestamp;
    if (req.has_param("version")) {
      auto v = ChangesRequest::FromQuery({{"startingVersion", req.get_param_value("version")}});
      if (!v.ok()) Fail(InvalidArgument("version is not a valid number: '{}'", req.get_param_value("version")));
      version = v->starting_version;
    }
    if (req.has_param("timestamp")) timestamp = req.get_param_value("timestamp");
    const int64_t v = SnapshotVersion(ref, *table, version, timestamp);
    auto state = Check(table->StateAt(v, false));
    const Negotiated n = Negotiate(req, ref, {{&*state.protocol, &*state.metadata}});
    Body body;
    body.Add(ToJson(ProtocolFor(*state.protocol), n.format));
    MetadataLine md = MetadataFor(ref, *state.metadata, n.format, false);
    if (version || timestamp) md.version = v;
    body.Add(ToJson(md, n.format));
    Reply r;
    ResponseHeaders(r, n, v, false);
    r.body = std::make_shared<const std::string>(std::move(body.text));
    return r;
  }

  Reply Query(const httplib::Request& req) {
    const Principal p = Authenticate(req);
    const TableRef ref = FindTable(p, req);
    Json body_json = Json::object();
    if (!req.body.empty()) {
      body_json = Json::parse(req.body, nullptr, false);
      if (body_json.is_discarded()) Fail(InvalidArgument("the query body is not JSON"), kMalformedRequest);
    }
    const QueryRequest q = Check(QueryRequest::FromJson(body_json), kMalformedRequest);
    const int time_travel = (q.version ? 1 : 0) + (q.timestamp ? 1 : 0) + (q.starting_version ? 1 : 0);
    if (time_travel > 1) Fail(InvalidArgument("give at most one of version, timestamp and startingVersion"));
    if ((q.include_refresh_token || q.refresh_token) && time_travel > 0) {
      Fail(InvalidArgument("includeRefreshToken and refreshToken apply to latest-snapshot queries only"));
    }
    if ((q.include_refresh_token || q.refresh_token) && q.page_token) {
      Fail(InvalidArgument("includeRefreshToken and refreshToken cannot be combined with pageToken"));
    }
    if (q.version) CheckStartVersion(ref, *q.version);
    if (q.starting_version) return QueryChanges(req, ref, q);

    auto table = OpenTable(ref);
    // The fields that define the answer (a page token must come back with the same ones).
    Json params = body_json;
    for (const char* k : {"pageToken", "maxFiles", "includeRefreshToken", "refreshToken"}) params.erase(k);
    params["table"] = ref.Name();
    const std::string hash = ParamsHash(params);
    std::optional<int64_t> pinned;
    const Page page = OpenPage(q.page_token, q.max_files, "query", hash, &pinned);
    if (q.refresh_token) {
      auto claims = Check(signer->Open(*q.refresh_token, "refreshToken"));
      if (claims.value("k", "") != "refresh" || claims.value("t", "") != ref.Name()) {
        Fail(InvalidArgument("refreshToken belongs to another table"));
      }
      if (claims.value("x", int64_t{0}) < Now()) Fail(InvalidArgument("refreshToken has expired"));
      pinned = claims.value("v", int64_t{0});
    }
    const int64_t version = pinned ? *pinned : SnapshotVersion(ref, *table, q.version, q.timestamp);
    auto snap = LoadSnapshot(*table, version);
    const Negotiated n = Negotiate(req, ref, {{&snap->protocol, &snap->metadata}});
    const bool end_stream = n.end_stream || q.max_files || q.include_refresh_token || q.refresh_token;
    const std::string base = BaseUrl(req);
    const int64_t expires = UrlExpiry();

    const std::string cache_key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", ref.Name(), version,
                                              ResponseFormatName(n.format), n.delta_ids, hash, page.offset, page.limit,
                                              end_stream, base, expires);
    const bool cacheable = !q.include_refresh_token;  // refresh tokens carry the time they were issued
    if (cacheable) {
      std::lock_guard<std::mutex> lock(cache_mutex);
      for (auto it = replies.begin(); it != replies.end(); ++it) {
        if (it->first == cache_key) {
          replies.splice(replies.begin(), replies, it);
          return *it->second;
        }
      }
    }

    // Files: predicate hints prune by partition values and stats, then limitHint by numRecords.
    std::optional<FilePredicate> predicate;
    if (q.json_predicate_hints && config.evaluate_json_predicate_hints) {
      auto parsed = FilePredicate::Parse(*q.json_predicate_hints);
      if (parsed.ok()) {
        predicate = std::move(*parsed);
      } else {
        LS_LOG_INFO("sharing: ignoring jsonPredicateHints for {}: {}", ref.Name(), parsed.status().message());
      }
    }
    const delta::TableSchema* schema_for_names = nullptr;
    std::optional<delta::TableSchema> schema;
    if (predicate) {
      auto s = delta::SchemaOf(snap->protocol, snap->metadata);
      if (s.ok()) {
        schema = std::move(*s);
        schema_for_names = &*schema;
      } else {
        predicate.reset();
      }
    }
    std::vector<const delta::FileAction*> selected;
    selected.reserve(snap->files.size());
    int64_t rows = 0;
    for (const auto& f : snap->files) {
      if (q.limit_hint && rows >= *q.limit_hint) break;
      if (predicate) {
        std::map<std::string, std::optional<std::string>> values;
        const bool mapped = schema_for_names->mode != delta::ColumnMappingMode::kNone;
        if (f.partition_values) {
          for (size_t i = 0; i < schema_for_names->physical_names.size(); ++i) {
            auto it = f.partition_values->find(schema_for_names->physical_names[i]);
            if (it != f.partition_values->end()) values[schema_for_names->output->field(i)->name()] = it->second;
          }
        }
        Json stats;
        if (f.stats && !mapped) stats = Json::parse(*f.stats, nullptr, false);
        if (!predicate->MayMatch(values, stats.is_object() ? &stats : nullptr)) continue;
      }
      if (q.limit_hint) {
        auto n_rows = f.NumRecords();
        if (n_rows) rows += *n_rows - (f.deletion_vector ? f.deletion_vector->cardinality : 0);
      }
      selected.push_back(&f);
    }

    Body body;
    body.Add(ToJson(ProtocolFor(snap->protocol), n.format));
    MetadataLine md = MetadataFor(ref, snap->metadata, n.format, false);
    md.size = snap->size;
    md.num_files = static_cast<int64_t>(snap->files.size());
    if (q.version || q.timestamp) md.version = version;
    body.Add(ToJson(md, n.format));
    const UrlContext u{base, table->location(), expires};
    std::optional<int64_t> ts;
    if (q.version || q.timestamp) ts = Check(table->CommitTimestamp(version));
    const int64_t total = static_cast<int64_t>(selected.size());
    const int64_t last = page.limit < 0 ? total : std::min(total, page.offset + page.limit);
    for (int64_t i = page.offset; i < last; ++i) {
      FileLine line = MakeFileLine(ref, u, *selected[i], n, FileLine::Kind::kFile);
      if (ts) {
        line.version = version;
        line.timestamp = *ts;
      }
      body.Add(ToJson(line, n.format));
    }
    if (end_stream) {
      EndStreamAction e;
      if (last < total) e.next_page_token = NextPageToken("query", hash, last, version);
      if (q.include_refresh_token && !q.page_token) {
        e.refresh_token = signer->Seal(
            Json{{"k", "refresh"}, {"t", ref.Name()}, {"v", version}, {"x", Now() + config.refresh_token_ttl_ms}});
      }
      if (last > page.offset) e.min_url_expiration_timestamp = expires;
      body.Add(ToJson(e));
    }
    auto reply = std::make_shared<Reply>();
    ResponseHeaders(*reply, n, version, end_stream);
    reply->body = std::make_shared<const std::string>(std::move(body.text));
    if (cacheable) {
      std::lock_guard<std::mutex> lock(cache_mutex);
      replies.emplace_front(cache_key, reply);
      while (replies.size() > 16) replies.pop_back();
    }
    return *reply;
  }

  // The change lines of a plan, in both formats; `changes`: /changes (add/remove/cdf by the change
  // rule) rather than a startingVersion query (every data change file).
  void AddChangeLines(Body& body, const TableRef& ref, const delta::ChangePlan& plan, const Negotiated& n,
                      const UrlContext& u, bool historical_metadata, bool for_changes, const Page& page,
                      int64_t* emitted, int64_t* total) const {
    int64_t index = 0;
    for (const auto& c : plan.commits) {
      if (historical_metadata && c.metadata && page.offset == 0) {
        MetadataLine md = MetadataFor(ref, *c.metadata, n.format, for_changes);
        md.version = c.version;
        body.Add(ToJson(md, n.format));
      }
      for (const auto& f : c.files) {
        const int64_t i = index++;
        if (i < page.offset || (page.limit >= 0 && i >= page.offset + page.limit)) continue;
        FileLine::Kind kind = FileLine::Kind::kAdd;
        if (f.kind == delta::FileAction::Kind::kRemove) kind = FileLine::Kind::kRemove;
        if (f.kind == delta::FileAction::Kind::kCdc) kind = FileLine::Kind::kCdf;
        FileLine line = MakeFileLine(ref, u, f, n, kind);
        line.version = c.version;
        line.timestamp = c.timestamp_ms;
        if (kind != FileLine::Kind::kAdd && n.format == ResponseFormat::kParquet) line.stats.reset();
        body.Add(ToJson(line, n.format));
        ++*emitted;
      }
    }
    *total = index;
  }

  Reply RespondWithPlan(const httplib::Request& req, const TableRef& ref, delta::DeltaTable& table,
                        const delta::ChangePlan& plan, bool historical_metadata, bool for_changes,
                        std::optional<int64_t> max_files, const std::optional<std::string>& page_token,
                        const std::string& kind, const std::string& hash) {
    std::vector<std::pair<const delta::Protocol*, const delta::Metadata*>> states = {{&plan.protocol, &plan.metadata}};
    const delta::Protocol* protocol = &plan.protocol;
    for (const auto& c : plan.commits) {
      if (c.protocol) protocol = &*c.protocol;
      if (c.protocol || c.metadata) states.emplace_back(protocol, c.metadata ? &*c.metadata : &plan.metadata);
    }
    const Negotiated n = Negotiate(req, ref, states);
    const Page page = OpenPage(page_token, max_files, kind, hash, nullptr);
    const bool end_stream = n.end_stream || max_files.has_value();
    Body body;
    body.Add(ToJson(ProtocolFor(plan.protocol), n.format));
    MetadataLine md = MetadataFor(ref, plan.metadata, n.format, for_changes);
    md.version = plan.start_version;
    body.Add(ToJson(md, n.format));
    const UrlContext u{BaseUrl(req), table.location(), UrlExpiry()};
    int64_t emitted = 0, total = 0;
    AddChangeLines(body, ref, plan, n, u, historical_metadata, for_changes, page, &emitted, &total);
    if (end_stream) {
      EndStreamAction e;
      const int64_t next = page.offset + emitted;
      if (next < total) e.next_page_token = NextPageToken(kind, hash, next, plan.end_version);
      if (emitted > 0) e.min_url_expiration_timestamp = u.expires;
      body.Add(ToJson(e));
    }
    Reply r;
    ResponseHeaders(r, n, plan.start_version, end_stream);
    r.body = std::make_shared<const std::string>(std::move(body.text));
    return r;
  }

  // POST /query with startingVersion: every data change file of the versions since then.
  Reply QueryChanges(const httplib::Request& req, const TableRef& ref, const QueryRequest& q) {
    RequireHistory(ref, "startingVersion");
    CheckStartVersion(ref, *q.starting_version);
    if (q.ending_version && *q.ending_version < *q.starting_version) {
      Fail(InvalidArgument("endingVersion {} is before startingVersion {}", *q.ending_version, *q.starting_version));
    }
    auto table = OpenTable(ref);
    const int64_t latest = table->latest_version();
    if (*q.starting_version > latest) {
      Fail(InvalidArgument("startingVersion {} is after the latest version {} of table {}", *q.starting_version, latest,
                           ref.Name()));
    }
    Json params = {{"table", ref.Name()}, {"s", *q.starting_version}, {"e", q.ending_version.value_or(-1)}};
    const std::string hash = ParamsHash(params);
    std::optional<int64_t> pinned_end;
    if (q.page_token) OpenPage(q.page_token, q.max_files, "query-changes", hash, &pinned_end);
    delta::ChangeFeedOptions o;
    o.start_version = *q.starting_version;
    o.end_version = std::min(pinned_end.value_or(q.ending_version.value_or(latest)), latest);
    o.require_change_data_feed = false;
    o.keep_all_file_actions = true;
    auto plan = Check(table->PlanChanges(o));
    return RespondWithPlan(req, ref, *table, plan, true, false, q.max_files, q.page_token, "query-changes", hash);
  }

  Reply Changes(const httplib::Request& req) {
    const Principal p = Authenticate(req);
    const TableRef ref = FindTable(p, req);
    RequireHistory(ref, "the change data feed (/changes)");
    std::multimap<std::string, std::string> params(req.params.begin(), req.params.end());
    const ChangesRequest c = Check(ChangesRequest::FromQuery(params));
    if (!c.starting_version && !c.starting_timestamp) {
      Fail(InvalidArgument("no startingVersion or startingTimestamp provided for the change data feed"));
    }
    if (c.starting_version && c.starting_timestamp) Fail(InvalidArgument("give startingVersion or startingTimestamp, not both"));
    if (c.ending_version && c.ending_timestamp) Fail(InvalidArgument("give endingVersion or endingTimestamp, not both"));
    auto table = OpenTable(ref);
    const int64_t latest = table->latest_version();
    Json hash_params = {{"table", ref.Name()},
                        {"sv", c.starting_version.value_or(-1)},
                        {"st", c.starting_timestamp.value_or("")},
                        {"ev", c.ending_version.value_or(-1)},
                        {"et", c.ending_timestamp.value_or("")},
                        {"m", c.include_historical_metadata}};
    const std::string hash = ParamsHash(hash_params);
    std::optional<int64_t> pinned_end;
    if (c.page_token) OpenPage(c.page_token, c.max_files, "changes", hash, &pinned_end);
    delta::ChangeFeedOptions o;
    o.start_version = c.starting_version;
    if (c.starting_timestamp) o.start_timestamp_ms = ParseTimestamp(*c.starting_timestamp, "startingTimestamp");
    if (c.ending_timestamp) o.end_timestamp_ms = ParseTimestamp(*c.ending_timestamp, "endingTimestamp");
    if (c.starting_version) CheckStartVersion(ref, *c.starting_version);
    if (c.starting_version && *c.starting_version > latest) {
      Fail(InvalidArgument("startingVersion {} is after the latest version {} of table {}", *c.starting_version, latest,
                           ref.Name()));
    }
    if (c.ending_version) {
      // An end beyond the latest version is clamped, as the reference server does.
      o.end_version = std::min(*c.ending_version, latest);
      if (c.starting_version && *c.ending_version < *c.starting_version) {
        Fail(InvalidArgument("endingVersion {} is before startingVersion {}: the end cannot be before the start",
                             *c.ending_version, *c.starting_version));
      }
    }
    if (pinned_end) {
      o.end_version = *pinned_end;
      o.end_timestamp_ms.reset();
    } else if (!o.end_version && !o.end_timestamp_ms) {
      o.end_version = latest;  // pinned, so later commits never leak into later pages
    }
    o.require_change_data_feed = false;
    auto plan = Check(table->PlanChanges(o));
    if (plan.start_version < ref.table->start_version) CheckStartVersion(ref, plan.start_version);
    return RespondWithPlan(req, ref, *table, plan, c.include_historical_metadata, true, c.max_files, c.page_token,
                           "changes", hash);
  }

  // GET/HEAD {endpoint}/files/<share>/<schema>/<table>/<path>?expires=&X-Databricks-Signature=
  void ServeFile(const httplib::Request& req, httplib::Response& res) {
    const std::string share = req.matches[1], schema = req.matches[2], name = req.matches[3], rel = req.matches[4];
    const std::string expires_text = req.get_param_value("expires");
    const std::string sig = req.get_param_value(kSignatureParam);
    const std::string triple = share + "/" + schema + "/" + name;
    if (expires_text.empty() || sig.empty() || !signer->Verify(Join(Join(triple, rel), expires_text), sig)) {
      Fail(MakeError(ErrorKind::kForbidden, "the file URL's signature is not valid"));
    }
    int64_t expires = 0;
    auto [end, ec] = std::from_chars(expires_text.data(), expires_text.data() + expires_text.size(), expires);
    if (ec != std::errc() || Now() >= expires) {
      Fail(MakeError(ErrorKind::kForbidden, "the file URL has expired; ask the server for the table's files again"));
    }
    // The signature already binds the path, but the path is checked anyway: nothing outside a shared
    // table's directory is ever served.
    size_t start = 0;
    while (true) {
      const size_t slash = rel.find('/', start);
      const std::string seg = rel.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      if (seg.empty() || seg == "." || seg == ".." || seg.find('\\') != std::string::npos) {
        Fail(MakeError(ErrorKind::kForbidden, "the file path leaves the shared table"));
      }
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    const SharedTableConfig* table = nullptr;
    if (auto it = shares.find(AsciiLower(share)); it != shares.end()) {
      for (const auto& s : it->second->schemas) {
        if (s.name != schema) continue;
        for (const auto& t : s.tables) {
          if (t.name == name) table = &t;
        }
      }
    }
    if (!table) Fail(MakeError(ErrorKind::kForbidden, "the table of this file URL is no longer shared"));
    const std::string root = Check(io::NormalizeLocation(table->location));
    const std::string location = io::JoinLocation(root, rel);
    auto file = Check(io->OpenInput(location));
    const int64_t size = Check(file->GetSize());
    res.set_header("Accept-Ranges", "bytes");
    res.set_content_provider(static_cast<size_t>(size), "application/octet-stream",
                             [file](size_t offset, size_t length, httplib::DataSink& sink) {
                               constexpr size_t kChunk = size_t{1} << 20;
                               const size_t n = std::min(length, kChunk);
                               auto buffer = file->ReadAt(static_cast<int64_t>(offset), static_cast<int64_t>(n));
                               if (!buffer.ok() || (*buffer)->size() == 0) return false;
                               sink.write(reinterpret_cast<const char*>((*buffer)->data()),
                                          static_cast<size_t>((*buffer)->size()));
                               return true;
                             });
  }
};

Result<std::unique_ptr<SharingService>> SharingService::Make(ServerConfig config, SharingServiceOptions options) {
  auto impl = std::make_unique<Impl>();
  LS_ASSIGN_OR_RAISE_CTX(impl->io, io::FileIO::Make(config.storage_properties), "shares.yaml storage_properties");
  impl->signer = std::make_unique<Signer>(config.url_signing_key);
  impl->config = std::move(config);
  impl->options = std::move(options);
  for (const auto& s : impl->config.shares) impl->shares[AsciiLower(s.name)] = &s;
  return std::unique_ptr<SharingService>(new SharingService(std::move(impl)));
}

SharingService::SharingService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SharingService::~SharingService() = default;

const ServerConfig& SharingService::config() const { return impl_->config; }

void SharingService::Register(http::Server& server) {
  Impl* impl = impl_.get();
  auto& routes = server.routes();
  const std::string p = impl->config.endpoint;
  // Each route runs its handler and turns a HandlerError (or any other failure) into the protocol's
  // error JSON.
  auto wrap = [impl](std::function<Reply(const httplib::Request&)> handler) {
    return [impl, handler](const httplib::Request& req, httplib::Response& res) {
      try {
        Send(handler(req), res);
      } catch (const HandlerError& e) {
        Send(ErrorReply(e.status, e.code), res);
      }
      (void)impl;
    };
  };
  const std::string name = "([^/]+)";
  const std::string table = p + "/shares/" + name + "/schemas/" + name + "/tables/" + name;
  routes.Get(p + "/shares", wrap([impl](const auto& req) { return impl->ListShares(req); }));
  routes.Get(p + "/shares/" + name, wrap([impl](const auto& req) { return impl->GetShare(req); }));
  routes.Get(p + "/shares/" + name + "/schemas", wrap([impl](const auto& req) { return impl->ListSchemas(req); }));
  routes.Get(p + "/shares/" + name + "/schemas/" + name + "/tables",
             wrap([impl](const auto& req) { return impl->ListTables(req, false); }));
  routes.Get(p + "/shares/" + name + "/all-tables", wrap([impl](const auto& req) { return impl->ListTables(req, true); }));
  routes.Get(table + "/version", wrap([impl](const auto& req) { return impl->TableVersion(req); }));
  routes.Get(table, wrap([impl](const auto& req) { return impl->TableVersion(req); }));  // legacy HEAD
  routes.Get(table + "/metadata", wrap([impl](const auto& req) { return impl->Metadata(req); }));
  routes.Post(table + "/query", wrap([impl](const auto& req) { return impl->Query(req); }));
  routes.Get(table + "/changes", wrap([impl](const auto& req) { return impl->Changes(req); }));
  routes.Get(p + "/files/" + name + "/" + name + "/" + name + "/(.+)",
             [impl](const httplib::Request& req, httplib::Response& res) {
               try {
                 impl->ServeFile(req, res);
               } catch (const HandlerError& e) {
                 Send(ErrorReply(e.status, e.code), res);
               }
             });
  // Unknown paths under the endpoint get the protocol's error body too.
  routes.set_error_handler(httplib::Server::HandlerWithResponse([p](const httplib::Request& req,
                                                                     httplib::Response& res) {
    if (res.body.empty() && req.path.rfind(p + "/", 0) == 0 && req.method != "HEAD") {
      ErrorBody e{res.status == 404 ? kResourceDoesNotExist : kInvalidParameterValue,
                  fmt::format("{} {}: no such endpoint", req.method, req.path)};
      res.set_content(e.ToJson().dump(), kJson);
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }));
}

}  // namespace lakesync::sharing
