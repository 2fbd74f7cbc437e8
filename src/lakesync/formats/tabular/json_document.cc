// Parsing with nlohmann-json's SAX interface: its DOM turns every non-integer number into a double,
// which would round decimals such as 12345678901234567890.12 before we see them.
#include "lakesync/formats/tabular/json_document_internal.h"

#include <nlohmann/json.hpp>

#include "lakesync/formats/tabular/json_values_internal.h"

namespace lakesync::tabular {
namespace {

using Kind = JsonNode::Kind;

class TreeBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit TreeBuilder(JsonNode* root) : root_(root) {}

  bool null() override { return Add(Kind::kNull) != nullptr; }
  bool boolean(bool val) override {
    JsonNode* n = Add(Kind::kBool);
    n->boolean = val;
    return true;
  }
  bool number_integer(number_integer_t val) override { return Number(std::to_string(val)); }
  bool number_unsigned(number_unsigned_t val) override { return Number(std::to_string(val)); }
  bool number_float(number_float_t, const string_t& s) override { return Number(s); }
  bool string(string_t& val) override {
    Add(Kind::kString)->text = std::move(val);
    return true;
  }
  bool binary(binary_t&) override { return false; }  // not produced by the JSON text parser
  bool start_object(std::size_t) override { return Open(Kind::kObject); }
  bool key(string_t& val) override {
    stack_.back()->keys.push_back(std::move(val));
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return Open(Kind::kArray); }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& ex) override {
    // nlohmann says "[json.exception.parse_error.101] parse error at line 1, column 6: syntax error
    // while parsing value - invalid literal; last read: 'x'"; keep what follows the position.
    // Others ("[json.exception.out_of_range.406] number overflow parsing '1e999'") have no position.
    std::string_view what = ex.what();
    if (!what.empty() && what.front() == '[' && what.find("] ") != std::string_view::npos) {
      what.remove_prefix(what.find("] ") + 2);
    }
    if (what.substr(0, 12) == "parse error " && what.find(": ") != std::string_view::npos) {
      what.remove_prefix(what.find(": ") + 2);
    }
    error_ = InvalidArgument("malformed JSON at character {}: {}", position, what);
    return false;
  }

  const Status& error() const { return error_; }

 private:
  // Pointers on the stack stay valid: only the innermost open container grows.
  JsonNode* Add(Kind kind) {
    JsonNode* n = root_;
    if (!stack_.empty()) {
      stack_.back()->items.emplace_back();
      n = &stack_.back()->items.back();
    }
    n->kind = kind;
    return n;
  }
  bool Number(std::string text) {
    Add(Kind::kNumber)->text = std::move(text);
    return true;
  }
  bool Open(Kind kind) {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth) {
      error_ = InvalidArgument("JSON nested deeper than {} levels", kMaxJsonDepth);
      return false;
    }
    stack_.push_back(Add(kind));
    return true;
  }

  JsonNode* root_;
  std::vector<JsonNode*> stack_;
  Status error_;
};

void AppendSnippet(std::string& out, const JsonNode& node, size_t max_chars) {
  if (out.size() > max_chars) return;
  switch (node.kind) {
    case Kind::kNull: out += "null"; break;
    case Kind::kBool: out += node.boolean ? "true" : "false"; break;
    case Kind::kNumber: out += node.text; break;
    case Kind::kString: AppendJsonString(out, node.text); break;
    case Kind::kArray:
    case Kind::kObject: {
      const bool object = node.kind == Kind::kObject;
      out.push_back(object ? '{' : '[');
      for (size_t i = 0; i < node.items.size() && out.size() <= max_chars; ++i) {
        if (i) out.push_back(',');
        if (object) {
          AppendJsonString(out, node.keys[i]);
          out.push_back(':');
        }
        AppendSnippet(out, node.items[i], max_chars);
      }
      out.push_back(object ? '}' : ']');
    }
  }
}

}  // namespace

Status ParseJson(std::string_view text, JsonNode* out) {
  *out = JsonNode();
  TreeBuilder builder(out);
  // sax_parse reports errors through the handler; it does not throw for malformed input.
  try {
    if (!nlohmann::json::sax_parse(text, &builder, nlohmann::json::input_format_t::json, /*strict=*/true)) {
      if (builder.error().ok()) return InvalidArgument("malformed JSON");
      return builder.error();
    }
  } catch (const std::exception& e) {
    return InvalidArgument("malformed JSON: {}", e.what());
  }
  return Status::OK();
}

std::string_view JsonKindName(JsonNode::Kind kind) {
  switch (kind) {
    case Kind::kNull: return "null";
    case Kind::kBool: return "true or false";
    case Kind::kNumber: return "a number";
    case Kind::kString: return "a string";
    case Kind::kArray: return "an array";
    case Kind::kObject: return "an object";
  }
  return "a JSON value";
}

std::string JsonSnippet(const JsonNode& node, size_t max_chars) {
  std::string out;
  AppendSnippet(out, node, max_chars);
  if (out.size() > max_chars) {
    size_t cut = max_chars;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    out = out.substr(0, cut) + "...";
  }
  return out;
}

}  // namespace lakesync::tabular
