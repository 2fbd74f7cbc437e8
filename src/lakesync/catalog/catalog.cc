#include "lakesync/catalog/catalog.h"

#include <fmt/format.h>

namespace lakesync::catalog {

Result<Namespace> ParseNamespace(std::string_view text) {
  Namespace ns;
  size_t start = 0;
  while (true) {
    const size_t dot = text.find('.', start);
    const std::string_view part = text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty()) return InvalidArgument("invalid namespace '{}': empty level", text);
    ns.emplace_back(part);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return ns;
}

std::string NamespaceToString(const Namespace& ns) { return fmt::format("{}", fmt::join(ns, ".")); }

Result<TableIdentifier> TableIdentifier::Parse(std::string_view text) {
  const size_t dot = text.rfind('.');
  if (dot == std::string_view::npos) {
    return InvalidArgument("invalid table identifier '{}': expected NAMESPACE.TABLE", text);
  }
  TableIdentifier id;
  LS_ASSIGN_OR_RAISE_CTX(id.ns, ParseNamespace(text.substr(0, dot)), "invalid table identifier '{}'", text);
  id.name = std::string(text.substr(dot + 1));
  if (id.name.empty()) return InvalidArgument("invalid table identifier '{}': empty table name", text);
  return id;
}

std::string TableIdentifier::ToString() const { return NamespaceToString(ns) + "." + name; }

Result<LoadedTable> Catalog::StageCreateTable(const CreateTableRequest& request) {
  return Unsupported("catalog '{}' cannot stage table creations (creating {})", name(), request.identifier.ToString());
}

Status Catalog::CommitTransaction(const std::vector<TableChange>& changes) {
  return Unsupported("catalog '{}' cannot commit several tables atomically", name());
}

Result<std::shared_ptr<iceberg::TableMetadata>> NewTableMetadata(const CreateTableRequest& request,
                                                                 const std::string& location) {
  using namespace iceberg;
  if (!request.schema) return InvalidArgument("creating {}: a schema is required", request.identifier.ToString());
  Properties props = request.properties;
  int format_version = kDefaultFormatVersion;
  if (auto it = props.find(kPropFormatVersion); it != props.end()) {
    if (it->second != "1" && it->second != "2" && it->second != "3") {
      return InvalidArgument("creating {}: format-version must be 2 or 3, got '{}'", request.identifier.ToString(),
                             it->second);
    }
    format_version = std::stoi(it->second);
    if (format_version < 2) {
      return Unsupported("creating {}: lakesync writes format versions 2 and 3, not {}", request.identifier.ToString(),
                         format_version);
    }
    props.erase(it);
  }
  auto m = std::make_shared<TableMetadata>();
  m->format_version = format_version;
  m->table_uuid = NewUuid();
  m->location = location;
  m->last_updated_ms = NowMs();
  auto schema = std::make_shared<const Schema>(0, request.schema->fields(), request.schema->identifier_field_ids());
  ARROW_RETURN_NOT_OK(WithContext(schema->Validate(), fmt::format("creating {}", request.identifier.ToString())));
  m->schemas = {schema};
  m->current_schema_id = 0;
  m->last_column_id = schema->HighestFieldId();
  auto spec = request.spec ? std::make_shared<const PartitionSpec>(0, request.spec->fields())
                           : PartitionSpec::Unpartitioned();
  ARROW_RETURN_NOT_OK(WithContext(spec->Validate(*schema), fmt::format("creating {}", request.identifier.ToString())));
  m->partition_specs = {spec};
  m->default_spec_id = 0;
  m->last_partition_id = spec->LastAssignedFieldId();
  if (request.sort_order && !request.sort_order->IsUnsorted()) {
    for (const auto& f : request.sort_order->fields) {
      const NestedField* src = schema->FindFieldById(f.source_id);
      if (!src || !f.transform.CanTransform(*src->type)) {
        return InvalidArgument("creating {}: sort field on source id {} is invalid", request.identifier.ToString(),
                               f.source_id);
      }
    }
    auto order = std::make_shared<SortOrder>(*request.sort_order);
    order->order_id = 1;
    m->sort_orders = {order};
    m->default_sort_order_id = 1;
  } else {
    m->sort_orders = {std::make_shared<SortOrder>()};
    m->default_sort_order_id = 0;
  }
  m->properties = std::move(props);
  ARROW_RETURN_NOT_OK(ValidateTableMetadata(*m));
  return m;
}

}  // namespace lakesync::catalog
