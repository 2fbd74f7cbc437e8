// lakesync table create|describe|history|append
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <arrow/record_batch.h>

#include "cli.h"
#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/iceberg/model/schema_document.h"
#include "lakesync/iceberg/model/spec_syntax.h"
#include "lakesync/io/file_io.h"
#include "lakesync/sink/progress.h"
#include "lakesync/table/append.h"
#include "lakesync/table/row_deletes.h"
#include "lakesync/table/table.h"

namespace lakesync::cli {
namespace {

using iceberg::FormatTimestamp;

std::string Timestamp(int64_t ms) { return FormatTimestamp(ms * 1000, false, false) + "Z"; }

std::string FieldLine(const iceberg::Schema& schema, const iceberg::NestedField& f) {
  const auto& ids = schema.identifier_field_ids();
  const bool key = std::find(ids.begin(), ids.end(), f.id) != ids.end();
  return fmt::format("  {}: {}: {} {}{}\n", f.id, f.name, f.required ? "required" : "optional", f.type->ToString(),
                     key ? " (identifier)" : "");
}

std::string Describe(const table::Table& t) {
  const auto& m = *t.metadata();
  std::string out;
  out += fmt::format("Table            {}\n", t.name());
  out += fmt::format("Format version   {}\n", m.format_version);
  out += fmt::format("UUID             {}\n", m.table_uuid);
  out += fmt::format("Location         {}\n", m.location);
  out += fmt::format("Metadata         {}\n", t.metadata_location());
  if (auto s = m.CurrentSnapshot()) {
    out += fmt::format("Current snapshot {} ({}, {}, sequence {})\n", s->snapshot_id, s->operation(),
                       Timestamp(s->timestamp_ms), s->sequence_number);
    auto total = s->summary.find("total-records");
    if (total != s->summary.end()) {
      // Physical records are what the data files hold; live rows are what a reader sees once the
      // deletes (deletion vectors, position deletes) are applied.
      out += fmt::format("Records          {}\n", total->second);
      if (auto live = sink::LiveRecords(*s)) {
        out += fmt::format("Live rows        {} (records minus {} deleted by position deletes and deletion "
                           "vectors)\n", *live, std::stoll(total->second) - *live);
      } else {
        out += "Live rows        unknown without a scan (the table has equality deletes)\n";
      }
    }
  } else {
    out += "Current snapshot none\n";
  }
  auto schema = m.Schema();
  out += fmt::format("Schema (id {}):\n", schema->schema_id());
  for (const auto& f : schema->fields()) out += FieldLine(*schema, f);
  auto spec = m.Spec();
  if (spec->fields().empty()) {
    out += fmt::format("Partition spec (id {}): unpartitioned\n", spec->spec_id());
  } else {
    out += fmt::format("Partition spec (id {}):\n", spec->spec_id());
    for (const auto& f : spec->fields()) {
      out += fmt::format("  {}: {} = {}({})\n", f.field_id, f.name, f.transform.ToString(),
                         schema->FindColumnName(f.source_id));
    }
  }
  auto order = m.SortOrder();
  if (!order || order->IsUnsorted()) {
    out += "Sort order: unsorted\n";
  } else {
    out += fmt::format("Sort order (id {}):\n", order->order_id);
    for (const auto& f : order->fields) {
      out += fmt::format("  {}({}) {} {}\n", f.transform.ToString(), schema->FindColumnName(f.source_id),
                         f.direction == iceberg::SortDirection::kAsc ? "asc" : "desc",
                         f.null_order == iceberg::NullOrder::kNullsFirst ? "nulls first" : "nulls last");
    }
  }
  if (!m.properties.empty()) {
    out += "Properties:\n";
    for (const auto& [k, v] : m.properties) out += fmt::format("  {} = {}\n", k, v);
  }
  return out;
}

Result<iceberg::SchemaPtr> SchemaFromArgs(const io::FileIO& io, const std::string& schema_file,
                                          const std::string& schema_from) {
  if (!schema_file.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(schema_file));
    LS_ASSIGN_OR_RAISE_CTX(std::string text, io.ReadAll(location), "reading schema file");
    return iceberg::ParseSchemaDocument(text, schema_file);
  }
  // The schema of a data file (Parquet, or CSV/JSON Lines with inferred types); fresh field ids.
  ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(schema_from));
  ARROW_ASSIGN_OR_RAISE(auto format, tabular::FormatFromPath(schema_from));
  ARROW_ASSIGN_OR_RAISE(auto reader, tabular::OpenReader(io, location, format, {}));
  LS_ASSIGN_OR_RAISE_CTX(auto schema, iceberg::FromArrowSchema(*reader->schema(), /*assign_fresh_ids=*/true),
                         "deriving a schema from {}", schema_from);
  return schema;
}

