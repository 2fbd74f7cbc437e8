// catalog_probe: drives a lakesync catalog from the command line so that tests in other languages
// (tests/interop/test_sql_catalog_pyiceberg.py) can check it against pyiceberg on one database.
//
//   catalog_probe [--name NAME] [--prop key=value]... <command> [args]
//
// The catalog is LoadCatalog({NAME (default "lakesync"), the --prop properties}).
// commands (results are JSON on stdout):
//   create-namespace NS [key=value]...          → {"created": ["a","b"]}
//   list-namespaces [PARENT]                    → [["a"], ["b"]]
//   namespace-properties NS                     → {"key": "value"}
//   drop-namespace NS                           → {"dropped": ["a"]}
//   create-table ID SCHEMA [--spec SPEC] [--table-prop key=value]... [--location LOC]
//       SCHEMA / SPEC: a JSON document (Iceberg schema / partition spec) or a file holding one
//                                               → {"metadata_location": ..., "metadata": {...}}
//   load-table ID                               → as create-table
//   commit-property ID KEY VALUE                → as create-table (after the commit)
//   list-tables NS                              → ["a.t1", "a.t2"]
//   rename-table FROM TO, drop-table ID [--purge] → {"ok": true}
// Errors print "error<TAB><kind><TAB><message>" to stderr and exit with 1; usage errors exit with 2.
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/catalog_config.h"
#include "lakesync/iceberg/model/json_serde.h"

