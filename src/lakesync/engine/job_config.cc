#include "lakesync/engine/job_config.h"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lakesync/catalog/catalog_config.h"
#include "lakesync/change/metadata_columns.h"
#include "lakesync/common/config_keys.h"
#include "lakesync/common/text.h"
#include "lakesync/common/yaml_json.h"
#include "lakesync/common/executor.h"
#include "lakesync/io/location.h"

namespace lakesync::engine {
namespace {

using Json = nlohmann::json;

const std::vector<std::string>& JobKeys() {
  static const std::vector<std::string> keys = {"name",    "source",  "sink",   "schedule",
                                                "retry",   "threads", "schema_evolution", "maintenance"};
  return keys;
}

// `schema_evolution: additive | none` (docs/jobs.md): how the target follows the source's schema.
Status ParseJobSchemaEvolution(const Json& document, const std::string& where, JobConfig& job) {
  if (!document.contains("schema_evolution") || document.at("schema_evolution").is_null()) return Status::OK();
  const Json& v = document.at("schema_evolution");
  if (!v.is_string()) return InvalidArgument("{}: schema_evolution must be additive or none", where);
  ARROW_ASSIGN_OR_RAISE(job.schema_evolution, sink::ParseSchemaEvolution(v.get<std::string>(), where));
  return Status::OK();
}

Result<SourceType> ParseSourceType(const Json& source, std::string_view where) {
  if (!source.contains("type")) {
    return InvalidArgument("{}: source.type is required: delta_lake_cdc, iceberg_cdc, delta_sharing_cdc, delta_lake, "
                           "iceberg or delta_sharing", where);
  }
  const Json& type = source.at("type");
  if (!type.is_string()) return InvalidArgument("{}: source.type must be a string", where);
  const std::string name = type.get<std::string>();
  for (SourceType t : {SourceType::kDeltaLakeCdc, SourceType::kIcebergCdc, SourceType::kDeltaLake,
                       SourceType::kIceberg, SourceType::kDeltaSharingCdc, SourceType::kDeltaSharing}) {
    if (name == SourceTypeName(t)) return t;
  }
  if (name == "delta_cdc") return SourceType::kDeltaLakeCdc;  // Python's managed.DELTA_CDC spelling
  return InvalidArgument("{}: source.type '{}' is not a source type: delta_lake_cdc, iceberg_cdc, delta_sharing_cdc, "
                         "delta_lake, iceberg or delta_sharing", where, name);
}

Result<bool> OptionalBool(const Json& block, const char* key, std::string_view where, std::string_view prefix) {
  if (!block.contains(key) || block.at(key).is_null()) return false;
  const Json& v = block.at(key);
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) {
    const std::string s = AsciiLower(v.get<std::string>());
    if (s == "true") return true;
    if (s == "false") return false;
  }
  return InvalidArgument("{}: {}{} must be true or false, not {}", where, prefix, key, v.dump());
}

// source.initial_snapshot: true/false, or {if_target_not_empty: fail | skip | overwrite} (which
// means true).
Status ParseInitialSnapshot(const Json& source, std::string_view where, JobConfig& job) {
  if (!source.contains("initial_snapshot") || source.at("initial_snapshot").is_null()) return Status::OK();
  const Json& v = source.at("initial_snapshot");
  if (!v.is_object()) {
    ARROW_ASSIGN_OR_RAISE(job.initial_snapshot, OptionalBool(source, "initial_snapshot", where, "source."));
    return Status::OK();
  }
  ARROW_RETURN_NOT_OK(CheckKnownKeys(v, {"if_target_not_empty"}, fmt::format("{}: source.initial_snapshot", where)));
  job.initial_snapshot = true;
  if (!v.contains("if_target_not_empty")) return Status::OK();
  const Json& policy = v.at("if_target_not_empty");
  for (auto p : {IfTargetNotEmpty::kFail, IfTargetNotEmpty::kSkip, IfTargetNotEmpty::kOverwrite}) {
    if (policy.is_string() && policy.get<std::string>() == IfTargetNotEmptyName(p)) {
      job.if_target_not_empty = p;
      job.if_target_not_empty_given = true;
      return Status::OK();
    }
  }
  return InvalidArgument("{}: source.initial_snapshot.if_target_not_empty must be fail, skip or overwrite, not {}",
                         where, policy.dump());
}

// Catalog properties naming local files (warehouse, a SQLite uri) are relative to the job file.
void ResolveCatalogPaths(Json& block, const std::string& directory) {
  if (!block.contains("catalog_properties") || !block.at("catalog_properties").is_object()) return;
  Json& props = block["catalog_properties"];
  std::map<std::string, std::string> paths;
  for (const char* key : {"warehouse", "uri"}) {
    if (props.contains(key) && props.at(key).is_string()) paths[key] = props.at(key).get<std::string>();
  }
  catalog::ResolveRelativePaths(paths, directory);
  for (const auto& [key, value] : paths) props[key] = value;
}

// Every path a job names locally is relative to the job file's folder, never to where it is run.
void ResolveJobPaths(Json& source, Json& sink, SourceType type, const std::string& directory) {
  const bool delta = type == SourceType::kDeltaLakeCdc || type == SourceType::kDeltaLake;
  if (delta && source.contains("table") && source.at("table").is_string()) {
    source["table"] = io::ResolveRelativePath(source.at("table").get<std::string>(), directory);
  }
  // A shared table's profile file: source.profile, or the part of source.table before the last '#'
  // (PROFILE#SHARE.SCHEMA.TABLE, as the sharing client splits it).
  const bool sharing = type == SourceType::kDeltaSharingCdc || type == SourceType::kDeltaSharing;
  if (sharing && source.contains("profile") && source.at("profile").is_string()) {
    source["profile"] = io::ResolveRelativePath(source.at("profile").get<std::string>(), directory);
  } else if (sharing && source.contains("table") && source.at("table").is_string()) {
    const std::string table = source.at("table").get<std::string>();
    if (const size_t hash = table.rfind('#'); hash != std::string::npos && hash > 0) {
      source["table"] = io::ResolveRelativePath(table.substr(0, hash), directory) + table.substr(hash);
    }
  }
  ResolveCatalogPaths(source, directory);
  ResolveCatalogPaths(sink, directory);
  if (sink.contains("error_handling") && sink.at("error_handling").is_object()) {
    Json& eh = sink["error_handling"];
    if (eh.contains("output") && eh.at("output").is_string()) {
      eh["output"] = io::ResolveRelativePath(eh.at("output").get<std::string>(), directory);
    }
  }
}

}  // namespace

