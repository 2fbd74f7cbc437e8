// The in-memory Delta-like source of the engine tests: commits whose contents are known exactly, so
// expected tables are computed from them, not from lakesync.
#pragma once

#include <arrow/api.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lakesync/engine/change_source.h"

namespace lakesync::engine::testing {

struct Change {
  int64_t id;
  std::string value;
  std::string kind;  // Delta's names
};

// A Delta-like source: commits 0..n-1, ordinals are versions.
class FakeSource : public ChangeSource {
 public:
  std::vector<std::vector<Change>> commits;
  int transient_failures = 0;  // ReadChanges fails this many times with Unavailable
  bool permanent_failure = false;
  int64_t start = 0;
  std::optional<int64_t> end;
  int reads = 0;
  std::string identity = "0d6f3c1e-fake-source";
  std::vector<std::string> keys;  // declared primary key
  std::map<int64_t, int64_t> commit_times_ms;

  std::string Describe() const override { return "fake source"; }
  Result<std::string> Identity() override { return identity; }
  std::vector<std::string> IdentifierColumns() const override { return keys; }
  Result<std::optional<int64_t>> CommitTimestampMs(int64_t ordinal) override {
    auto it = commit_times_ms.find(ordinal);
    if (it == commit_times_ms.end()) return std::optional<int64_t>();
    return std::optional<int64_t>(it->second);
  }
  Result<std::optional<int64_t>> Latest() override {
    if (commits.empty()) return std::optional<int64_t>();
    return std::optional<int64_t>(static_cast<int64_t>(commits.size()) - 1);
  }
  Result<std::optional<int64_t>> FirstOrdinal() override { return std::optional<int64_t>(start); }
  Result<std::optional<int64_t>> EndOrdinal() override { return end; }
  Result<std::optional<int64_t>> NextAfter(int64_t ordinal) override {
    if (ordinal + 1 >= static_cast<int64_t>(commits.size())) return std::optional<int64_t>();
    return std::optional<int64_t>(ordinal + 1);
  }
  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadChanges(int64_t from, int64_t through) override {
    ++reads;
    if (permanent_failure) return Corrupt("commit {} is corrupt", from);
    if (transient_failures > 0) {
      --transient_failures;
      return Unavailable("the object store is busy");
    }
    std::vector<std::pair<int64_t, Change>> rows;
    for (int64_t v = from; v <= through; ++v) {
      for (const auto& c : commits[static_cast<size_t>(v)]) rows.emplace_back(v, c);
    }
    return Reader(rows);
  }
  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadSnapshot(int64_t ordinal) override {
    std::vector<std::pair<int64_t, Change>> rows;
    for (const auto& [id, value] : StateAt(ordinal)) rows.emplace_back(ordinal, Change{id, value, "insert"});
    return Reader(rows);
  }
  std::string change_type_column() const override { return "_change_type"; }
  std::string sequence_column() const override { return "_commit_version"; }

  // The table after applying commits [0, ordinal].
  std::map<int64_t, std::string> StateAt(int64_t ordinal) const {
    std::map<int64_t, std::string> state;
    for (int64_t v = 0; v <= ordinal && v < static_cast<int64_t>(commits.size()); ++v) {
      for (const auto& c : commits[static_cast<size_t>(v)]) {
        if (c.kind == "insert" || c.kind == "update_postimage") state[c.id] = c.value;
        if (c.kind == "delete") state.erase(c.id);
      }
    }
    return state;
  }

 private:
  static Result<std::shared_ptr<arrow::RecordBatchReader>> Reader(
      const std::vector<std::pair<int64_t, Change>>& rows) {
    arrow::Int64Builder ids, versions;
    arrow::StringBuilder values, kinds;
    for (const auto& [version, c] : rows) {
      ARROW_RETURN_NOT_OK(ids.Append(c.id));
      ARROW_RETURN_NOT_OK(values.Append(c.value));
      ARROW_RETURN_NOT_OK(kinds.Append(c.kind));
      ARROW_RETURN_NOT_OK(versions.Append(version));
    }
    auto schema = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("value", arrow::utf8()),
                                 arrow::field("_change_type", arrow::utf8(), false),
                                 arrow::field("_commit_version", arrow::int64(), false)});
    ARROW_ASSIGN_OR_RAISE(auto a, ids.Finish());
    ARROW_ASSIGN_OR_RAISE(auto b, values.Finish());
    ARROW_ASSIGN_OR_RAISE(auto c, kinds.Finish());
    ARROW_ASSIGN_OR_RAISE(auto d, versions.Finish());
    auto batch = arrow::RecordBatch::Make(schema, static_cast<int64_t>(rows.size()), {a, b, c, d});
    return arrow::RecordBatchReader::Make({batch}, schema);
  }
};

}  // namespace lakesync::engine::testing
