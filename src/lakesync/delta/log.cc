#include "lakesync/delta/log.h"

#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <arrow/scalar.h>
#include <arrow/table.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>

#include <regex>
#include <set>

#include "lakesync/common/logging.h"
#include "lakesync/formats/parquet/parquet_properties.h"
#include "lakesync/io/location.h"

namespace lakesync::delta {
namespace {

using nlohmann::json;

std::string BaseName(const std::string& location) {
  const auto slash = location.find_last_of('/');
  return slash == std::string::npos ? location : location.substr(slash + 1);
}

// One Arrow value as the JSON the commit files would hold for it.
json ToJson(const arrow::Scalar& s) {
  if (!s.is_valid) return nullptr;
  switch (s.type->id()) {
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY: {
      const auto& b = static_cast<const arrow::BaseBinaryScalar&>(s);
      return std::string(reinterpret_cast<const char*>(b.value->data()), b.value->size());
    }
    case arrow::Type::STRING_VIEW:
    case arrow::Type::BINARY_VIEW: {
      const auto& b = static_cast<const arrow::BinaryViewScalar&>(s);
      return std::string(reinterpret_cast<const char*>(b.value->data()), b.value->size());
    }
    case arrow::Type::BOOL: return static_cast<const arrow::BooleanScalar&>(s).value;
    case arrow::Type::INT8: return static_cast<const arrow::Int8Scalar&>(s).value;
    case arrow::Type::INT16: return static_cast<const arrow::Int16Scalar&>(s).value;
    case arrow::Type::INT32: return static_cast<const arrow::Int32Scalar&>(s).value;
    case arrow::Type::INT64: return static_cast<const arrow::Int64Scalar&>(s).value;
    case arrow::Type::STRUCT: {
      const auto& st = static_cast<const arrow::StructScalar&>(s);
      const auto& type = static_cast<const arrow::StructType&>(*s.type);
      json obj = json::object();
      for (int i = 0; i < type.num_fields(); ++i) obj[type.field(i)->name()] = ToJson(*st.value[i]);
      return obj;
    }
    case arrow::Type::MAP: {
      const auto& m = static_cast<const arrow::MapScalar&>(s);
      const auto& entries = static_cast<const arrow::StructArray&>(*m.value);
      json obj = json::object();
      for (int64_t i = 0; i < entries.length(); ++i) {
        auto k = entries.field(0)->GetScalar(i);
        auto v = entries.field(1)->GetScalar(i);
        if (!k.ok() || !v.ok()) continue;
        json kj = ToJson(**k);
        if (kj.is_string()) obj[kj.get<std::string>()] = ToJson(**v);
      }
      return obj;
    }
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST: {
      const auto& l = static_cast<const arrow::BaseListScalar&>(s);
      json arr = json::array();
      for (int64_t i = 0; i < l.value->length(); ++i) {
        auto e = l.value->GetScalar(i);
        arr.push_back(e.ok() ? ToJson(**e) : json(nullptr));
      }
      return arr;
    }
    default: {
      // Other types (stats_parsed values) are not needed by the reader.
      return s.ToString();
    }
  }
}

// Leaf column indices of the top-level action columns a reader needs, leaving out the typed
// statistics and partition values (large, and the JSON forms are enough).
void CollectLeaves(const parquet::arrow::SchemaField& field, std::vector<int>* leaves) {
  static const std::set<std::string> kSkip = {"stats_parsed", "partitionValues_parsed", "tags"};
  if (kSkip.count(field.field->name())) return;
  if (field.children.empty()) {
    if (field.column_index >= 0) leaves->push_back(field.column_index);
    return;
  }
  for (const auto& c : field.children) CollectLeaves(c, leaves);
}

// The actions in a Parquet checkpoint or sidecar file.
Result<std::vector<Action>> ReadParquetActions(const io::FileIO& io, const LogFile& file) {
  LS_ASSIGN_OR_RAISE_CTX(auto input, io.OpenInput(file.location), "reading checkpoint file {}", file.location);
  return ParseParquetActions(std::move(input), file);
}

}  // namespace

Result<std::vector<Action>> ParseParquetActions(std::shared_ptr<arrow::io::RandomAccessFile> input,
                                                const LogFile& file) {
  std::vector<Action> actions;
  try {
    std::unique_ptr<parquet::arrow::FileReader> reader;
    parquet::arrow::FileReaderBuilder builder;
    Status st = builder.Open(input, parquet_io::ParquetReaderProperties(nullptr));
    auto opened = st.ok() ? builder.Build() : Result<std::unique_ptr<parquet::arrow::FileReader>>(st);
    if (!opened.ok()) return Corrupt("checkpoint file {} is not a readable Parquet file: {}", file.location,
                                     opened.status().message());
    reader = std::move(*opened);
    static const std::set<std::string> kActions = {"protocol", "metaData", "add",    "remove",
                                                   "sidecar",  "checkpointMetadata"};
    std::vector<int> leaves;
    for (const auto& f : reader->manifest().schema_fields) {
      if (kActions.count(f.field->name())) CollectLeaves(f, &leaves);
    }
    if (leaves.empty()) return actions;
    for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
      auto read = reader->ReadRowGroup(rg, leaves);
      if (!read.ok()) return Corrupt("checkpoint file {}: {}", file.location, read.status().message());
      std::shared_ptr<arrow::Table> table = *read;
      ARROW_ASSIGN_OR_RAISE(auto batch, table->CombineChunksToBatch());
      for (int64_t row = 0; row < batch->num_rows(); ++row) {
        for (int c = 0; c < batch->num_columns(); ++c) {
          const auto& col = batch->column(c);
          if (col->IsNull(row)) continue;
          ARROW_ASSIGN_OR_RAISE(auto scalar, col->GetScalar(row));
          json obj = json::object();
          obj[batch->schema()->field(c)->name()] = ToJson(*scalar);
          LS_ASSIGN_OR_RAISE_CTX(auto action, ParseAction(obj, file.location + " row " + std::to_string(row)),
                                 "reading checkpoint at version {}", file.version);
          actions.push_back(std::move(action));
        }
      }
    }
  } catch (const std::exception& e) {
    return Corrupt("checkpoint file {} is not a readable Parquet file: {}", file.location, e.what());
  }
  return actions;
}

