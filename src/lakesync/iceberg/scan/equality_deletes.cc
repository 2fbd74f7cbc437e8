#include "lakesync/iceberg/scan/equality_deletes.h"

#include <algorithm>

namespace lakesync::iceberg {
namespace {

// The scope of global deletes; partition scopes are PartitionTupleKey()s, which start with the
// spec id and are never empty.
const std::string kGlobalScope;

std::vector<int32_t> SortedIds(std::vector<int32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

void EqualityDeleteIndex::Add(SequencedDeleteFile file, bool global) {
  const std::string scope = global ? kGlobalScope : PartitionTupleKey(*file.file);
  auto& group = scopes_[scope][SortedIds(file.file->equality_ids)];
  if (!group) group = std::make_unique<Group>();
  group->files.push_back(std::move(file));
  group->used.push_back(false);
}

const EqualityDeleteIndex::Scope* EqualityDeleteIndex::FindScope(const std::string& key) const {
  auto it = scopes_.find(key);
  return it == scopes_.end() ? nullptr : &it->second;
}

std::vector<DataFilePtr> EqualityDeleteIndex::Match(const DataFile& data, int64_t seq) {
  std::vector<DataFilePtr> out;
  for (const std::string& key : {PartitionTupleKey(data), kGlobalScope}) {
    auto it = scopes_.find(key);
    if (it == scopes_.end()) continue;
    for (auto& [ids, group] : it->second) {
      for (size_t i = 0; i < group->files.size(); ++i) {
        if (!EqualityDeleteApplies(seq, group->files[i].sequence_number)) continue;
        group->used[i] = true;
        group->max_used_sequence = std::max(group->max_used_sequence, group->files[i].sequence_number);
        out.push_back(group->files[i].file);
      }
    }
  }
  return out;
}

Result<std::vector<std::shared_ptr<const EqualityKeyMap>>> EqualityDeleteIndex::KeyMapsFor(
    const DataFile& data, int64_t seq, const BuildFn& build) const {
  std::vector<std::shared_ptr<const EqualityKeyMap>> out;
  for (const std::string& key : {PartitionTupleKey(data), kGlobalScope}) {
    const Scope* scope = FindScope(key);
    if (!scope) continue;
    for (const auto& [ids, group] : *scope) {
      // No used file of the group applies (all are as old as the data or older): nothing to probe.
      if (!EqualityDeleteApplies(seq, group->max_used_sequence)) continue;
      std::lock_guard<std::mutex> lock(group->mutex);
      if (!group->map) {
        // Files with a sequence number no data file is older than delete nothing: not read.
        std::vector<SequencedDeleteFile> used;
        for (size_t i = 0; i < group->files.size(); ++i) {
          if (group->used[i]) used.push_back(group->files[i]);
        }
        if (used.empty()) continue;
        ARROW_ASSIGN_OR_RAISE(group->map, build(ids, used));
      }
      if (!group->map->keys.empty()) out.push_back(group->map);
    }
  }
  return out;
}

}  // namespace lakesync::iceberg
