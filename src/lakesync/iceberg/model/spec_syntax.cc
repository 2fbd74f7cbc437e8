#include "lakesync/iceberg/model/spec_syntax.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <regex>

#include "lakesync/common/text.h"

namespace lakesync::iceberg {
namespace {

struct Term {
  Transform transform;
  const NestedField* source = nullptr;
  std::string source_name;
};

Result<Term> ParseTerm(const std::string& text, const Schema& schema, std::string_view what) {
  static const std::regex kCall(R"(^\s*([A-Za-z_]+)\s*\(\s*([^,()]+?)\s*(?:,\s*(\d+)\s*)?\)\s*$)");
  static const std::regex kBracket(R"(^\s*(bucket|truncate)\s*\[\s*(\d+)\s*\]\s*\(\s*([^()]+?)\s*\)\s*$)",
                                   std::regex::icase);
  Term term;
  std::smatch m;
  std::string fn, col, arg;
  if (std::regex_match(text, m, kCall)) {
    fn = AsciiLower(m[1].str());
    col = m[2];
    arg = m[3].matched ? m[3].str() : "";
  } else if (std::regex_match(text, m, kBracket)) {
    fn = AsciiLower(m[1].str());
    arg = m[2];
    col = m[3];
  } else {
    fn = "identity";
    col = TrimSpace(text);
    if (col.empty() || col.find_first_of("() ,") != std::string::npos) {
      return InvalidArgument("invalid {} '{}': expected a column or a transform such as bucket(col, 16)", what, text);
    }
  }
  const bool needs_arg = fn == "bucket" || fn == "truncate";
  if (needs_arg != !arg.empty()) {
    return InvalidArgument("invalid {} '{}': {}", what, text,
                           needs_arg ? fn + " needs a width, e.g. " + fn + "(" + col + ", 16)"
                                     : fn + " takes no width");
  }
  if (fn == "identity") {
    term.transform = Transform::Identity();
  } else if (fn == "bucket" || fn == "truncate") {
    // from_chars instead of std::stoll: a width too long for 64 bits must be an error, not a throw.
    long long n = 0;
    const auto [ptr, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), n);
    if (ec != std::errc() || ptr != arg.data() + arg.size() || n <= 0 || n > INT32_MAX) {
      return InvalidArgument("invalid {} '{}': the width must be a positive int", what, text);
    }
    term.transform = fn == "bucket" ? Transform::Bucket(static_cast<int32_t>(n)) : Transform::Truncate(static_cast<int32_t>(n));
  } else if (fn == "year" || fn == "years") {
    term.transform = Transform(Transform::Kind::kYear);
  } else if (fn == "month" || fn == "months") {
    term.transform = Transform(Transform::Kind::kMonth);
  } else if (fn == "day" || fn == "days") {
    term.transform = Transform(Transform::Kind::kDay);
  } else if (fn == "hour" || fn == "hours") {
    term.transform = Transform(Transform::Kind::kHour);
  } else if (fn == "void") {
    term.transform = Transform(Transform::Kind::kVoid);
  } else {
    return InvalidArgument("invalid {} '{}': unknown transform '{}' (identity, bucket, truncate, year, month, day, "
                           "hour, void)", what, text, fn);
  }
  term.source_name = col;
  term.source = schema.FindFieldByName(col);
  if (!term.source) return InvalidArgument("invalid {} '{}': no column named '{}'", what, text, col);
  if (!term.transform.CanTransform(*term.source->type)) {
    return InvalidArgument("invalid {} '{}': {} cannot be applied to column '{}' of type {}", what, text,
                           term.transform.ToString(), col, term.source->type->ToString());
  }
  return term;
}

std::string DefaultPartitionName(const Term& t) {
  std::string base = t.source_name;
  std::replace(base.begin(), base.end(), '.', '_');
  switch (t.transform.kind()) {
    case Transform::Kind::kIdentity: return t.source_name;
    case Transform::Kind::kBucket: return base + "_bucket";
    case Transform::Kind::kTruncate: return base + "_trunc";
    case Transform::Kind::kYear: return base + "_year";
    case Transform::Kind::kMonth: return base + "_month";
    case Transform::Kind::kDay: return base + "_day";
    case Transform::Kind::kHour: return base + "_hour";
    case Transform::Kind::kVoid: return base + "_null";
    default: return base;
  }
}

}  // namespace

std::vector<std::string> SplitTopLevelCommas(std::string_view text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      if (!TrimSpace(cur).empty()) out.emplace_back(TrimSpace(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!TrimSpace(cur).empty()) out.emplace_back(TrimSpace(cur));
  return out;
}

Result<PartitionSpecPtr> ParsePartitionFields(const std::vector<std::string>& terms, const Schema& schema) {
  std::vector<PartitionField> fields;
  int32_t next_id = kPartitionDataIdStart;
  for (const auto& text : terms) {
    ARROW_ASSIGN_OR_RAISE(auto term, ParseTerm(text, schema, "partition field"));
    if (term.source->type->is_nested()) {
      return InvalidArgument("invalid partition field '{}': cannot partition by a nested column", text);
    }
    PartitionField f{term.source->id, next_id++, DefaultPartitionName(term), term.transform};
    for (const auto& existing : fields) {
      if (existing.name == f.name) return InvalidArgument("partition field '{}' is given twice", text);
    }
    fields.push_back(std::move(f));
  }
  auto spec = std::make_shared<const PartitionSpec>(0, std::move(fields));
  ARROW_RETURN_NOT_OK(spec->Validate(schema));
  return spec;
}

Result<SortOrderPtr> ParseSortFields(const std::vector<std::string>& terms, const Schema& schema) {
  static const std::regex kSuffix(R"(^(.*?)(?:\s+(asc|desc))?(?:\s+nulls\s+(first|last))?\s*$)", std::regex::icase);
  auto order = std::make_shared<SortOrder>();
  order->order_id = terms.empty() ? 0 : 1;
  for (const auto& text : terms) {
    std::smatch m;
    if (!std::regex_match(text, m, kSuffix) || TrimSpace(m[1].str()).empty()) {
      return InvalidArgument("invalid sort field '{}': expected '<column or transform> [asc|desc] [nulls first|last]'",
                             text);
    }
    ARROW_ASSIGN_OR_RAISE(auto term, ParseTerm(m[1].str(), schema, "sort field"));
    SortField f;
    f.transform = term.transform;
    f.source_id = term.source->id;
    f.direction = m[2].matched && AsciiLower(m[2].str()) == "desc" ? SortDirection::kDesc : SortDirection::kAsc;
    if (m[3].matched) {
      f.null_order = AsciiLower(m[3].str()) == "first" ? NullOrder::kNullsFirst : NullOrder::kNullsLast;
    } else {
      f.null_order = f.direction == SortDirection::kAsc ? NullOrder::kNullsFirst : NullOrder::kNullsLast;
    }
    order->fields.push_back(f);
  }
  return SortOrderPtr(order);
}

}  // namespace lakesync::iceberg