namespace {

using lakesync::Result;
using lakesync::Status;
using namespace lakesync::catalog;

int Usage(const std::string& why) {
  std::cerr << "catalog_probe: " << why << "\n"
            << "usage: catalog_probe [--name NAME] [--prop key=value]... <command> [args]\n"
            << "commands: create-namespace list-namespaces namespace-properties drop-namespace create-table "
               "load-table commit-property list-tables rename-table drop-table\n";
  return 2;
}

int Fail(const Status& status) {
  std::cerr << "error\t" << lakesync::ErrorKindName(lakesync::KindOf(status)) << "\t" << status.message() << "\n";
  return 1;
}

bool SplitKeyValue(const std::string& kv, std::map<std::string, std::string>* out) {
  const size_t eq = kv.find('=');
  if (eq == std::string::npos) return false;
  (*out)[kv.substr(0, eq)] = kv.substr(eq + 1);
  return true;
}

// An inline JSON document, or the path of a file holding one.
Result<nlohmann::json> JsonArgument(const std::string& arg) {
  std::string text = arg;
  if (arg.empty() || (arg.front() != '{' && arg.front() != '[')) {
    std::ifstream in(arg);
    if (!in) return lakesync::NotFound("cannot open {}", arg);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return lakesync::InvalidArgument("malformed JSON in '{}': {}", arg, e.what());
  }
}

nlohmann::json TableJson(const LoadedTable& table) {
  return {{"identifier", table.identifier.ToString()},
          {"metadata_location", table.metadata_location},
          {"metadata", lakesync::iceberg::TableMetadataToJson(*table.metadata)}};
}

Status Run(Catalog& catalog, const std::string& command, const std::vector<std::string>& args) {
  auto need = [&](size_t n) -> Status {
    if (args.size() < n) return lakesync::InvalidArgument("{} needs {} argument(s)", command, n);
    return Status::OK();
  };
  if (command == "create-namespace") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(auto ns, ParseNamespace(args[0]));
    Properties props;
    for (size_t i = 1; i < args.size(); ++i) {
      if (!SplitKeyValue(args[i], &props)) return lakesync::InvalidArgument("expected key=value, got {}", args[i]);
    }
    ARROW_RETURN_NOT_OK(catalog.CreateNamespace(ns, props));
    std::cout << nlohmann::json{{"created", ns}}.dump() << "\n";
  } else if (command == "list-namespaces") {
    Namespace parent;
    if (!args.empty()) {
      ARROW_ASSIGN_OR_RAISE(parent, ParseNamespace(args[0]));
    }
    ARROW_ASSIGN_OR_RAISE(auto list, catalog.ListNamespaces(parent));
    std::cout << nlohmann::json(list).dump() << "\n";
  } else if (command == "namespace-properties") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(auto ns, ParseNamespace(args[0]));
    ARROW_ASSIGN_OR_RAISE(auto props, catalog.LoadNamespaceMetadata(ns));
    std::cout << nlohmann::json(props).dump() << "\n";
  } else if (command == "drop-namespace") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(auto ns, ParseNamespace(args[0]));
    ARROW_RETURN_NOT_OK(catalog.DropNamespace(ns));
    std::cout << nlohmann::json{{"dropped", ns}}.dump() << "\n";
  } else if (command == "create-table") {
    ARROW_RETURN_NOT_OK(need(2));
    CreateTableRequest request;
    ARROW_ASSIGN_OR_RAISE(request.identifier, TableIdentifier::Parse(args[0]));
    ARROW_ASSIGN_OR_RAISE(auto schema_json, JsonArgument(args[1]));
    ARROW_ASSIGN_OR_RAISE(request.schema, lakesync::iceberg::SchemaFromJson(schema_json));
    for (size_t i = 2; i < args.size(); ++i) {
      const std::string& flag = args[i];
      if (i + 1 >= args.size()) return lakesync::InvalidArgument("{} needs a value", flag);
      const std::string& value = args[++i];
      if (flag == "--spec") {
        ARROW_ASSIGN_OR_RAISE(auto spec_json, JsonArgument(value));
        ARROW_ASSIGN_OR_RAISE(request.spec, lakesync::iceberg::PartitionSpecFromJson(spec_json));
      } else if (flag == "--table-prop") {
        if (!SplitKeyValue(value, &request.properties)) {
          return lakesync::InvalidArgument("expected key=value, got {}", value);
        }
      } else if (flag == "--location") {
        request.location = value;
      } else {
        return lakesync::InvalidArgument("unknown create-table flag {}", flag);
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto table, catalog.CreateTable(request));
    std::cout << TableJson(table).dump() << "\n";
  } else if (command == "load-table") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(auto id, TableIdentifier::Parse(args[0]));
    ARROW_ASSIGN_OR_RAISE(auto table, catalog.LoadTable(id));
    std::cout << TableJson(table).dump() << "\n";
  } else if (command == "commit-property") {
    ARROW_RETURN_NOT_OK(need(3));
    ARROW_ASSIGN_OR_RAISE(auto id, TableIdentifier::Parse(args[0]));
    ARROW_ASSIGN_OR_RAISE(auto current, catalog.LoadTable(id));
    ARROW_ASSIGN_OR_RAISE(
        auto table, catalog.CommitTable(id, {lakesync::iceberg::AssertTableUuid{current.metadata->table_uuid}},
                                        {lakesync::iceberg::SetProperties{{{args[1], args[2]}}}}));
    std::cout << TableJson(table).dump() << "\n";
  } else if (command == "list-tables") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(auto ns, ParseNamespace(args[0]));
    ARROW_ASSIGN_OR_RAISE(auto tables, catalog.ListTables(ns));
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : tables) out.push_back(t.ToString());
    std::cout << out.dump() << "\n";
  } else if (command == "rename-table") {
    ARROW_RETURN_NOT_OK(need(2));
    ARROW_ASSIGN_OR_RAISE(auto from, TableIdentifier::Parse(args[0]));
    ARROW_ASSIGN_OR_RAISE(auto to, TableIdentifier::Parse(args[1]));
    ARROW_RETURN_NOT_OK(catalog.RenameTable(from, to));
    std::cout << nlohmann::json{{"ok", true}}.dump() << "\n";
  } else if (command == "drop-table") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(auto id, TableIdentifier::Parse(args[0]));
    const bool purge = args.size() > 1 && args[1] == "--purge";
    ARROW_RETURN_NOT_OK(catalog.DropTable(id, purge));
    std::cout << nlohmann::json{{"ok", true}}.dump() << "\n";
  } else {
    return lakesync::InvalidArgument("unknown command {}", command);
  }
  return Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  CatalogConfig config;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (positional.empty() && arg == "--name") {
      if (i + 1 >= argc) return Usage("--name needs a value");
      config.catalog_name = argv[++i];
    } else if (positional.empty() && arg == "--prop") {
      if (i + 1 >= argc || !SplitKeyValue(argv[i + 1], &config.catalog_properties)) {
        return Usage("--prop needs key=value");
      }
      ++i;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.empty()) return Usage("no command");
  auto catalog = LoadCatalog(config);
  if (!catalog.ok()) return Fail(catalog.status());
  const std::string command = positional[0];
  positional.erase(positional.begin());
  Status st = Run(**catalog, command, positional);
  if (!st.ok()) return Fail(st);
  return 0;
}
