#include "lakesync/common/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <regex>

namespace lakesync {
namespace {

struct DuplicateKey {
  DuplicateKey(std::string k, YAML::Mark m) : key(std::move(k)), mark(m) {}
  std::string key;
  YAML::Mark mark;
};

nlohmann::json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Sequence: {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& item : node) arr.push_back(ToJson(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      nlohmann::json obj = nlohmann::json::object();
      for (const auto& kv : node) {
        const std::string key = kv.first.as<std::string>();
        // YAML says keys are unique; silently keeping the last of two would hide a mistake.
        if (obj.contains(key)) throw DuplicateKey(key, kv.first.Mark());
        obj[key] = ToJson(kv.second);
      }
      return obj;
    }
    case YAML::NodeType::Scalar: break;
  }
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted scalar: always a string
  static const std::regex kInt(R"(^[-+]?[0-9]+$)");
  static const std::regex kFloat(R"(^[-+]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?$)");
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s == "null" || s == "~" || s == "Null" || s == "NULL") return nullptr;
  if (std::regex_match(s, kInt)) {
    try {
      return std::stoll(s);
    } catch (...) {
      return s;
    }
  }
  if (std::regex_match(s, kFloat)) {
    try {
      return std::stod(s);
    } catch (...) {
      return s;
    }
  }
  return s;
}

}  // namespace

Result<nlohmann::json> ParseYamlOrJson(std::string_view text, std::string_view source) {
  try {
    YAML::Node node = YAML::Load(std::string(text));
    return ToJson(node);
  } catch (const DuplicateKey& d) {
    return InvalidArgument("{}: line {}, column {}: key '{}' is given twice", source, d.mark.line + 1,
                           d.mark.column + 1, d.key);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("{}: line {}, column {}: {}", source, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
}

}  // namespace lakesync
