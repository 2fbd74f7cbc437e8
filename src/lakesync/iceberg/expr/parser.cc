// A hand-written recursive-descent parser. No maintained library in Debian or the project's
// dependencies parses SQL predicates into a tree we could map onto Iceberg's expression model
// (Calcite and Arrow's Substrait/Acero front ends are out of reach from C++ here, and a full SQL
// parser such as libpg_query would pull in a dialect we would then have to narrow down again); the
// grammar is small enough that precise, position-naming errors are easier to give by hand.
#include "lakesync/iceberg/expr/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "lakesync/common/text.h"

namespace lakesync::iceberg {
namespace {

enum class TokenKind { kIdent, kQuotedIdent, kString, kNumber, kOp, kLParen, kRParen, kComma, kDot, kMinus, kPlus, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;   // identifier/number/operator as written; a string's or quoted identifier's value
  std::string raw;    // the source text of the token, for messages
  size_t position = 0;  // 1-based
};

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<Expr> Parse() {
    ARROW_RETURN_NOT_OK(Tokenize());
    if (tokens_.size() == 1) return InvalidArgument("filter '{}' is empty", text_);
    ARROW_ASSIGN_OR_RAISE(Expr e, ParseOr());
    if (Peek().kind != TokenKind::kEnd) return Unexpected(Peek(), "AND, OR or the end of the filter");
    return e;
  }

 private:
  // ---- tokens ----