void RegisterCreate(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table, schema_file, schema_from, location, identifier_fields;
    std::vector<std::string> partitions, sorts, properties;
    int format_version = 2;
    bool if_not_exists = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand("create", "Create an Iceberg table");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  auto* schema_opt = cmd->add_option("--schema", a->schema_file,
                                     "schema file (JSON or YAML): an Iceberg schema, or {fields: [{name, type, "
                                     "required}]} without ids");
  auto* from_opt = cmd->add_option("--schema-from", a->schema_from,
                                   "take the schema from a data file (.parquet, .csv, .jsonl); ids are assigned");
  schema_opt->excludes(from_opt);
  cmd->add_option("--partition", a->partitions,
                  "partition field (repeatable or comma-separated): col, bucket(col, 16), truncate(col, 4), "
                  "year(col), month(col), day(col), hour(col), void(col)")
      ->delimiter('\0');
  cmd->add_option("--sort", a->sorts, "sort field (repeatable): '<term> [asc|desc] [nulls first|last]'");
  cmd->add_option("--identifier-fields", a->identifier_fields, "comma-separated key columns (must be required)");
  cmd->add_option("--property,-p", a->properties, "table property KEY=VALUE (repeatable)");
  cmd->add_option("--format-version", a->format_version, "Iceberg format version: 2 (default) or 3")
      ->check(CLI::IsMember({2, 3}));
  cmd->add_option("--location", a->location, "table location (default: chosen by the catalog)");
  cmd->add_flag("--if-not-exists", a->if_not_exists, "succeed if the table already exists");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      if (a->schema_file.empty() && a->schema_from.empty()) {
        return InvalidArgument("table create needs --schema FILE or --schema-from DATAFILE");
      }
      ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(a->table));
      ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(cli.global));
      ARROW_ASSIGN_OR_RAISE(auto schema, SchemaFromArgs(*catalog->io(), a->schema_file, a->schema_from));
      if (!a->identifier_fields.empty()) {
        std::vector<int32_t> ids;
        for (const auto& name : iceberg::SplitTopLevelCommas(a->identifier_fields)) {
          const auto* f = schema->FindFieldByName(name);
          if (!f) return InvalidArgument("--identifier-fields: no column named '{}'", name);
          ids.push_back(f->id);
        }
        schema = std::make_shared<const iceberg::Schema>(schema->schema_id(), schema->fields(), ids);
        ARROW_RETURN_NOT_OK(WithContext(schema->Validate(), "--identifier-fields"));
      }
      std::vector<std::string> partition_terms, sort_terms;
      for (const auto& p : a->partitions) {
        for (auto& t : iceberg::SplitTopLevelCommas(p)) partition_terms.push_back(t);
      }
      for (const auto& s : a->sorts) sort_terms.push_back(s);
      catalog::CreateTableRequest req;
      req.identifier = id;
      req.schema = schema;
      ARROW_ASSIGN_OR_RAISE(req.spec, iceberg::ParsePartitionFields(partition_terms, *schema));
      ARROW_ASSIGN_OR_RAISE(req.sort_order, iceberg::ParseSortFields(sort_terms, *schema));
      ARROW_ASSIGN_OR_RAISE(req.properties, ParseKeyValues(a->properties, "--property"));
      if (req.properties.count("format-version")) {
        return InvalidArgument("--property format-version: use --format-version instead");
      }
      req.properties["format-version"] = std::to_string(a->format_version);
      if (!a->location.empty()) req.location = a->location;
      ARROW_ASSIGN_OR_RAISE(bool ns_exists, catalog->NamespaceExists(id.ns));
      if (!ns_exists) return MissingNamespace(id.ns);
      auto created = catalog->CreateTable(req);
      if (!created.ok()) {
        if (a->if_not_exists && KindOf(created.status()) == ErrorKind::kAlreadyExists) {
          Print("table " + id.ToString() + " already exists\n");
          return Status::OK();
        }
        return created.status();
      }
      Print(fmt::format("created table {} (format v{}) at {}\n", id.ToString(), a->format_version,
                        created->metadata->location));
      return Status::OK();
    };
  });
}

void RegisterDescribe(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand("describe", "Show a table's schema, partitioning, properties and state");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_flag("--json", a->json, "print the full table metadata JSON");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto t, LoadNamedTable(cli.global, a->table));
      Print(a->json ? iceberg::TableMetadataToJson(*t->metadata()).dump(2) + "\n" : Describe(*t));
      return Status::OK();
    };
  });
}

