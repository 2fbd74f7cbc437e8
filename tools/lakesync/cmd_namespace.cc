// lakesync namespace create|list|drop
#include <nlohmann/json.hpp>

#include "cli.h"

namespace lakesync::cli {

void RegisterNamespaceCommands(Cli& cli) {
  auto* ns_cmd = cli.app.add_subcommand("namespace", "Create, list and drop namespaces");
  ns_cmd->require_subcommand(1);

  struct CreateArgs {
    std::string name;
    std::vector<std::string> properties;
    bool if_not_exists = false;
  };
  auto create_args = std::make_shared<CreateArgs>();
  auto* create = ns_cmd->add_subcommand("create", "Create a namespace (levels separated by '.')");
  create->add_option("name", create_args->name, "namespace, e.g. sales or sales.eu")->required();
  create->add_option("--property,-p", create_args->properties, "namespace property KEY=VALUE (repeatable)");
  create->add_flag("--if-not-exists", create_args->if_not_exists, "succeed if the namespace already exists");
  AddCatalogOption(*create, cli.global);
  create->callback([&cli, create_args] {
    cli.action = [&cli, create_args]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto ns, catalog::ParseNamespace(create_args->name));
      ARROW_ASSIGN_OR_RAISE(auto props, ParseKeyValues(create_args->properties, "--property"));
      ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(cli.global));
      Status st = catalog->CreateNamespace(ns, props);
      if (!st.ok() && !(create_args->if_not_exists && KindOf(st) == ErrorKind::kAlreadyExists)) return st;
      Print(st.ok() ? "created namespace " + create_args->name + "\n"
                    : "namespace " + create_args->name + " already exists\n");
      return Status::OK();
    };
  });

  struct ListArgs {
    std::string parent;
    bool json = false;
  };
  auto list_args = std::make_shared<ListArgs>();
  auto* list = ns_cmd->add_subcommand("list", "List namespaces (children of PARENT, or top-level)");
  list->add_option("parent", list_args->parent, "parent namespace");
  list->add_flag("--json", list_args->json, "print a JSON array");
  AddCatalogOption(*list, cli.global);
  list->callback([&cli, list_args] {
    cli.action = [&cli, list_args]() -> Status {
      catalog::Namespace parent;
      if (!list_args->parent.empty()) {
        ARROW_ASSIGN_OR_RAISE(parent, catalog::ParseNamespace(list_args->parent));
      }
      ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(cli.global));
      ARROW_ASSIGN_OR_RAISE(auto namespaces, catalog->ListNamespaces(parent));
      std::string out;
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& ns : namespaces) {
        out += catalog::NamespaceToString(ns) + "\n";
        arr.push_back(catalog::NamespaceToString(ns));
      }
      Print(list_args->json ? arr.dump() + "\n" : out);
      return Status::OK();
    };
  });

  struct DropArgs {
    std::string name;
    bool if_exists = false;
  };
  auto drop_args = std::make_shared<DropArgs>();
  auto* drop = ns_cmd->add_subcommand("drop", "Drop an empty namespace");
  drop->add_option("name", drop_args->name, "namespace")->required();
  drop->add_flag("--if-exists", drop_args->if_exists, "succeed if the namespace does not exist");
  AddCatalogOption(*drop, cli.global);
  drop->callback([&cli, drop_args] {
    cli.action = [&cli, drop_args]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto ns, catalog::ParseNamespace(drop_args->name));
      ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(cli.global));
      Status st = catalog->DropNamespace(ns);
      if (!st.ok() && !(drop_args->if_exists && KindOf(st) == ErrorKind::kNotFound)) return st;
      Print(st.ok() ? "dropped namespace " + drop_args->name + "\n"
                    : "namespace " + drop_args->name + " does not exist\n");
      return Status::OK();
    };
  });
}

}  // namespace lakesync::cli
