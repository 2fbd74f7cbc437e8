// The Delta transaction log (_delta_log/): listing it, reading commits and checkpoints, and
// replaying them into the state at a version (PROTOCOL.md "Delta Log Entries", "Checkpoints").
//
// The log is always listed in full: `_last_checkpoint` is only a hint (and may be stale, missing or
// corrupt), so lakesync never trusts it over the listing. Log compaction files
// (<x>.<y>.compacted.json) are recognised and not used: they are optional for readers and must never
// be used for the Change Data Feed. Hidden files (".00…0.json.crc") and temporary files are skipped.
#pragma once

#include <arrow/io/type_fwd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/delta/actions.h"
#include "lakesync/io/file_io.h"

namespace lakesync::delta {

struct LogFile {
  int64_t version = 0;
  std::string location;
  int64_t size = -1;
  int64_t mtime_ms = -1;
};

// One checkpoint at a version: a classic single file, all parts of a multi-part checkpoint, or a
// UUID-named V2 checkpoint (JSON or Parquet).
struct Checkpoint {
  enum class Kind { kClassic, kMultiPart, kUuid } kind = Kind::kClassic;
  int64_t version = 0;
  std::vector<LogFile> parts;  // in part order
  bool is_json = false;
};

struct LogListing {
  std::string table_root;  // normalized location, no trailing slash
  std::string log_dir;     // <table_root>/_delta_log
  std::map<int64_t, LogFile> commits;
  // Complete checkpoints only (a multi-part checkpoint missing a part is dropped), newest last.
  std::map<int64_t, std::vector<Checkpoint>> checkpoints;

  // The newest version the log can serve, or -1 for an empty log.
  int64_t LatestVersion() const;
  // The oldest version whose state can be built (the oldest checkpoint, or 0 with commit 0).
  int64_t EarliestVersion() const;
};

// Lists <table_root>/_delta_log. Returns NotFound when there is no log (not a Delta table).
Result<LogListing> ListLog(const io::FileIO& io, const std::string& table_root);

// The actions in the text of a JSON commit or checkpoint file (`what`: "commit" or "checkpoint"),
// in file order. Errors (Corrupt) name the file, its version and the line: a line that is not JSON
// or not an action, and a file with no action at all (empty or blank lines only).
Result<std::vector<Action>> ParseJsonActions(std::string_view text, const LogFile& file, const char* what);

// The actions in a Parquet checkpoint or sidecar file opened as `input`. Errors (Corrupt) name the file.
Result<std::vector<Action>> ParseParquetActions(std::shared_ptr<arrow::io::RandomAccessFile> input,
                                                const LogFile& file);

// The actions of one commit file, in file order. Errors name the file and line (Corrupt) or say it
// is missing (NotFound).
Result<std::vector<Action>> ReadCommit(const io::FileIO& io, const LogFile& commit);

// Protocol, metadata and live files at a version.
struct LogState {
  int64_t version = -1;
  std::optional<Protocol> protocol;
  std::optional<Metadata> metadata;
  // Live add actions keyed by FileAction::Key(); only filled when files are asked for.
  std::map<std::string, FileAction> files;
  // Commit files replayed on top of the checkpoint, if any.
  std::optional<int64_t> checkpoint_version;
};

// Builds the state at `version` from the newest complete checkpoint at or before it plus the commits
// after it. `with_files`: also collect the live files (snapshot reads); without, only protocol and
// metadata are kept (cheaper for the Change Data Feed's range checks).
// Errors: NotFound naming the first missing commit; Corrupt naming a bad checkpoint or commit file;
// Corrupt when no protocol or metadata is found.
Result<LogState> ReplayLog(const io::FileIO& io, const LogListing& listing, int64_t version, bool with_files);

}  // namespace lakesync::delta