void RegisterHistory(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand("history", "List the table's snapshots, oldest first");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_flag("--json", a->json, "print a JSON array of snapshots (with full summaries)");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto t, LoadNamedTable(cli.global, a->table));
      const auto& m = *t->metadata();
      auto snapshots = m.snapshots;
      std::stable_sort(snapshots.begin(), snapshots.end(), [](const auto& x, const auto& y) {
        return std::tie(x->sequence_number, x->timestamp_ms) < std::tie(y->sequence_number, y->timestamp_ms);
      });
      auto current = m.current_snapshot_id;
      if (a->json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& s : snapshots) {
          auto j = iceberg::SnapshotToJson(*s);
          j["is-current"] = current == s->snapshot_id;
          arr.push_back(j);
        }
        Print(arr.dump(2) + "\n");
        return Status::OK();
      }
      auto get = [](const iceberg::Snapshot& s, const char* key) {
        auto it = s.summary.find(key);
        return it == s.summary.end() ? std::string("-") : it->second;
      };
      auto removed = [](const iceberg::Snapshot& s) {
        auto v = sink::RemovedRecords(s);
        return v ? std::to_string(*v) : std::string("-");
      };
      auto live = [](const iceberg::Snapshot& s) {
        auto v = sink::LiveRecords(s);
        return v ? std::to_string(*v) : std::string("-");
      };
      std::string out = fmt::format("{:<20} {:<20} {:>4} {:<27} {:<9} {:>10} {:>10} {:>12} {:>12}\n", "snapshot-id",
                                    "parent-id", "seq", "committed-at", "operation", "added", "removed", "live",
                                    "records");
      for (const auto& s : snapshots) {
        out += fmt::format("{:<20} {:<20} {:>4} {:<27} {:<9} {:>10} {:>10} {:>12} {:>12}{}\n", s->snapshot_id,
                           s->parent_snapshot_id ? std::to_string(*s->parent_snapshot_id) : "-", s->sequence_number,
                           Timestamp(s->timestamp_ms), s->operation(), get(*s, "added-records"), removed(*s), live(*s),
                           get(*s, "total-records"), current == s->snapshot_id ? "  (current)" : "");
      }
      if (snapshots.empty()) out += "(no snapshots)\n";
      Print(out);
      return Status::OK();
    };
  });
}

void RegisterAppend(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table, format;
    std::vector<std::string> files;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand("append", "Append rows from Parquet, CSV or JSON Lines files (one commit)");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_option("files", a->files, "input files (.parquet, .csv, .jsonl)")->required();
  cmd->add_option("--input-format", a->format, "parquet, csv or jsonl (default: from each file's extension)");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto t, LoadNamedTable(cli.global, a->table));
      table::AppendOptions options;
      if (!a->format.empty()) {
        ARROW_ASSIGN_OR_RAISE(auto f, tabular::ParseFormat(a->format));
        options.format = f;
      }
      ARROW_ASSIGN_OR_RAISE(auto result, table::AppendFiles(t, a->files, options));
      Print(fmt::format("appended {} rows in {} data files to {} (snapshot {})\n", result.added_records,
                        result.added_files, t->name(), result.snapshot_id));
      return Status::OK();
    };
  });
}

void RegisterDelete(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table, where, mode = "position", equality_columns;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand(
      "delete", "Delete the rows matching a filter without rewriting data files (merge-on-read)");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_option("--where", a->where, "rows to delete, e.g. \"id < 100\" ('true' deletes every row)")->required();
  cmd->add_option("--mode", a->mode,
                  "position (default): deletion vectors on v3, position delete files on v2; equality: equality "
                  "delete files keyed by --equality-columns (slower to read, for engines that need them)")
      ->check(CLI::IsMember({"position", "equality"}));
  cmd->add_option("--equality-columns", a->equality_columns,
                  "comma-separated key columns for --mode equality (default: the identifier fields)");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto t, LoadNamedTable(cli.global, a->table));
      table::DeleteWhereOptions options;
      options.filter = a->where;
      options.mode = a->mode == "equality" ? table::DeleteMode::kEquality : table::DeleteMode::kPosition;
      if (!a->equality_columns.empty()) options.equality_columns = iceberg::SplitTopLevelCommas(a->equality_columns);
      ARROW_ASSIGN_OR_RAISE(auto result, table::DeleteWhere(t, options));
      if (!result.snapshot_id) {
        Print("no rows matched; nothing committed\n");
      } else {
        Print(fmt::format("deleted {} rows from {} with {} delete files (snapshot {})\n", result.deleted_rows,
                          t->name(), result.delete_files, *result.snapshot_id));
      }
      return Status::OK();
    };
  });
}

