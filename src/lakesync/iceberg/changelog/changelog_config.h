// Configuration of the Iceberg changelog source, with the keys of Apache Beam's Managed
// ICEBERG_CDC read (shared/specs/beam-compat.md section 2) plus lakesync's own, parsed once at the
// edge into a typed struct and validated loudly. Documented in docs/changelog.md.
//
//   table: db.orders                          # required, NAMESPACE.TABLE
//   catalog_name: prod
//   catalog_properties: {type: sql, uri: "sqlite:////srv/catalog.db", warehouse: "file:///srv/wh"}
//   start_snapshot_id: 123                    # alias from_snapshot; inclusive (Beam's meaning)
//   start_timestamp: 1735689600000            # alias from_timestamp; epoch ms or ISO-8601; inclusive
//   end_snapshot_id: 456                      # alias to_snapshot; inclusive
//   end_timestamp: "2026-01-01T00:00:00Z"     # alias to_timestamp; inclusive
//   starting_strategy: earliest               # earliest | latest; not with a start bound
//   streaming: true
//   poll_interval_seconds: 60                 # only with streaming; >= 1
//   include_metadata_columns: [_change_type, _commit_snapshot_sequence_number]  # alias metadata_columns
//   equality_columns: [id]                    # keys that pair DELETE+INSERT into updates
//   filter: "region = 'eu'"
//   keep: [id, amount]                        # or drop: [...]
//   watermark_column: updated_at              # Beam's; checked, then without effect (see below)
//
// Rules: unknown keys are errors naming the key; a null value counts as absent; an alias and its key
// together, a snapshot and a timestamp for the same bound, keep with drop, starting_strategy with a
// start bound, and poll_interval_seconds without streaming are errors naming both keys.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/catalog_config.h"
#include "lakesync/common/status.h"

namespace lakesync::changelog {

// Metadata columns the source can append after the table columns.
inline constexpr char kChangeTypeColumn[] = "_change_type";                  // string
inline constexpr char kChangeOrdinalColumn[] = "_change_ordinal";            // int32
inline constexpr char kCommitSnapshotIdColumn[] = "_commit_snapshot_id";     // int64
inline constexpr char kCommitSequenceColumn[] = "_commit_snapshot_sequence_number";  // int64
inline constexpr char kCommitTimestampColumn[] = "_commit_timestamp";        // timestamp[us, UTC]
// All five, in their default order.
const std::vector<std::string>& AllMetadataColumns();
// InvalidArgument naming `key` for an unknown or repeated column.
Status CheckMetadataColumns(std::string_view key, const std::vector<std::string>& columns);

enum class StartingStrategy { kEarliest, kLatest };

struct ChangelogConfig {
  std::string table;
  std::optional<std::string> catalog_name;
  std::map<std::string, std::string> catalog_properties;
  std::optional<int64_t> start_snapshot_id;
  std::optional<int64_t> start_timestamp_ms;
  std::optional<int64_t> end_snapshot_id;
  std::optional<int64_t> end_timestamp_ms;
  // Unset: earliest for batch reads, latest when streaming (Beam's defaults).
  std::optional<StartingStrategy> starting_strategy;
  bool streaming = false;
  int32_t poll_interval_seconds = 60;
  // Unset: Beam's behaviour, table columns only (rows still carry their kind).
  std::optional<std::vector<std::string>> metadata_columns;
  std::vector<std::string> equality_columns;
  std::string filter;
  std::vector<std::string> keep;
  std::vector<std::string> drop;
  // Beam's event-time watermark: a required top-level long or timestamp column whose values Beam
  // stamps on each row for its windows (unit for longs: watermark_column_time_unit, default
  // MICROSECONDS). lakesync orders changes by commit and has no windows: it checks the column
  // (engine/iceberg_source.cc) and reports the key as having no effect.
  std::optional<std::string> watermark_column;
  std::string watermark_column_time_unit = "MICROSECONDS";

  StartingStrategy EffectiveStartingStrategy() const {
    return starting_strategy.value_or(streaming ? StartingStrategy::kLatest : StartingStrategy::kEarliest);
  }
  // The catalog to open; nullopt when neither catalog key was given (the caller's default).
  std::optional<catalog::CatalogConfig> catalog() const;
};

// Parses a JSON object (a YAML map after ParseYamlOrJson). `source` names the document in errors.
// Errors: InvalidArgument naming the key (and `source`) for unknown keys, wrong types, values out of
// range and contradictory settings.
Result<ChangelogConfig> ParseChangelogConfig(const nlohmann::json& map, std::string_view source = "config");
// The same from YAML or JSON text.
Result<ChangelogConfig> ParseChangelogConfigText(std::string_view text, std::string_view source);

}  // namespace lakesync::changelog