  Status Tokenize() {
    size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      const size_t start = i;
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
        continue;
      }
      Token t;
      t.position = start + 1;
      if (IsIdentStart(c)) {
        while (i < text_.size() && IsIdentChar(text_[i])) ++i;
        t.kind = TokenKind::kIdent;
        t.text = std::string(text_.substr(start, i - start));
      } else if (c == '"' || c == '`') {
        ARROW_ASSIGN_OR_RAISE(t.text, ReadQuoted(i, c, "quoted identifier"));
        if (t.text.empty()) return InvalidArgument("empty quoted identifier at position {} in filter '{}'", start + 1, text_);
        t.kind = TokenKind::kQuotedIdent;
      } else if (c == '\'') {
        ARROW_ASSIGN_OR_RAISE(t.text, ReadQuoted(i, c, "string"));
        t.kind = TokenKind::kString;
      } else if (IsDigit(c) || (c == '.' && i + 1 < text_.size() && IsDigit(text_[i + 1]) && !AfterIdentifier())) {
        ARROW_RETURN_NOT_OK(ReadNumber(i));
        t.kind = TokenKind::kNumber;
        t.text = std::string(text_.substr(start, i - start));
      } else if (c == '(' || c == ')' || c == ',' || c == '.' || c == '-' || c == '+') {
        t.kind = c == '(' ? TokenKind::kLParen
                 : c == ')' ? TokenKind::kRParen
                 : c == ',' ? TokenKind::kComma
                 : c == '.' ? TokenKind::kDot
                 : c == '-' ? TokenKind::kMinus
                            : TokenKind::kPlus;
        t.text = std::string(1, c);
        ++i;
      } else if (c == '=' || c == '!' || c == '<' || c == '>') {
        static const char* kOps[] = {"==", "!=", "<>", "<=", ">=", "=", "<", ">"};
        for (const char* op : kOps) {
          if (text_.substr(i).starts_with(op)) {
            t.text = op;
            break;
          }
        }
        if (t.text.empty()) {
          return InvalidArgument("unexpected '{}' at position {} in filter '{}': expected a comparison operator "
                                 "(=, !=, <>, <, <=, >, >=)", c, start + 1, text_);
        }
        t.kind = TokenKind::kOp;
        i += t.text.size();
      } else {
        return InvalidArgument("unexpected character '{}' at position {} in filter '{}'", c, start + 1, text_);
      }
      t.raw = std::string(text_.substr(start, i - start));
      tokens_.push_back(std::move(t));
    }
    Token end;
    end.position = text_.size() + 1;
    tokens_.push_back(end);
    return Status::OK();
  }

  bool AfterIdentifier() const {
    return !tokens_.empty() &&
           (tokens_.back().kind == TokenKind::kIdent || tokens_.back().kind == TokenKind::kQuotedIdent);
  }

  // Reads a quoted run starting at text_[i] == quote; a doubled quote stands for itself.
  Result<std::string> ReadQuoted(size_t& i, char quote, std::string_view what) {
    const size_t start = i;
    std::string out;
    ++i;
    while (i < text_.size()) {
      if (text_[i] == quote) {
        if (i + 1 < text_.size() && text_[i + 1] == quote) {
          out += quote;
          i += 2;
          continue;
        }
        ++i;
        return out;
      }
      out += text_[i++];
    }
    return InvalidArgument("unterminated {} starting at position {} in filter '{}'", what, start + 1, text_);
  }

  Status ReadNumber(size_t& i) {
    const size_t start = i;
    while (i < text_.size() && IsDigit(text_[i])) ++i;
    if (i < text_.size() && text_[i] == '.') {
      ++i;
      while (i < text_.size() && IsDigit(text_[i])) ++i;
    }
    if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
      size_t j = i + 1;
      if (j < text_.size() && (text_[j] == '+' || text_[j] == '-')) ++j;
      if (j < text_.size() && IsDigit(text_[j])) {
        while (j < text_.size() && IsDigit(text_[j])) ++j;
        i = j;
      }
    }
    if (i < text_.size() && (IsIdentChar(text_[i]) || text_[i] == '.')) {
      size_t end = i;
      while (end < text_.size() && (IsIdentChar(text_[end]) || text_[end] == '.')) ++end;
      return InvalidArgument("malformed number '{}' at position {} in filter '{}'", text_.substr(start, end - start),
                             start + 1, text_);
    }
    return Status::OK();
  }

  const Token& Peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }

  bool IsKeyword(const Token& t, std::string_view word) const {
    return t.kind == TokenKind::kIdent && AsciiLower(t.text) == word;
  }
  bool AcceptKeyword(std::string_view word) {
    if (!IsKeyword(Peek(), word)) return false;
    Next();
    return true;
  }

  Status Unexpected(const Token& t, std::string_view expected) const {
    if (t.kind == TokenKind::kEnd) {
      return InvalidArgument("unexpected end of filter '{}': expected {}", text_, expected);
    }
    return InvalidArgument("unexpected '{}' at position {} in filter '{}': expected {}", t.raw, t.position, text_,
                           expected);
  }

  Status ExpectKeyword(std::string_view word, std::string_view expected) {
    if (!AcceptKeyword(word)) return Unexpected(Peek(), expected);
    return Status::OK();
  }

  Status Expect(TokenKind kind, std::string_view expected) {
    if (Peek().kind != kind) return Unexpected(Peek(), expected);
    Next();
    return Status::OK();
  }

  // Words that can never name a column without quotes.
  bool IsReserved(const Token& t) const {
    static const char* kWords[] = {"and", "or", "not", "is", "null", "in", "between", "like", "true", "false"};
    if (t.kind != TokenKind::kIdent) return false;
    const std::string lower = AsciiLower(t.text);
    return std::any_of(std::begin(kWords), std::end(kWords), [&](const char* w) { return lower == w; });
  }

  bool IsTypedLiteralStart(size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return (IsKeyword(t, "date") || IsKeyword(t, "timestamp") || IsKeyword(t, "timestamptz")) &&
           Peek(ahead + 1).kind == TokenKind::kString;
  }

  bool IsValueStart(size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    if (t.kind == TokenKind::kLParen) return IsValueStart(ahead + 1);  // a parenthesized value: `a > (1)`
    return t.kind == TokenKind::kNumber || t.kind == TokenKind::kString || t.kind == TokenKind::kMinus ||
           t.kind == TokenKind::kPlus || IsKeyword(t, "true") || IsKeyword(t, "false") || IsTypedLiteralStart(ahead);
  }

  bool IsColumnStart(size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return (t.kind == TokenKind::kIdent && !IsReserved(t) && !IsTypedLiteralStart(ahead)) ||
           t.kind == TokenKind::kQuotedIdent;
  }

  static std::optional<Operation> ComparisonOf(const Token& t) {
    if (t.kind != TokenKind::kOp) return std::nullopt;
    if (t.text == "=" || t.text == "==") return Operation::kEq;
    if (t.text == "!=" || t.text == "<>") return Operation::kNotEq;
    if (t.text == "<") return Operation::kLt;
    if (t.text == "<=") return Operation::kLtEq;
    if (t.text == ">") return Operation::kGt;
    return Operation::kGtEq;
  }

  // ---- grammar ----

  Result<Expr> ParseOr() {
    ARROW_ASSIGN_OR_RAISE(Expr left, ParseAnd());
    while (AcceptKeyword("or")) {
      ARROW_ASSIGN_OR_RAISE(Expr right, ParseAnd());
      left = Expr::Or(std::move(left), std::move(right));
    }
    return left;
  }

  Result<Expr> ParseAnd() {
    ARROW_ASSIGN_OR_RAISE(Expr left, ParseNot());
    while (AcceptKeyword("and")) {
      ARROW_ASSIGN_OR_RAISE(Expr right, ParseNot());
      left = Expr::And(std::move(left), std::move(right));
    }
    return left;
  }

  Result<Expr> ParseNot() {
    if (AcceptKeyword("not")) {
      ARROW_ASSIGN_OR_RAISE(Expr child, ParseNot());
      return Expr::Not(std::move(child));
    }
    return ParsePrimary();
  }

  Result<Expr> ParsePrimary() {
    const Token& t = Peek();
    if (t.kind == TokenKind::kLParen) {
      Next();
      ARROW_ASSIGN_OR_RAISE(Expr inner, ParseOr());
      ARROW_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
      return inner;
    }
    if ((IsKeyword(t, "true") || IsKeyword(t, "false")) && !ComparisonOf(Peek(1))) {
      Next();
      return IsKeyword(t, "true") ? Expr::AlwaysTrue() : Expr::AlwaysFalse();
    }
    if (IsKeyword(t, "null")) {
      return InvalidArgument("NULL at position {} in filter '{}' can only follow IS: write 'column IS NULL'",
                             t.position, text_);
    }
    if (IsValueStart()) return ParseValueFirst();
    if (IsColumnStart()) return ParseColumnPredicate();
    if (t.kind == TokenKind::kIdent && IsReserved(t)) {
      return InvalidArgument("unexpected '{}' at position {} in filter '{}': expected a column or a value "
                             "(quote a column named like a keyword: \"{}\")", t.raw, t.position, text_, t.text);
    }
    return Unexpected(t, "a column, a value, NOT or '('");
  }

  // `5 < x`: a value, a comparison, then the column.
  Result<Expr> ParseValueFirst() {
    const Token& first = Peek();
    ARROW_ASSIGN_OR_RAISE(UnboundLiteral value, ParseValue());
    const Token& op_token = Peek();
    auto op = ComparisonOf(op_token);
    if (!op) return Unexpected(op_token, "a comparison operator after the value " + value.ToString());
    Next();
    if (IsValueStart()) {
      return InvalidArgument("comparison at position {} in filter '{}' has no column: one side of {} must be a "
                             "column", first.position, text_, op_token.raw);
    }
    if (!IsColumnStart()) return Unexpected(Peek(), "a column");
    ARROW_ASSIGN_OR_RAISE(auto column, ParseColumn());
    return Expr::Predicate(FlipComparison(*op), std::move(column), {std::move(value)});
  }

  Result<Expr> ParseColumnPredicate() {
    ARROW_ASSIGN_OR_RAISE(auto column, ParseColumn());
    const Token& t = Peek();
    if (auto op = ComparisonOf(t)) {
      Next();
      return ParseComparisonRhs(*op, std::move(column), t);
    }
    if (AcceptKeyword("is")) {
      const bool negated = AcceptKeyword("not");
      if (AcceptKeyword("null")) {
        return Expr::Predicate(negated ? Operation::kNotNull : Operation::kIsNull, std::move(column));
      }
      if (AcceptKeyword("nan")) {
        return Expr::Predicate(negated ? Operation::kNotNan : Operation::kIsNan, std::move(column));
      }
      return Unexpected(Peek(), negated ? "NULL or NAN after IS NOT" : "NULL, NOT NULL, NAN or NOT NAN after IS");
    }
    bool negated = false;
    if (IsKeyword(t, "not")) {
      Next();
      negated = true;
      if (!IsKeyword(Peek(), "in") && !IsKeyword(Peek(), "between") && !IsKeyword(Peek(), "like")) {
        return Unexpected(Peek(), "IN, BETWEEN or LIKE after NOT");
      }
    }
    if (AcceptKeyword("in")) return ParseIn(std::move(column), negated);
    if (AcceptKeyword("between")) return ParseBetween(std::move(column), negated);
    if (AcceptKeyword("like")) return ParseLike(std::move(column), negated);
    // A column on its own is a boolean condition (`WHERE active`); binding checks the column is boolean.
    if (t.kind == TokenKind::kEnd || t.kind == TokenKind::kRParen || IsKeyword(t, "and") || IsKeyword(t, "or")) {
      return Expr::Predicate(Operation::kEq, std::move(column), {UnboundLiteral::Boolean(true)});
    }
    return Unexpected(t, "a comparison operator, IS, IN, BETWEEN or LIKE after the column");
  }

  Result<Expr> ParseComparisonRhs(Operation op, std::vector<std::string> column, const Token& op_token) {
    const Token& t = Peek();
    if (IsKeyword(t, "null")) {
      return InvalidArgument("comparing with NULL at position {} in filter '{}' is never true: use IS NULL or "
                             "IS NOT NULL", t.position, text_);
    }
    if (IsColumnStart() && !IsValueStart()) {
      return InvalidArgument("comparing two columns at position {} in filter '{}' is not supported: the right "
                             "side of {} must be a value", t.position, text_, op_token.raw);
    }
    if (!IsValueStart()) return Unexpected(t, "a value after " + op_token.raw);
    ARROW_ASSIGN_OR_RAISE(UnboundLiteral value, ParseValue());
    return Expr::Predicate(op, std::move(column), {std::move(value)});
  }

  Result<Expr> ParseIn(std::vector<std::string> column, bool negated) {
    ARROW_RETURN_NOT_OK(Expect(TokenKind::kLParen, "'(' after IN"));
    std::vector<UnboundLiteral> values;
    while (true) {
      const Token& t = Peek();
      if (IsKeyword(t, "null")) {
        return InvalidArgument("NULL in the IN list at position {} in filter '{}' never matches: use IS NULL",
                               t.position, text_);
      }
      if (!IsValueStart()) return Unexpected(t, "a value in the IN list");
      ARROW_ASSIGN_OR_RAISE(UnboundLiteral v, ParseValue());
      values.push_back(std::move(v));
      if (Peek().kind == TokenKind::kComma) {
        Next();
        continue;
      }
      ARROW_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')' in the IN list"));
      break;
    }
    return Expr::Predicate(negated ? Operation::kNotIn : Operation::kIn, std::move(column), std::move(values));
  }

  Result<Expr> ParseBetween(std::vector<std::string> column, bool negated) {
    if (!IsValueStart()) return Unexpected(Peek(), "a value after BETWEEN");
    ARROW_ASSIGN_OR_RAISE(UnboundLiteral low, ParseValue());
    ARROW_RETURN_NOT_OK(ExpectKeyword("and", "AND between the BETWEEN bounds"));
    if (!IsValueStart()) return Unexpected(Peek(), "a value after BETWEEN ... AND");
    ARROW_ASSIGN_OR_RAISE(UnboundLiteral high, ParseValue());
    Expr range = Expr::And(Expr::Predicate(Operation::kGtEq, column, {std::move(low)}),
                           Expr::Predicate(Operation::kLtEq, column, {std::move(high)}));
    return negated ? Expr::Not(std::move(range)) : range;
  }

  Result<Expr> ParseLike(std::vector<std::string> column, bool negated) {
    const Token& pattern_token = Peek();
    if (pattern_token.kind != TokenKind::kString) return Unexpected(pattern_token, "a quoted pattern after LIKE");
    Next();
    std::optional<char> escape;
    if (AcceptKeyword("escape")) {
      const Token& e = Peek();
      if (e.kind != TokenKind::kString || e.text.size() != 1) {
        return Unexpected(e, "a single quoted character after ESCAPE");
      }
      escape = e.text[0];
      Next();
    }
    const std::string& pattern = pattern_token.text;
    std::string prefix;
    bool wildcard_at_end = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
      const char c = pattern[i];
      if (escape && c == *escape) {
        if (i + 1 >= pattern.size() || (pattern[i + 1] != '%' && pattern[i + 1] != '_' && pattern[i + 1] != *escape)) {
          return InvalidArgument("LIKE pattern '{}' at position {} in filter '{}': the escape character must be "
                                 "followed by %, _ or itself", pattern, pattern_token.position, text_);
        }
        prefix += pattern[++i];
        continue;
      }
      if (c == '%' && i + 1 == pattern.size()) {
        wildcard_at_end = true;
        continue;
      }
      if (c == '%' || c == '_') {
        return InvalidArgument("LIKE pattern '{}' at position {} in filter '{}' is not supported: only prefix "
                               "patterns such as 'abc%' are (escape a literal % or _ with ESCAPE)",
                               pattern, pattern_token.position, text_);
      }
      prefix += c;
    }
    std::vector<UnboundLiteral> lit = {UnboundLiteral::String(std::move(prefix))};
    if (!wildcard_at_end) {
      return Expr::Predicate(negated ? Operation::kNotEq : Operation::kEq, std::move(column), std::move(lit));
    }
    return Expr::Predicate(negated ? Operation::kNotStartsWith : Operation::kStartsWith, std::move(column),
                           std::move(lit));
  }

  Result<std::vector<std::string>> ParseColumn() {
    std::vector<std::string> parts;
    while (true) {
      const Token& t = Peek();
      if (t.kind == TokenKind::kQuotedIdent) {
        parts.push_back(t.text);
      } else if (t.kind == TokenKind::kIdent && !IsReserved(t)) {
        parts.push_back(t.text);
      } else {
        return Unexpected(t, parts.empty() ? "a column" : "a nested field name after '.'");
      }
      Next();
      if (Peek().kind != TokenKind::kDot) return parts;
      Next();
    }
  }

  Result<UnboundLiteral> ParseValue() {
    const Token& t = Peek();
    if (t.kind == TokenKind::kLParen) {
      Next();
      ARROW_ASSIGN_OR_RAISE(UnboundLiteral inner, ParseValue());
      ARROW_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')' after the value"));
      return inner;
    }
    if (t.kind == TokenKind::kMinus || t.kind == TokenKind::kPlus) {
      const bool minus = t.kind == TokenKind::kMinus;
      Next();
      const Token& n = Peek();
      if (n.kind != TokenKind::kNumber) return Unexpected(n, "a number after the sign");
      Next();
      return Number(minus ? "-" + n.text : n.text);
    }
    if (t.kind == TokenKind::kNumber) {
      Next();
      return Number(t.text);
    }
    if (t.kind == TokenKind::kString) {
      Next();
      return UnboundLiteral::String(t.text);
    }
    if (IsKeyword(t, "true") || IsKeyword(t, "false")) {
      Next();
      return UnboundLiteral::Boolean(IsKeyword(t, "true"));
    }
    if (IsTypedLiteralStart()) {
      const std::string word = AsciiLower(Next().text);
      const Token& s = Next();
      UnboundLiteral out;
      out.kind = word == "date"        ? UnboundLiteral::Kind::kDate
                 : word == "timestamp" ? UnboundLiteral::Kind::kTimestamp
                                       : UnboundLiteral::Kind::kTimestampTz;
      out.text = s.text;
      return out;
    }
    return Unexpected(t, "a value");
  }

  static UnboundLiteral Number(std::string text) {
    UnboundLiteral out;
    out.text = std::move(text);
    if (out.text.find_first_of("eE") != std::string::npos) {
      out.kind = UnboundLiteral::Kind::kFloat;
    } else if (out.text.find('.') != std::string::npos) {
      out.kind = UnboundLiteral::Kind::kDecimal;
    } else {
      out.kind = UnboundLiteral::Kind::kInteger;
    }
    return out;
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace

Result<Expr> ParseFilter(std::string_view text) { return Parser(text).Parse(); }

}  // namespace lakesync::iceberg