void RegisterDrop(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table;
    bool purge = false, if_exists = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand("drop", "Drop a table from the catalog (--purge also deletes its files)");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_flag("--purge", a->purge, "delete the table's data and metadata files too");
  cmd->add_flag("--if-exists", a->if_exists, "succeed if the table does not exist");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(a->table));
      ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(cli.global));
      Status st = catalog->DropTable(id, a->purge);
      if (!st.ok() && !(a->if_exists && KindOf(st) == ErrorKind::kNotFound)) return st;
      Print(st.ok() ? "dropped table " + id.ToString() + (a->purge ? " and its files\n" : "\n")
                    : "table " + id.ToString() + " does not exist\n");
      return Status::OK();
    };
  });
}

void RegisterUpgrade(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table;
    int format_version = 3;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand("upgrade", "Upgrade a table's format version (v2 to v3 enables deletion vectors)");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_option("--format-version", a->format_version, "the version to upgrade to (3)")
      ->check(CLI::IsMember({2, 3}));
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(a->table));
      ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(cli.global));
      ARROW_ASSIGN_OR_RAISE(auto t, table::Table::Load(catalog, id));
      const int from = t->metadata()->format_version;
      if (from == a->format_version) {
        Print(fmt::format("{} is already format v{}\n", t->name(), from));
        return Status::OK();
      }
      if (from > a->format_version) {
        return InvalidArgument("{} is format v{}; tables cannot be downgraded to v{}", t->name(), from,
                               a->format_version);
      }
      std::vector<iceberg::TableRequirement> requirements = {iceberg::AssertTableUuid{t->metadata()->table_uuid}};
      std::vector<iceberg::TableUpdate> updates = {iceberg::UpgradeFormatVersion{a->format_version}};
      ARROW_ASSIGN_OR_RAISE(auto committed, catalog->CommitTable(id, requirements, updates));
      Print(fmt::format("upgraded {} from format v{} to v{}\n", t->name(), from, a->format_version));
      return Status::OK();
    };
  });
}

void RegisterList(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string ns;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand("list", "List the tables of a namespace (or of every namespace)");
  cmd->add_option("namespace", a->ns, "namespace, e.g. shop (default: all namespaces)");
  cmd->add_flag("--json", a->json, "print a JSON array of table names");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(cli.global));
      std::vector<catalog::Namespace> namespaces;
      if (!a->ns.empty()) {
        ARROW_ASSIGN_OR_RAISE(auto ns, catalog::ParseNamespace(a->ns));
        ARROW_ASSIGN_OR_RAISE(bool exists, catalog->NamespaceExists(ns));
        if (!exists) return MissingNamespace(ns);
        namespaces.push_back(ns);
      } else {
        // Every level, depth first: a.b is listed under a.
        std::vector<catalog::Namespace> todo = {catalog::Namespace{}};
        while (!todo.empty()) {
          auto parent = todo.back();
          todo.pop_back();
          ARROW_ASSIGN_OR_RAISE(auto children, catalog->ListNamespaces(parent));
          for (auto it = children.rbegin(); it != children.rend(); ++it) todo.push_back(*it);
          if (!parent.empty()) namespaces.push_back(parent);
        }
      }
      std::vector<std::string> names;
      for (const auto& ns : namespaces) {
        ARROW_ASSIGN_OR_RAISE(auto ids, catalog->ListTables(ns));
        std::sort(ids.begin(), ids.end());
        for (const auto& id : ids) names.push_back(id.ToString());
      }
      if (a->json) {
        Print(nlohmann::json(names).dump() + "\n");
      } else {
        std::string out;
        for (const auto& n : names) out += n + "\n";
        Print(out);
      }
      return Status::OK();
    };
  });
}

}  // namespace

void RegisterTableCommands(Cli& cli) {
  auto* table_cmd = cli.app.add_subcommand("table", "Create, inspect, append to and delete from Iceberg tables");
  table_cmd->require_subcommand(1);
  RegisterList(cli, table_cmd);
  RegisterCreate(cli, table_cmd);
  RegisterDescribe(cli, table_cmd);
  RegisterHistory(cli, table_cmd);
  RegisterAppend(cli, table_cmd);
  RegisterDelete(cli, table_cmd);
  RegisterDrop(cli, table_cmd);
  RegisterUpgrade(cli, table_cmd);
  RegisterTableMaintenance(cli, table_cmd);
  RegisterTableAlter(cli, table_cmd);
}

}  // namespace lakesync::cli
