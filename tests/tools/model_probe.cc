// model_probe: the iceberg_model codecs and transforms from the command line, for
// tests/interop/test_transforms_oracle.py, which holds them against pyiceberg.
//
// Reads one JSON request per line from stdin and writes one JSON answer per line to stdout:
//   {"type": T, "transform": "bucket[16]", "value": V}   apply a transform (the default operation);
//        answer {"ok": true, "result": R, "result_type": RT}, R the Appendix C JSON of the result
//   {"op": "hash", "type": T, "value": V}                the 32-bit bucket hash before masking
//   {"op": "to_bytes", "type": T, "value": V}            Appendix D bytes: {"ok": true, "hex": "..."}
//   {"op": "from_bytes", "type": T, "hex": "..."}        decode Appendix D bytes: {"ok": true, "value": V}
//   {"op": "json", "type": T, "value": V}                parse and re-write an Appendix C value
//   {"op": "parse_type", "type": "decimal(10, 2)"}       {"ok": true, "type": "<canonical name>"}
//   {"op": "schema", "schema": S}                        parse a schema JSON and write it back
// T is an Iceberg primitive type name and V a JSON single value (spec Appendix C). Errors are answered
// with {"ok": false, "error": "..."} on the same line, so one bad request does not end the run.
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/iceberg/model/transform.h"
#include "lakesync/iceberg/model/types.h"

namespace lakesync::iceberg {
namespace {

using json = nlohmann::json;

std::string ToHex(const std::string& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

Result<std::string> FromHex(const std::string& hex) {
  if (hex.size() % 2) return InvalidArgument("odd-length hex '{}'", hex);
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    try {
      out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    } catch (const std::exception&) {
      return InvalidArgument("bad hex '{}'", hex);
    }
  }
  return out;
}

Result<std::string> GetString(const json& request, const char* key) {
  auto it = request.find(key);
  if (it == request.end() || !it->is_string()) return InvalidArgument("request needs a string '{}'", key);
  return it->get<std::string>();
}

Result<json> Handle(const json& request) {
  if (!request.is_object()) return InvalidArgument("a request must be a JSON object");
  std::string op = "transform";
  if (request.contains("op")) {
    ARROW_ASSIGN_OR_RAISE(op, GetString(request, "op"));
  }
  if (op == "schema") {
    if (!request.contains("schema")) return InvalidArgument("request needs 'schema'");
    ARROW_ASSIGN_OR_RAISE(auto schema, SchemaFromJson(request["schema"]));
    ARROW_RETURN_NOT_OK(schema->Validate());
    return json{{"schema", SchemaToJson(*schema)}};
  }
  ARROW_ASSIGN_OR_RAISE(auto type_name, GetString(request, "type"));
  ARROW_ASSIGN_OR_RAISE(auto type, Type::ParsePrimitive(type_name));
  if (op == "parse_type") return json{{"type", type->ToString()}};
  if (op == "from_bytes") {
    ARROW_ASSIGN_OR_RAISE(auto hex, GetString(request, "hex"));
    ARROW_ASSIGN_OR_RAISE(auto bytes, FromHex(hex));
    ARROW_ASSIGN_OR_RAISE(auto literal, Literal::FromBytes(*type, bytes));
    ARROW_ASSIGN_OR_RAISE(auto value, literal.ToJson(*type));
    return json{{"value", value}};
  }
  if (!request.contains("value")) return InvalidArgument("request needs 'value'");
  ARROW_ASSIGN_OR_RAISE(auto literal, Literal::FromJson(*type, request["value"]));
  if (op == "json") {
    ARROW_ASSIGN_OR_RAISE(auto value, literal.ToJson(*type));
    return json{{"value", value}};
  }
  if (op == "to_bytes") {
    ARROW_ASSIGN_OR_RAISE(auto bytes, literal.ToBytes(*type));
    return json{{"hex", ToHex(bytes)}};
  }
  if (op == "hash") {
    ARROW_ASSIGN_OR_RAISE(int32_t hash, BucketHash(*type, literal));
    return json{{"hash", hash}};
  }
  if (op != "transform") return InvalidArgument("unknown op '{}'", op);
  ARROW_ASSIGN_OR_RAISE(auto transform_text, GetString(request, "transform"));
  ARROW_ASSIGN_OR_RAISE(auto transform, Transform::Parse(transform_text));
  ARROW_ASSIGN_OR_RAISE(auto result_type, transform.ResultType(type));
  ARROW_ASSIGN_OR_RAISE(auto result, transform.Apply(*type, literal));
  ARROW_ASSIGN_OR_RAISE(auto result_json, result.ToJson(*result_type));
  return json{{"result", result_json}, {"result_type", result_type->ToString()}};
}

}  // namespace
}  // namespace lakesync::iceberg

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    nlohmann::json answer;
    const auto request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (request.is_discarded()) {
      answer = {{"ok", false}, {"error", "not valid JSON"}};
    } else {
      auto result = lakesync::iceberg::Handle(request);
      if (result.ok()) {
        answer = std::move(*result);
        answer["ok"] = true;
      } else {
        answer = {{"ok", false}, {"error", result.status().ToString()}};
      }
    }
    // Replace invalid UTF-8 rather than throw, so a bad string in one answer cannot end the run.
    std::cout << answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  }
  std::cout.flush();
  return 0;
}
