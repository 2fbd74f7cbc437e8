#include "lakesync/sharing/predicate.h"

#include <cmath>
#include <variant>
#include <vector>

#include "lakesync/delta/delta_table.h"

namespace lakesync::sharing {

using Json = nlohmann::json;

struct FilePredicate::Node {
  std::string op;
  std::vector<Node> children;
  std::string name;       // column
  std::string value;      // literal
  std::string value_type;
};

namespace {

enum class Tri { kFalse, kTrue, kUnknown };

Tri Not(Tri t) { return t == Tri::kTrue ? Tri::kFalse : t == Tri::kFalse ? Tri::kTrue : Tri::kUnknown; }

// A comparable value of one of the protocol's value types.
using Value = std::variant<int64_t, double, std::string>;

std::optional<Value> ParseValue(const std::string& text, const std::string& type) {
  try {
    if (type == "int" || type == "long") {
      size_t used = 0;
      int64_t v = std::stoll(text, &used);
      if (used != text.size()) return std::nullopt;
      return Value(v);
    }
    if (type == "float" || type == "double") {
      size_t used = 0;
      double v = std::stod(text, &used);
      if (used != text.size() || std::isnan(v)) return std::nullopt;
      return Value(v);
    }
    if (type == "bool") {
      if (text == "true") return Value(int64_t{1});
      if (text == "false") return Value(int64_t{0});
      return std::nullopt;
    }
    if (type == "timestamp") {
      // Partition values are "2021-04-28 23:33:57", stats and literals ISO-8601 with a zone.
      std::string t = text;
      if (t.size() > 10 && t[10] == ' ') t[10] = 'T';
      if (t.size() > 10 && t.back() != 'Z' && t.find('+', 10) == std::string::npos &&
          t.find('-', 10) == std::string::npos) {
        t += "Z";
      }
      auto ms = delta::ParseTimestampMillis(t);
      if (!ms.ok()) return std::nullopt;
      return Value(*ms);
    }
    if (type == "string" || type == "date") return Value(text);
  } catch (...) {
  }
  return std::nullopt;
}

int Compare(const Value& a, const Value& b) {
  if (a.index() != b.index()) return 0;
  return std::visit(
      [&](const auto& x) {
        const auto& y = std::get<std::decay_t<decltype(x)>>(b);
        return x < y ? -1 : (y < x ? 1 : 0);
      },
      a);
}

// What is known about a column in one file.
struct Range {
  std::optional<Value> min, max;  // over the non-null values
  bool may_be_null = true;
  bool may_be_non_null = true;
};

struct Context {
  const std::map<std::string, std::optional<std::string>>& partition_values;
  const Json* stats;
};

std::optional<Range> ColumnRange(const FilePredicate::Node& col, const std::string& type, const Context& ctx) {
  Range r;
  if (auto it = ctx.partition_values.find(col.name); it != ctx.partition_values.end()) {
    if (!it->second || it->second->empty()) {
      r.may_be_non_null = false;
      return r;
    }
    auto v = ParseValue(*it->second, type);
    if (!v) return std::nullopt;
    r.min = r.max = v;
    r.may_be_null = false;
    return r;
  }
  if (ctx.stats == nullptr || !ctx.stats->is_object()) return std::nullopt;
  auto stat = [&](const char* group) -> const Json* {
    auto g = ctx.stats->find(group);
    if (g == ctx.stats->end() || !g->is_object()) return nullptr;
    auto v = g->find(col.name);
    return v == g->end() ? nullptr : &*v;
  };
  const Json* nulls = stat("nullCount");
  auto records = ctx.stats->find("numRecords");
  if (nulls && nulls->is_number_integer()) {
    r.may_be_null = nulls->get<int64_t>() > 0;
    if (records != ctx.stats->end() && records->is_number_integer()) {
      r.may_be_non_null = nulls->get<int64_t>() < records->get<int64_t>();
    }
  }
  auto as_text = [](const Json* j) -> std::optional<std::string> {
    if (j == nullptr || j->is_null() || j->is_object() || j->is_array()) return std::nullopt;
    return j->is_string() ? j->get<std::string>() : j->dump();
  };
  if (auto min = as_text(stat("minValues"))) r.min = ParseValue(*min, type);
  if (auto max = as_text(stat("maxValues"))) {
    // Writers truncate long string maxima (Delta at 32 characters): such a bound is not an upper bound.
    if (!(type == "string" && max->size() >= 32)) r.max = ParseValue(*max, type);
  }
  return r;
}

Tri Evaluate(const FilePredicate::Node& n, const Context& ctx);

Tri EvaluateComparison(const FilePredicate::Node& n, const Context& ctx) {
  const auto* col = &n.children[0];
  const auto* lit = &n.children[1];
  std::string op = n.op;
  if (col->op == "literal" && lit->op == "column") {
    std::swap(col, lit);
    if (op == "lessThan") op = "greaterThan";
    else if (op == "greaterThan") op = "lessThan";
    else if (op == "lessThanOrEqual") op = "greaterThanOrEqual";
    else if (op == "greaterThanOrEqual") op = "lessThanOrEqual";
  }
  if (col->op != "column" || lit->op != "literal") return Tri::kUnknown;
  const std::string& type = lit->value_type.empty() ? col->value_type : lit->value_type;
  auto value = ParseValue(lit->value, type);
  if (!value) return Tri::kUnknown;
  auto range = ColumnRange(*col, type, ctx);
  if (!range) return Tri::kUnknown;
  // A comparison with null is never true.
  if (!range->may_be_non_null) return Tri::kFalse;
  const bool exact_non_null = !range->may_be_null;
  // Comparisons of the bounds with the literal; a missing bound compares as "unknown".
  const bool has_min = range->min.has_value(), has_max = range->max.has_value();
  const int min_cmp = has_min ? Compare(*range->min, *value) : 0;
  const int max_cmp = has_max ? Compare(*range->max, *value) : 0;
  auto min_is = [&](auto pred) { return has_min && pred(min_cmp); };
  auto max_is = [&](auto pred) { return has_max && pred(max_cmp); };
  auto gt0 = [](int c) { return c > 0; };
  auto ge0 = [](int c) { return c >= 0; };
  auto lt0 = [](int c) { return c < 0; };
  auto le0 = [](int c) { return c <= 0; };
  auto eq0 = [](int c) { return c == 0; };
  if (op == "equal") {
    if (min_is(gt0) || max_is(lt0)) return Tri::kFalse;
    if (min_is(eq0) && max_is(eq0) && exact_non_null) return Tri::kTrue;
    return Tri::kUnknown;
  }
  if (op == "lessThan") {
    if (min_is(ge0)) return Tri::kFalse;
    if (max_is(lt0) && exact_non_null) return Tri::kTrue;
    return Tri::kUnknown;
  }
  if (op == "lessThanOrEqual") {
    if (min_is(gt0)) return Tri::kFalse;
    if (max_is(le0) && exact_non_null) return Tri::kTrue;
    return Tri::kUnknown;
  }
  if (op == "greaterThan") {
    if (max_is(le0)) return Tri::kFalse;
    if (min_is(gt0) && exact_non_null) return Tri::kTrue;
    return Tri::kUnknown;
  }
  if (op == "greaterThanOrEqual") {
    if (max_is(lt0)) return Tri::kFalse;
    if (min_is(ge0) && exact_non_null) return Tri::kTrue;
    return Tri::kUnknown;
  }
  return Tri::kUnknown;
}

Tri Evaluate(const FilePredicate::Node& n, const Context& ctx) {
  if (n.op == "and") {
    Tri out = Tri::kTrue;
    for (const auto& c : n.children) {
      Tri t = Evaluate(c, ctx);
      if (t == Tri::kFalse) return Tri::kFalse;
      if (t == Tri::kUnknown) out = Tri::kUnknown;
    }
    return out;
  }
  if (n.op == "or") {
    Tri out = Tri::kFalse;
    for (const auto& c : n.children) {
      Tri t = Evaluate(c, ctx);
      if (t == Tri::kTrue) return Tri::kTrue;
      if (t == Tri::kUnknown) out = Tri::kUnknown;
    }
    return out;
  }
  if (n.op == "not") return Not(Evaluate(n.children[0], ctx));
  if (n.op == "isNull") {
    const auto& col = n.children[0];
    if (col.op != "column") return Tri::kUnknown;
    auto range = ColumnRange(col, col.value_type, ctx);
    if (!range) return Tri::kUnknown;
    if (!range->may_be_null) return Tri::kFalse;
    if (!range->may_be_non_null) return Tri::kTrue;
    return Tri::kUnknown;
  }
  return EvaluateComparison(n, ctx);
}

Result<FilePredicate::Node> ParseNode(const Json& j, int depth) {
  if (depth > 100) return InvalidArgument("jsonPredicateHints is nested too deeply");
  if (!j.is_object() || !j.contains("op") || !j["op"].is_string()) {
    return InvalidArgument("jsonPredicateHints: every node needs an 'op'");
  }
  FilePredicate::Node n;
  n.op = j["op"].get<std::string>();
  if (auto v = j.find("valueType"); v != j.end() && v->is_string()) n.value_type = v->get<std::string>();
  static const std::vector<std::string> kTypes = {"bool", "int", "long", "string", "date", "float", "double",
                                                  "timestamp"};
  if (!n.value_type.empty() && std::find(kTypes.begin(), kTypes.end(), n.value_type) == kTypes.end()) {
    return InvalidArgument("jsonPredicateHints: unknown valueType '{}'", n.value_type);
  }
  if (n.op == "column") {
    if (!j.contains("name") || !j["name"].is_string()) return InvalidArgument("jsonPredicateHints: column without name");
    n.name = j["name"].get<std::string>();
    return n;
  }
  if (n.op == "literal") {
    if (!j.contains("value")) return InvalidArgument("jsonPredicateHints: literal without value");
    n.value = j["value"].is_string() ? j["value"].get<std::string>() : j["value"].dump();
    return n;
  }
  auto kids = j.find("children");
  if (kids == j.end() || !kids->is_array()) return InvalidArgument("jsonPredicateHints: '{}' needs children", n.op);
  for (const auto& c : *kids) {
    ARROW_ASSIGN_OR_RAISE(auto child, ParseNode(c, depth + 1));
    n.children.push_back(std::move(child));
  }
  const size_t k = n.children.size();
  if (n.op == "and" || n.op == "or") {
    if (k < 2) return InvalidArgument("jsonPredicateHints: '{}' needs at least two children", n.op);
  } else if (n.op == "not" || n.op == "isNull") {
    if (k != 1) return InvalidArgument("jsonPredicateHints: '{}' needs one child", n.op);
  } else if (n.op == "equal" || n.op == "lessThan" || n.op == "lessThanOrEqual" || n.op == "greaterThan" ||
             n.op == "greaterThanOrEqual") {
    if (k != 2) return InvalidArgument("jsonPredicateHints: '{}' needs two children", n.op);
  } else {
    return InvalidArgument("jsonPredicateHints: unknown op '{}'", n.op);
  }
  return n;
}

}  // namespace

Result<FilePredicate> FilePredicate::Parse(std::string_view json_text) {
  auto j = Json::parse(json_text, nullptr, false);
  if (j.is_discarded()) return InvalidArgument("jsonPredicateHints is not JSON");
  ARROW_ASSIGN_OR_RAISE(auto node, ParseNode(j, 0));
  FilePredicate p;
  p.root_ = std::make_shared<const Node>(std::move(node));
  return p;
}

bool FilePredicate::MayMatch(const std::map<std::string, std::optional<std::string>>& partition_values,
                             const Json* stats) const {
  if (!root_) return true;
  return Evaluate(*root_, Context{partition_values, stats}) != Tri::kFalse;
}

}  // namespace lakesync::sharing
