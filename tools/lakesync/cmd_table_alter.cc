// lakesync table alter NS.T add-column | rename-column | widen | drop-column: schema changes
// (docs/cli.md). The rules live in iceberg/model/schema_update.h; this file only parses arguments.
#include <fmt/format.h>

#include "cli.h"
#include "lakesync/table/alter_schema.h"

namespace lakesync::cli {
namespace {

struct AlterArgs {
  std::string table;
  std::string name, new_name, type, after, doc;
};

// Shared by the four actions: load, change, commit, say what the schema is now.
Status RunAlter(Cli& cli, const AlterArgs& a, const iceberg::SchemaChange& change) {
  ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(a.table));
  ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(cli.global));
  ARROW_ASSIGN_OR_RAISE(auto t, table::Table::Load(catalog, id));
  ARROW_ASSIGN_OR_RAISE(auto result, table::AlterSchema(*t, {change}));
  if (!result.changed) {
    Print(fmt::format("{}: {} changes nothing; the schema stays as it is (id {})\n", t->name(), change.ToString(),
                      result.schema->schema_id()));
    return Status::OK();
  }
  std::string out = fmt::format("{}: {}; schema id {} is current\n", t->name(), change.ToString(),
                                result.schema->schema_id());
  for (const auto& f : result.schema->fields()) {
    out += fmt::format("  {}: {}: {} {}\n", f.id, f.name, f.required ? "required" : "optional", f.type->ToString());
  }
  Print(out);
  return Status::OK();
}

Result<iceberg::TypePtr> ParseType(const std::string& text) {
  LS_ASSIGN_OR_RAISE_CTX(auto type, iceberg::Type::ParsePrimitive(text), "TYPE");
  return type;
}

}  // namespace

void RegisterTableAlter(Cli& cli, CLI::App* table_cmd) {
  auto a = std::make_shared<AlterArgs>();
  auto* alter = table_cmd->add_subcommand(
      "alter", "Change a table's schema: add, rename, widen or drop a column (field ids as the Iceberg spec says)");
  alter->require_subcommand(1);
  alter->fallthrough();  // --catalog and the global options after the action too
  alter->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  AddCatalogOption(*alter, cli.global);

  auto* add = alter->add_subcommand("add-column", "Add an optional column (older rows read it as null)");
  add->add_option("name", a->name,
                  "the new column's name, or a path for a field inside a struct (a.b, l.element.b, m.value.b)")
      ->required();
  add->add_option("type", a->type, "its type: int, long, string, decimal(10, 2), timestamptz, ...")->required();
  add->add_option("--after", a->after, "place it after this column (default: last)");
  add->add_option("--doc", a->doc, "the column's documentation");
  add->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto type, ParseType(a->type));
      std::optional<std::string> after;
      if (!a->after.empty()) after = a->after;
      return RunAlter(cli, *a, iceberg::SchemaChange::Add(a->name, type, a->doc, after));
    };
  });

  auto* rename = alter->add_subcommand(
      "rename-column", "Rename a column, or a struct field by its path (st.a): its field id stays, old files read by id");
  rename->add_option("name", a->name, "the column, or a struct field's path (st.a)")->required();
  rename->add_option("new_name", a->new_name, "its new name (a field's name alone: b)")->required();
  rename->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      return RunAlter(cli, *a, iceberg::SchemaChange::Rename(a->name, a->new_name));
    };
  });

  auto* widen = alter->add_subcommand(
      "widen", "Promote a column's type: int to long, float to double, decimal(P, S) to decimal(P', S) with P' >= P "
               "(v3: date to timestamp)");
  widen->add_option("name", a->name, "the column, or a path to a nested field (a.b)")->required();
  widen->add_option("type", a->type, "the wider type")->required();
  widen->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto type, ParseType(a->type));
      return RunAlter(cli, *a, iceberg::SchemaChange::Widen(a->name, type));
    };
  });

  auto* drop = alter->add_subcommand(
      "drop-column", "Drop a column (its id is retired; identifier fields and partition/sort sources cannot be dropped)");
  drop->add_option("name", a->name, "the column")->required();
  drop->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status { return RunAlter(cli, *a, iceberg::SchemaChange::Drop(a->name)); };
  });
}

}  // namespace lakesync::cli
