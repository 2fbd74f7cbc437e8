#include "lakesync/sink/table_template.h"

#include <algorithm>
#include <cctype>

#include "lakesync/catalog/catalog.h"

namespace lakesync::sink {
namespace {

struct Piece {
  bool placeholder = false;
  std::string text;  // literal text, or the placeholder's column path
};

Status CheckPlaceholder(std::string_view table, std::string_view name, size_t open) {
  if (name.empty()) return InvalidArgument("table '{}': empty placeholder '{{}}' at position {}", table, open);
  for (unsigned char c : name) {
    if (std::isspace(c) || std::iscntrl(c)) {
      return InvalidArgument("table '{}': placeholder '{{{}}}' at position {} contains whitespace or a control "
                             "character; it must be a column name (dotted for nested fields)",
                             table, name, open);
    }
  }
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    const size_t end = dot == std::string_view::npos ? name.size() : dot;
    if (end == start) {
      return InvalidArgument("table '{}': placeholder '{{{}}}' at position {} has an empty name part; write "
                             "{{column}} or {{record.field}}",
                             table, name, open);
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return Status::OK();
}

// Splits a template into literal and placeholder pieces. `pieces` holds what was read before an error.
Status Tokenize(std::string_view table, std::vector<Piece>& pieces) {
  std::string literal;
  size_t i = 0;
  while (i < table.size()) {
    const char c = table[i];
    if (c == '}') {
      return InvalidArgument("table '{}': '}}' at position {} has no matching '{{'", table, i);
    }
    if (c != '{') {
      literal.push_back(c);
      ++i;
      continue;
    }
    const size_t open = i;
    size_t close = open + 1;
    while (close < table.size() && table[close] != '}') {
      if (table[close] == '{') {
        return InvalidArgument("table '{}': '{{' at position {} inside the placeholder opened at position {} "
                               "(placeholders do not nest)",
                               table, close, open);
      }
      ++close;
    }
    if (close == table.size()) {
      return InvalidArgument("table '{}': the placeholder opened at position {} is not closed with '}}'", table,
                             open);
    }
    const std::string_view name = table.substr(open + 1, close - open - 1);
    ARROW_RETURN_NOT_OK(CheckPlaceholder(table, name, open));
    if (!literal.empty()) pieces.push_back({false, std::move(literal)});
    literal.clear();
    pieces.push_back({true, std::string(name)});
    i = close + 1;
  }
  if (!literal.empty()) pieces.push_back({false, std::move(literal)});
  return Status::OK();
}

std::string Join(const std::vector<Piece>& pieces, const std::vector<std::string>& values) {
  std::string out;
  size_t next_value = 0;
  for (const auto& piece : pieces) out += piece.placeholder ? values[next_value++] : piece.text;
  return out;
}

Status CheckRenderedName(std::string_view table, std::string_view rendered) {
  // The parser's own message would quote the sample rendering, which the user never wrote.
  if (!catalog::TableIdentifier::Parse(rendered).ok()) {
    return InvalidArgument("table '{}' is not of the form NAMESPACE.TABLE (dot-separated, no empty part)", table);
  }
  return Status::OK();
}

Status CheckValue(std::string_view table, std::string_view placeholder, std::string_view value) {
  if (value.empty()) {
    return InvalidArgument("table '{}': column '{}' is empty, which cannot name a table", table, placeholder);
  }
  for (unsigned char c : value) {
    if (c == '.' || c == '/' || c == '\\' || c == '{' || c == '}' || std::iscntrl(c)) {
      return InvalidArgument("table '{}': the value '{}' of column '{}' cannot be part of a table name (it "
                             "contains '.', '/', '\\', a brace or a control character)",
                             table, value, placeholder);
    }
  }
  return Status::OK();
}

}  // namespace

bool IsTemplate(std::string_view table) {
  return table.find('{') != std::string_view::npos || table.find('}') != std::string_view::npos;
}

Status ValidateTableTemplate(std::string_view table) {
  if (table.empty()) return InvalidArgument("table must not be empty");
  std::vector<Piece> pieces;
  ARROW_RETURN_NOT_OK(Tokenize(table, pieces));
  // Every placeholder stands for a value without dots (see CheckValue), so one sample value shows
  // whether the template always renders to namespace.table.
  const auto count = std::count_if(pieces.begin(), pieces.end(), [](const Piece& p) { return p.placeholder; });
  return CheckRenderedName(table, Join(pieces, std::vector<std::string>(count, "x")));
}

std::vector<std::string> TemplatePlaceholders(std::string_view table) {
  std::vector<Piece> pieces;
  (void)Tokenize(table, pieces);  // on error: the placeholders read before it, as documented
  std::vector<std::string> out;
  for (const auto& piece : pieces) {
    if (piece.placeholder && std::find(out.begin(), out.end(), piece.text) == out.end()) out.push_back(piece.text);
  }
  return out;
}

Result<std::string> RenderTableTemplate(std::string_view table, const PlaceholderLookup& lookup) {
  ARROW_RETURN_NOT_OK(ValidateTableTemplate(table));
  std::vector<Piece> pieces;
  ARROW_RETURN_NOT_OK(Tokenize(table, pieces));
  std::vector<std::string> values;
  for (const auto& piece : pieces) {
    if (!piece.placeholder) continue;
    std::optional<std::string> value = lookup(piece.text);
    if (!value) {
      return InvalidArgument("table '{}': column '{}' is null or missing, so the row has no table", table, piece.text);
    }
    ARROW_RETURN_NOT_OK(CheckValue(table, piece.text, *value));
    values.push_back(std::move(*value));
  }
  return Join(pieces, values);
}

}  // namespace lakesync::sink
