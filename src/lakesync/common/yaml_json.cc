#include "lakesync/common/yaml_json.h"

#include "lakesync/common/utf8.h"

#include <yaml-cpp/yaml.h>

#include <regex>

namespace lakesync {
namespace {

struct DuplicateKey {
  DuplicateKey(std::string k, YAML::Mark m) : key(std::move(k)), mark(m) {}
  std::string key;
  YAML::Mark mark;
};

// A key or value that is not UTF-8 (raw bytes in the file, or an escape such as "\ud800"): YAML and
// JSON text is Unicode, and everything downstream (JSON output, messages) needs valid UTF-8.
struct NotUtf8 {
  YAML::Mark mark;
};

const std::string& CheckUtf8(const std::string& s, const YAML::Mark& mark) {
  if (!IsValidUtf8(s)) throw NotUtf8{mark};
  return s;
}

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
        const std::string key = CheckUtf8(kv.first.as<std::string>(), kv.first.Mark());
        // YAML says keys are unique; silently keeping the last of two would hide a mistake.
        if (obj.contains(key)) throw DuplicateKey(key, kv.first.Mark());
        obj[key] = ToJson(kv.second);
      }
      return obj;
    }
    case YAML::NodeType::Scalar: break;
  }
  const std::string& s = CheckUtf8(node.Scalar(), node.Mark());
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
  } catch (const NotUtf8& n) {
    return InvalidArgument("{}: line {}, column {}: the text is not valid UTF-8", source, n.mark.line + 1,
                           n.mark.column + 1);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("{}: line {}, column {}: {}", source, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
}

}  // namespace lakesync