namespace {

Result<std::vector<Action>> ReadJsonActions(const io::FileIO& io, const LogFile& file, const char* what) {
  LS_ASSIGN_OR_RAISE_CTX(auto text, io.ReadAll(file.location), "reading {} file {} (version {})", what,
                         file.location, file.version);
  return ParseJsonActions(text, file, what);
}

Result<std::vector<Action>> ReadCheckpoint(const io::FileIO& io, const LogListing& listing, const Checkpoint& cp) {
  std::vector<Action> actions;
  for (const auto& part : cp.parts) {
    ARROW_ASSIGN_OR_RAISE(auto part_actions, cp.is_json ? ReadJsonActions(io, part, "checkpoint")
                                                        : ReadParquetActions(io, part));
    for (auto& a : part_actions) actions.push_back(std::move(a));
  }
  // V2 checkpoints may keep their file actions in sidecars.
  std::vector<Action> sidecar_actions;
  for (const auto& a : actions) {
    if (!a.sidecar) continue;
    ARROW_ASSIGN_OR_RAISE(auto decoded, PercentDecode(a.sidecar->path));
    LogFile side;
    side.version = cp.version;
    side.location = decoded.find("://") != std::string::npos || (!decoded.empty() && decoded[0] == '/')
                        ? decoded
                        : io::JoinLocation(listing.log_dir, "_sidecars/" + decoded);
    LS_ASSIGN_OR_RAISE_CTX(auto more, ReadParquetActions(io, side), "reading sidecar of checkpoint {}", cp.version);
    for (auto& m : more) sidecar_actions.push_back(std::move(m));
  }
  for (auto& m : sidecar_actions) actions.push_back(std::move(m));
  return actions;
}

// Applies one action to the state. A commit's remove must name a file that is live at that point:
// one that names nothing (a damaged path) would silently leave the file it meant to remove in the
// snapshot. A remove whose deletion vector differs from the live entry's is matched by path (the
// protocol wants the same descriptor; some writers omit it).
Status Apply(LogState& state, Action& action, bool with_files, bool from_checkpoint, const LogFile* commit) {
  if (action.protocol) state.protocol = std::move(*action.protocol);
  if (action.metadata) state.metadata = std::move(*action.metadata);
  if (!with_files || !action.file) return Status::OK();
  FileAction& f = *action.file;
  if (f.kind == FileAction::Kind::kAdd) {
    state.files[f.Key()] = std::move(f);
  } else if (f.kind == FileAction::Kind::kRemove && !from_checkpoint) {
    if (state.files.erase(f.Key()) == 0) {
      bool found = false;
      for (auto it = state.files.begin(); it != state.files.end();) {
        if (it->second.path == f.path) {
          it = state.files.erase(it);
          found = true;
        } else {
          ++it;
        }
      }
      if (!found && commit != nullptr) {
        return Corrupt("commit file {} (version {}) removes {}, which is not a file of the table at that version",
                       commit->location, commit->version, f.path);
      }
    }
  }
  return Status::OK();
}

}  // namespace

int64_t LogListing::LatestVersion() const {
  int64_t v = -1;
  if (!commits.empty()) v = commits.rbegin()->first;
  if (!checkpoints.empty()) v = std::max(v, checkpoints.rbegin()->first);
  return v;
}

int64_t LogListing::EarliestVersion() const {
  if (commits.count(0)) return 0;
  if (!checkpoints.empty()) return checkpoints.begin()->first;
  return commits.empty() ? -1 : commits.begin()->first;
}

