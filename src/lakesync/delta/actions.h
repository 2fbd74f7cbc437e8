// Delta log actions (PROTOCOL.md "Actions") as typed values, parsed from one JSON action object: a
// line of a commit file, a row of a checkpoint (converted to the same JSON shape), or an entry of a
// V2 checkpoint. Unknown action types and unknown fields are ignored, as the protocol requires.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"

namespace lakesync::delta {

struct Protocol {
  int32_t min_reader_version = 1;
  int32_t min_writer_version = 1;
  std::optional<std::vector<std::string>> reader_features;
  std::optional<std::vector<std::string>> writer_features;
};

struct Metadata {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::string format_provider = "parquet";
  std::map<std::string, std::string> format_options;
  std::string schema_string;  // Spark's JSON schema
  std::vector<std::string> partition_columns;  // logical names
  std::map<std::string, std::string> configuration;
  std::optional<int64_t> created_time;
};

// A deletion vector descriptor (PROTOCOL.md "Deletion Vector Descriptor Schema").
struct DeletionVectorDescriptor {
  std::string storage_type;      // "u", "i" or "p"
  std::string path_or_inline_dv;
  std::optional<int32_t> offset;
  int32_t size_in_bytes = 0;
  int64_t cardinality = 0;

  // storageType + pathOrInlineDv [+ "@" + offset]: identifies the DV within the table.
  std::string UniqueId() const;
};

// add, remove and cdc share these fields (remove's partition values and size are optional).
struct FileAction {
  enum class Kind { kAdd, kRemove, kCdc } kind = Kind::kAdd;
  std::string path;  // as in the log: a URI, percent-encoded, relative to the table root or absolute
  std::optional<std::map<std::string, std::optional<std::string>>> partition_values;  // null value = JSON null
  std::optional<int64_t> size;
  int64_t modification_time = 0;
  bool data_change = true;
  std::optional<std::string> stats;
  std::optional<DeletionVectorDescriptor> deletion_vector;

  // The logical-file key: path plus the DV's unique id ("" without a DV).
  std::string Key() const;
  // numRecords from stats, when the stats say.
  std::optional<int64_t> NumRecords() const;
};

struct CommitInfo {
  std::optional<int64_t> in_commit_timestamp;
  std::optional<int64_t> timestamp;
  std::string operation;
  std::map<std::string, std::string> operation_metrics;
};

struct Sidecar {
  std::string path;  // relative to _delta_log/_sidecars/, URI-encoded
  int64_t size_in_bytes = 0;
};

// One parsed action; exactly one member is set (none for ignored action types).
struct Action {
  std::optional<Protocol> protocol;
  std::optional<Metadata> metadata;
  std::optional<FileAction> file;
  std::optional<CommitInfo> commit_info;
  std::optional<Sidecar> sidecar;
  bool checkpoint_metadata = false;
};

// Parses one action object. `where` names the file (and line) in errors.
// Returns Corrupt when a known action has a missing or mistyped required field.
Result<Action> ParseAction(const nlohmann::json& json, const std::string& where);

// Decodes an RFC 2396 path (percent-escapes). Returns Corrupt for a malformed escape.
Result<std::string> PercentDecode(std::string_view path);

// True for http:// and https:// paths: the pre-signed URLs a Delta Sharing server puts where a log
// has paths. They are used byte for byte (decoding would break their signatures).
bool IsHttpUrl(std::string_view path);

// The actions back as the log's JSON (PROTOCOL.md "Actions"), for a Delta Sharing server's delta-format
// answers. FileActionToJson gives the inner object; FileActionName its key ("add", "remove", "cdc").
// Fields lakesync does not keep (tags, baseRowId, defaultRowCommitVersion, clusteringProvider) are absent.
nlohmann::json ProtocolToJson(const Protocol& protocol);
nlohmann::json MetadataToJson(const Metadata& metadata);
nlohmann::json DeletionVectorToJson(const DeletionVectorDescriptor& dv);
nlohmann::json FileActionToJson(const FileAction& file);
const char* FileActionName(FileAction::Kind kind);

}  // namespace lakesync::delta
