// jsonPredicateHints (PROTOCOL.md "JSON predicates for Filtering"): whether a file may hold rows that
// satisfy the predicate, judged from its partition values (exact) and its stats (min/max/nullCount).
// Best effort, as the protocol says: anything the evaluator cannot judge (a column without stats, a
// type it cannot compare) keeps the file, and the client filters rows itself.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"

namespace lakesync::sharing {

class FilePredicate {
 public:
  // Errors: InvalidArgument for malformed JSON, unknown ops or value types, or wrong child counts
  // (the server then ignores the hint, as the protocol asks).
  static Result<FilePredicate> Parse(std::string_view json_text);

  // `partition_values` by column name (nullopt = null); `stats` the file's parsed stats or null.
  bool MayMatch(const std::map<std::string, std::optional<std::string>>& partition_values,
                const nlohmann::json* stats) const;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
};

}  // namespace lakesync::sharing