std::string_view IfTargetNotEmptyName(IfTargetNotEmpty policy) {
  switch (policy) {
    case IfTargetNotEmpty::kFail: return "fail";
    case IfTargetNotEmpty::kSkip: return "skip";
    case IfTargetNotEmpty::kOverwrite: return "overwrite";
  }
  return "?";
}

std::string_view SourceTypeName(SourceType type) {
  switch (type) {
    case SourceType::kDeltaLakeCdc: return "delta_lake_cdc";
    case SourceType::kIcebergCdc: return "iceberg_cdc";
    case SourceType::kDeltaLake: return "delta_lake";
    case SourceType::kIceberg: return "iceberg";
    case SourceType::kDeltaSharingCdc: return "delta_sharing_cdc";
    case SourceType::kDeltaSharing: return "delta_sharing";
  }
  return "?";
}

std::string DefaultChangeTypeColumn(SourceType) { return "_change_type"; }

std::string DefaultSequenceColumn(SourceType type) {
  return type == SourceType::kIcebergCdc || type == SourceType::kIceberg ? "_commit_snapshot_sequence_number"
                                                                         : "_commit_version";
}

Result<std::chrono::seconds> ParseDuration(const Json& value, std::string_view key, bool allow_zero) {
  int64_t total = 0;
  if (value.is_number_integer()) {
    total = value.get<int64_t>();
  } else if (value.is_string()) {
    const std::string text = value.get<std::string>();
    size_t i = 0;
    bool any = false;
    while (i < text.size()) {
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      if (j == i || j - i > 9) return InvalidArgument("{}: '{}' is not a duration such as 30s, 15m, 1h30m", key, text);
      const int64_t n = std::stoll(text.substr(i, j - i));
      int64_t unit = 1;
      if (j < text.size()) {
        switch (text[j]) {
          case 's': unit = 1; break;
          case 'm': unit = 60; break;
          case 'h': unit = 3600; break;
          case 'd': unit = 86400; break;
          default: return InvalidArgument("{}: '{}' is not a duration such as 30s, 15m, 1h30m", key, text);
        }
        ++j;
      } else if (any) {
        return InvalidArgument("{}: '{}' is not a duration such as 30s, 15m, 1h30m (a unit is missing)", key, text);
      }
      total += n * unit;
      any = true;
      i = j;
    }
    if (!any) return InvalidArgument("{}: an empty duration; write e.g. 15m", key);
  } else {
    return InvalidArgument("{}: expected a duration such as 15m or a number of seconds, not {}", key, value.dump());
  }
  if (total < 0 || (total == 0 && !allow_zero)) return InvalidArgument("{}: the duration must be positive", key);
  return std::chrono::seconds(total);
}