Result<LogListing> ListLog(const io::FileIO& io, const std::string& table_root) {
  LogListing listing;
  std::string root = table_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  listing.table_root = root;
  listing.log_dir = io::JoinLocation(root, "_delta_log");
  LS_ASSIGN_OR_RAISE_CTX(auto entries, io.List(listing.log_dir), "listing the Delta log of {}", root);
  static const std::regex kCommit(R"((\d{20})\.json)");
  static const std::regex kClassic(R"((\d{20})\.checkpoint\.parquet)");
  static const std::regex kMulti(R"((\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet)");
  static const std::regex kUuid(R"((\d{20})\.checkpoint\.([0-9a-fA-F-]{36})\.(json|parquet))");
  // Multi-part checkpoints by (version, part count): the parts found.
  std::map<std::pair<int64_t, int>, std::map<int, LogFile>> multi;
  for (const auto& e : entries) {
    if (e.is_dir) continue;
    const std::string name = BaseName(e.location);
    std::smatch m;
    LogFile f{0, e.location, e.size, e.mtime_ms};
    if (std::regex_match(name, m, kCommit)) {
      f.version = std::stoll(m[1]);
      listing.commits[f.version] = f;
    } else if (std::regex_match(name, m, kClassic)) {
      f.version = std::stoll(m[1]);
      listing.checkpoints[f.version].push_back(Checkpoint{Checkpoint::Kind::kClassic, f.version, {f}, false});
    } else if (std::regex_match(name, m, kMulti)) {
      f.version = std::stoll(m[1]);
      const int part = std::stoi(m[2]), parts = std::stoi(m[3]);
      if (part >= 1 && part <= parts) multi[{f.version, parts}][part] = f;
    } else if (std::regex_match(name, m, kUuid)) {
      f.version = std::stoll(m[1]);
      listing.checkpoints[f.version].push_back(
          Checkpoint{Checkpoint::Kind::kUuid, f.version, {f}, m[3].str() == "json"});
    }
  }
  for (auto& [key, parts] : multi) {
    if (static_cast<int>(parts.size()) != key.second) {
      LS_LOG_WARN("ignoring incomplete {}-part checkpoint at version {} of {} ({} parts found)", key.second, key.first,
                  root, parts.size());
      continue;
    }
    Checkpoint cp{Checkpoint::Kind::kMultiPart, key.first, {}, false};
    for (auto& [i, f] : parts) cp.parts.push_back(f);
    listing.checkpoints[key.first].push_back(std::move(cp));
  }
  if (listing.commits.empty() && listing.checkpoints.empty()) {
    return NotFound("{} is not a Delta table: {} holds no commit or checkpoint", root, listing.log_dir);
  }
  return listing;
}

Result<std::vector<Action>> ParseJsonActions(std::string_view text, const LogFile& file, const char* what) {
  std::vector<Action> actions;
  size_t start = 0;
  int line_no = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    ++line_no;
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    json j = json::parse(line, nullptr, false);
    const std::string where = fmt::format("{} line {}", file.location, line_no);
    if (j.is_discarded()) return Corrupt("{} file {} (version {}) line {} is not valid JSON", what, file.location,
                                         file.version, line_no);
    LS_ASSIGN_OR_RAISE_CTX(auto action, ParseAction(j, where), "{} file of version {}", what, file.version);
    actions.push_back(std::move(action));
  }
  // Every commit and checkpoint holds at least one action (a commit at least its commitInfo or the
  // change itself). An empty file is a failed or truncated write: reading it as "no changes" would
  // silently drop that version's changes from the feed and the snapshot.
  if (actions.empty()) {
    return Corrupt("{} file {} (version {}) is empty{}: it holds no action", what, file.location, file.version,
                   text.empty() ? "" : " (only blank lines)");
  }
  return actions;
}

Result<std::vector<Action>> ReadCommit(const io::FileIO& io, const LogFile& commit) {
  return ReadJsonActions(io, commit, "commit");
}

Result<LogState> ReplayLog(const io::FileIO& io, const LogListing& listing, int64_t version, bool with_files) {
  LogState state;
  state.version = version;
  int64_t first_commit = 0;
  auto cp_it = listing.checkpoints.upper_bound(version);
  if (cp_it != listing.checkpoints.begin()) {
    --cp_it;
    const Checkpoint& cp = cp_it->second.front();
    LS_ASSIGN_OR_RAISE_CTX(auto actions, ReadCheckpoint(io, listing, cp), "reading the checkpoint at version {}",
                           cp.version);
    for (auto& a : actions) ARROW_RETURN_NOT_OK(Apply(state, a, with_files, true, nullptr));
    state.checkpoint_version = cp.version;
    first_commit = cp.version + 1;
  }
  for (int64_t v = first_commit; v <= version; ++v) {
    auto it = listing.commits.find(v);
    if (it == listing.commits.end()) {
      return NotFound("cannot build version {} of {}: commit {:020d}.json is missing from the log{}", version,
                      listing.table_root, v, state.checkpoint_version ? "" : " and no checkpoint precedes it");
    }
    ARROW_ASSIGN_OR_RAISE(auto actions, ReadCommit(io, it->second));
    for (auto& a : actions) ARROW_RETURN_NOT_OK(Apply(state, a, with_files, false, &it->second));
  }
  if (!state.protocol || !state.metadata) {
    return Corrupt("the log of {} has no {} action at version {}", listing.table_root,
                   state.protocol ? "metaData" : "protocol", version);
  }
  return state;
}

}  // namespace lakesync::delta