Result<JobConfig> ParseJobConfig(const Json& document, std::string location) {
  const std::string& where = location;
  if (!document.is_object()) return InvalidArgument("{}: a job is a map with 'source' and 'sink'", where);
  ARROW_RETURN_NOT_OK(CheckKnownKeys(document, JobKeys(), where));
  JobConfig job;
  job.location = location;
  {
    std::error_code ec;
    auto absolute = std::filesystem::absolute(std::filesystem::path(location), ec);
    job.directory = ec ? std::string() : absolute.lexically_normal().parent_path().string();
  }
  if (document.contains("name") && !document.at("name").is_null()) {
    if (!document.at("name").is_string()) return InvalidArgument("{}: name must be a string", where);
    job.name = document.at("name").get<std::string>();
  } else {
    job.name = std::filesystem::path(location).stem().string();
  }
  if (job.name.empty()) return InvalidArgument("{}: name must not be empty", where);

  if (!document.contains("source") || !document.at("source").is_object()) {
    return InvalidArgument("{}: a 'source' map is required (with type, table, ...)", where);
  }
  Json source = document.at("source");
  ARROW_ASSIGN_OR_RAISE(job.source_type, ParseSourceType(source, where));
  ARROW_ASSIGN_OR_RAISE(job.streaming, OptionalBool(source, "streaming", where, "source."));
  ARROW_RETURN_NOT_OK(ParseInitialSnapshot(source, where, job));
  if (source.contains("initial_snapshot") && !IsCdcSource(job.source_type)) {
    // An import is a snapshot already; only the policy for a non-empty target means something.
    if (!source.at("initial_snapshot").is_object() && job.initial_snapshot) {
      return InvalidArgument("{}: source.initial_snapshot applies to delta_lake_cdc and iceberg_cdc; a {} source is "
                             "already a snapshot import (write initial_snapshot: {{if_target_not_empty: ...}} to say "
                             "what it does with a non-empty target)", where, SourceTypeName(job.source_type));
    }
    job.initial_snapshot = false;
  }
  if (job.streaming && !IsCdcSource(job.source_type)) {
    return InvalidArgument("{}: source.streaming applies to delta_lake_cdc and iceberg_cdc, not to a {} import",
                           where, SourceTypeName(job.source_type));
  }

  if (!document.contains("sink") || !document.at("sink").is_object()) {
    return InvalidArgument("{}: a 'sink' map is required (with table, ...)", where);
  }
  Json sink = document.at("sink");
  ResolveJobPaths(source, sink, job.source_type, job.directory);
  job.source = source;
  job.source.erase("type");
  job.source.erase("initial_snapshot");  // the engine's key, read above
  if (sink.contains("type")) {
    if (!sink.at("type").is_string() || sink.at("type").get<std::string>() != "iceberg") {
      return InvalidArgument("{}: sink.type must be 'iceberg' (the only sink), not {}", where, sink.at("type").dump());
    }
    sink.erase("type");
  }
  // Defaults that depend on the source, applied before parsing so that validation sees them.
  // Changes need merge-on-read; an import does too when it names keys (the target then gets them as
  // identifier fields, ready for the CDC job that follows), else it appends.
  if (!sink.contains("mode")) {
    const bool keyed = sink.contains("equality_columns") && !sink.at("equality_columns").is_null();
    sink["mode"] = IsCdcSource(job.source_type) || keyed ? "merge-on-read" : "append";
  }
  ARROW_ASSIGN_OR_RAISE(job.sink, sink::ParseSinkConfig(sink, where + ": sink"));
  // A job's change stream comes from lakesync's own sources, whose metadata columns Beam's
  // configurations name by constant (change_type_column: CHANGE_TYPE).
  if (job.sink.change_type_column) {
    job.sink.change_type_column = change::CanonicalMetadataColumn(*job.sink.change_type_column);
  }
  job.sink.sequence_number_column = change::CanonicalMetadataColumn(job.sink.sequence_number_column);
  if (job.sink.mode == sink::WriteMode::kMergeOnRead) {
    if (!job.sink.is_given("sequence_number_column")) {
      job.sink.sequence_number_column = DefaultSequenceColumn(job.source_type);
    }
    if (!job.sink.is_given("change_type_column")) job.sink.change_type_column = DefaultChangeTypeColumn(job.source_type);
  }
  // Without sink_id the runner derives one from what the job is (never from the file name, which
  // changes when a file is renamed or copied, and would re-import everything).
  job.sink_id_given = job.sink.sink_id.has_value();
  ARROW_RETURN_NOT_OK(sink::ValidateSinkConfig(job.sink, where + ": sink"));

  if (document.contains("schedule") && !document.at("schedule").is_null()) {
    const Json& schedule = document.at("schedule");
    ARROW_RETURN_NOT_OK(CheckKnownKeys(schedule, {"every"}, where + ": schedule"));
    if (!schedule.contains("every")) return InvalidArgument("{}: schedule needs 'every' (e.g. every: 15m)", where);
    ARROW_ASSIGN_OR_RAISE(auto every, ParseDuration(schedule.at("every"), where + ": schedule.every"));
    job.every = every;
    if (job.streaming) {
      return InvalidArgument("{}: schedule and source.streaming contradict each other: a streaming job runs "
                             "continuously", where);
    }
  }
  if (document.contains("threads") && !document.at("threads").is_null()) {
    const Json& v = document.at("threads");
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kMaxThreads) {
      return InvalidArgument("{}: threads must be a whole number from 1 to {}", where, kMaxThreads);
    }
    job.threads = v.get<int>();
  }
  ARROW_RETURN_NOT_OK(ParseJobSchemaEvolution(document, where, job));
  if (document.contains("retry") && !document.at("retry").is_null()) {
    const Json& retry = document.at("retry");
    ARROW_RETURN_NOT_OK(CheckKnownKeys(retry, {"max_attempts", "initial_backoff_seconds"}, where + ": retry"));
    if (retry.contains("max_attempts")) {
      const Json& v = retry.at("max_attempts");
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 100) {
        return InvalidArgument("{}: retry.max_attempts must be a whole number from 1 to 100", where);
      }
      job.retry.max_attempts = v.get<int>();
    }
    if (retry.contains("initial_backoff_seconds")) {
      const Json& v = retry.at("initial_backoff_seconds");
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 3600) {
        return InvalidArgument("{}: retry.initial_backoff_seconds must be a number from 0 to 3600", where);
      }
      job.retry.initial_backoff_seconds = v.get<double>();
    }
  }
  if (document.contains("maintenance") && !document.at("maintenance").is_null()) {
    ARROW_ASSIGN_OR_RAISE(job.maintenance, ParseMaintenanceConfig(document.at("maintenance"), where));
  }
  return job;
}

Result<JobConfig> LoadJobConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!std::filesystem::exists(path)) return NotFound("job file {} does not exist", path);
    return IOError("cannot read job file {}", path);
  }
  std::stringstream text;
  text << in.rdbuf();
  ARROW_ASSIGN_OR_RAISE(auto document, ParseYamlOrJson(text.str(), path));
  return ParseJobConfig(document, path);
}

}  // namespace lakesync::engine
