#include "lakesync/formats/tabular/value_converters_internal.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/base64.h>
#include <arrow/util/decimal.h>
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "lakesync/formats/tabular/json_values_internal.h"
#include "lakesync/iceberg/model/literal.h"

namespace lakesync::tabular {
namespace {

using Kind = JsonNode::Kind;

// A value quoted for a message, cut short when long.
std::string Quoted(std::string_view text) {
  constexpr size_t kMax = 60;
  if (text.size() <= kMax) return fmt::format("'{}'", text);
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("'{}...'", text.substr(0, cut));
}

Status WrongKind(const JsonNode& node, std::string_view expected, const arrow::DataType& type) {
  return InvalidArgument("expected {} for type {}, got {}", expected, TypeName(type), JsonSnippet(node));
}

// ---------------------------------------------------------------------------------------------
// Text parsers shared by JSON strings and CSV cells. They return the reason only; callers add where.

template <typename T>
Status ParseInteger(std::string_view text, const arrow::DataType& type, T* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  if (ec == std::errc::result_out_of_range) {
    return InvalidArgument("{} is out of range for type {}", Quoted(text), TypeName(type));
  }
  if (ec != std::errc() || ptr != end || text.empty()) return InvalidArgument("{} is not an integer", Quoted(text));
  return Status::OK();
}

// The names the writers use for the values JSON numbers cannot carry.
template <typename T>
bool NonFiniteByName(std::string_view text, T* out) {
  if (text == "NaN") {
    *out = std::numeric_limits<T>::quiet_NaN();
  } else if (text == "Infinity") {
    *out = std::numeric_limits<T>::infinity();
  } else if (text == "-Infinity") {
    *out = -std::numeric_limits<T>::infinity();
  } else {
    return false;
  }
  return true;
}

// Parsing straight to float (not through double) rounds once, so the writer's shortest text of a
// float reads back as the same float.
template <typename T>
Status ParseFloating(std::string_view text, const arrow::DataType& type, T* out) {
  if (NonFiniteByName(text, out)) return Status::OK();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    return InvalidArgument("{} is out of range for type {}", Quoted(text), TypeName(type));
  }
  if (ec != std::errc() || ptr != end || text.empty()) {
    return InvalidArgument("{} is not a number (nor \"NaN\", \"Infinity\", \"-Infinity\")", Quoted(text));
  }
  return Status::OK();
}

Result<arrow::Decimal128> ParseDecimal128(std::string_view text, const arrow::Decimal128Type& type) {
  auto parsed = iceberg::ParseDecimal(text, type.scale());
  if (!parsed.ok()) return parsed.status();
  const __int128 u = *parsed;
  arrow::Decimal128 d(static_cast<int64_t>(u >> 64), static_cast<uint64_t>(u));
  if (!d.FitsInPrecision(type.precision())) {
    return InvalidArgument("{} does not fit in type {}", Quoted(text), TypeName(type));
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// Fast paths for the spellings the writers use (four-digit years, "HH:MM:SS[.f]", "Z" or "+hh:mm"):
// std::regex in the general parsers of literal.h costs more than the rest of a CSV cell's conversion.
// They return false for anything else, errors included, and the general parsers take over.

// The number in text[pos, pos + n) when all of it is digits, else -1.
int64_t Digits(std::string_view text, size_t pos, size_t n) {
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

unsigned DaysInMonth(int64_t y, int64_t m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// "HH:MM:SS[.f]" with at most `digits` fractional digits, in units of 10^-digits seconds.
bool TimeOfDayFast(std::string_view text, int digits, int64_t* out) {
  if (text.size() < 8 || text[2] != ':' || text[5] != ':') return false;
  const int64_t h = Digits(text, 0, 2), mi = Digits(text, 3, 2), sec = Digits(text, 6, 2);
  if (h < 0 || mi < 0 || sec < 0 || h > 23 || mi > 59 || sec > 60) return false;
  int64_t frac = 0;
  if (text.size() > 8) {
    const size_t n = text.size() - 9;
    if (text[8] != '.' || n < 1 || n > static_cast<size_t>(digits)) return false;
    frac = Digits(text, 9, n);
    if (frac < 0) return false;
    for (size_t i = n; i < static_cast<size_t>(digits); ++i) frac *= 10;
  }
  int64_t scale = 1;
  for (int i = 0; i < digits; ++i) scale *= 10;
  *out = ((h * 60 + mi) * 60 + sec) * scale + frac;
  return true;
}

}  // namespace

bool ParseDateFast(std::string_view text, int32_t* days) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  const int64_t y = Digits(text, 0, 4), m = Digits(text, 5, 2), d = Digits(text, 8, 2);
  if (y < 0 || m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, m)) return false;
  *days = static_cast<int32_t>(iceberg::DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d)));
  return true;
}

bool ParseTimeFast(std::string_view text, int64_t* micros) { return TimeOfDayFast(text, 6, micros); }

bool ParseTimestampFast(std::string_view text, bool nanos, int64_t* value) {
  int32_t days;
  if (text.size() < 19 || (text[10] != 'T' && text[10] != ' ') || !ParseDateFast(text.substr(0, 10), &days)) {
    return false;
  }
  std::string_view time = text.substr(11);
  int64_t offset_minutes = 0;
  if (!time.empty() && time.back() == 'Z') {
    time.remove_suffix(1);
  } else if (time.size() > 6 && (time[time.size() - 6] == '+' || time[time.size() - 6] == '-') &&
             time[time.size() - 3] == ':') {
    const std::string_view zone = time.substr(time.size() - 6);
    const int64_t hh = Digits(zone, 1, 2), mm = Digits(zone, 4, 2);
    if (hh < 0 || mm < 0) return false;
    offset_minutes = (zone[0] == '-' ? -1 : 1) * (hh * 60 + mm);
    time.remove_suffix(6);
  }
  int64_t tod;
  if (!TimeOfDayFast(time, nanos ? 9 : 6, &tod)) return false;
  const int64_t per_sec = nanos ? 1000000000LL : 1000000LL;
  *value = static_cast<int64_t>(days) * 86400 * per_sec + tod - offset_minutes * 60 * per_sec;
  return true;
}

namespace {

// Timestamps in `unit` from ISO text. A zone offset on a timestamp without time zone is refused:
// converting it to UTC or dropping it would both guess. A timestamptz without an offset is UTC.
Result<int64_t> ParseTimestampIn(std::string_view text, const arrow::TimestampType& type) {
  const bool zoned = !type.timezone().empty();
  if (!zoned) {
    const size_t time = text.find_first_of("T ", 1);
    const bool has_offset = !text.empty() && (text.back() == 'Z' || text.back() == 'z' ||
                                              (time != std::string_view::npos &&
                                               text.find_first_of("+-", time) != std::string_view::npos));
    if (has_offset) {
      return InvalidArgument("{} has a zone offset, but type {} is a local date and time (without one)",
                             Quoted(text), TypeName(type));
    }
  }
  const bool nanos = type.unit() == arrow::TimeUnit::NANO;
  int64_t value;
  if (!ParseTimestampFast(text, nanos, &value)) {
    ARROW_ASSIGN_OR_RAISE(value, iceberg::ParseTimestamp(text, nanos));
  }
  int64_t per_unit = 1;
  if (type.unit() == arrow::TimeUnit::MILLI) per_unit = 1000;
  if (type.unit() == arrow::TimeUnit::SECOND) per_unit = 1000000;
  if (value % per_unit != 0) {
    return InvalidArgument("{} is more precise than type {} keeps", Quoted(text), type.ToString());
  }
  return value / per_unit;
}

Result<std::string> ParseBase64(std::string_view text) {
  auto decoded = arrow::util::base64_decode(text);
  if (!decoded.ok()) return InvalidArgument("{} is not base64", Quoted(text));
  return std::move(decoded).ValueUnsafe();
}

// ---------------------------------------------------------------------------------------------
// Converters of primitive values: JSON of the accepted kinds goes through the text parser.

class PrimitiveConverter : public ValueConverter {
 public:
  using ValueConverter::ValueConverter;

  Status AppendJson(const JsonNode& node, const ValuePath& path) override {
    if (node.kind == Kind::kNull) return AppendNull(path);
    if (!AcceptsJson(node)) return AtPath(path, WrongKind(node, expected_json(), *field_->type()));
    return AppendText(node.text, path);
  }
  Status AppendText(std::string_view text, const ValuePath& path) override {
    Status st = Parse(text);
    return st.ok() ? st : AtPath(path, st);
  }

 protected:
  virtual bool AcceptsJson(const JsonNode& node) const { return node.kind == Kind::kString; }
  virtual std::string_view expected_json() const { return "a string"; }
  virtual Status Parse(std::string_view text) = 0;
};

class BoolConverter : public PrimitiveConverter {
 public:
  using PrimitiveConverter::PrimitiveConverter;
  Status AppendJson(const JsonNode& node, const ValuePath& path) override {
    if (node.kind == Kind::kNull) return AppendNull(path);
    if (node.kind != Kind::kBool) return AtPath(path, WrongKind(node, "true or false", *field_->type()));
    return static_cast<arrow::BooleanBuilder*>(builder_)->Append(node.boolean);
  }

 protected:
  Status Parse(std::string_view text) override {
    auto* b = static_cast<arrow::BooleanBuilder*>(builder_);
    if (text == "true" || text == "True" || text == "TRUE" || text == "1") return b->Append(true);
    if (text == "false" || text == "False" || text == "FALSE" || text == "0") return b->Append(false);
    return InvalidArgument("{} is not a boolean (true or false)", Quoted(text));
  }
};

template <typename ArrowType>
class IntegerConverter : public PrimitiveConverter {
 public:
  using PrimitiveConverter::PrimitiveConverter;

 protected:
  bool AcceptsJson(const JsonNode& node) const override { return node.kind == Kind::kNumber; }
  std::string_view expected_json() const override { return "an integer number"; }
  Status Parse(std::string_view text) override {
    typename ArrowType::c_type v{};
    ARROW_RETURN_NOT_OK(ParseInteger(text, *field_->type(), &v));
    return static_cast<arrow::NumericBuilder<ArrowType>*>(builder_)->Append(v);
  }
};

template <typename ArrowType>
class FloatingConverter : public PrimitiveConverter {
 public:
  using PrimitiveConverter::PrimitiveConverter;

 protected:
  // JSON strings only for the values a JSON number cannot carry.
  bool AcceptsJson(const JsonNode& node) const override {
    typename ArrowType::c_type unused;
    return node.kind == Kind::kNumber || (node.kind == Kind::kString && NonFiniteByName(node.text, &unused));
  }
  std::string_view expected_json() const override {
    return "a number or one of the strings \"NaN\", \"Infinity\", \"-Infinity\"";
  }
  Status Parse(std::string_view text) override {
    typename ArrowType::c_type v{};
    ARROW_RETURN_NOT_OK(ParseFloating(text, *field_->type(), &v));
    return static_cast<arrow::NumericBuilder<ArrowType>*>(builder_)->Append(v);
  }
};

class DecimalConverter : public PrimitiveConverter {
 public:
  using PrimitiveConverter::PrimitiveConverter;

 protected:
  bool AcceptsJson(const JsonNode& node) const override {
    return node.kind == Kind::kString || node.kind == Kind::kNumber;
  }
  std::string_view expected_json() const override { return "a decimal string (\"14.20\") or a number"; }
  Status Parse(std::string_view text) override {
    ARROW_ASSIGN_OR_RAISE(auto d, ParseDecimal128(text, static_cast<const arrow::Decimal128Type&>(*field_->type())));
    return static_cast<arrow::Decimal128Builder*>(builder_)->Append(d);
  }
};

class DateConverter : public PrimitiveConverter {
 public:
  using PrimitiveConverter::PrimitiveConverter;

 protected:
  std::string_view expected_json() const override { return "a date string (YYYY-MM-DD)"; }
  Status Parse(std::string_view text) override {
    int32_t days;
    if (!ParseDateFast(text, &days)) {
      ARROW_ASSIGN_OR_RAISE(days, iceberg::ParseDate(text));
    }
    return static_cast<arrow::Date32Builder*>(builder_)->Append(days);
  }
};

class TimeConverter : public PrimitiveConverter {
 public:
  using PrimitiveConverter::PrimitiveConverter;

 protected:
  std::string_view expected_json() const override { return "a time string (HH:MM:SS[.ffffff])"; }
  Status Parse(std::string_view text) override {
    int64_t micros;
    if (!ParseTimeFast(text, &micros)) {
      ARROW_ASSIGN_OR_RAISE(micros, iceberg::ParseTime(text));
    }
    const auto unit = static_cast<const arrow::Time64Type&>(*field_->type()).unit();
    return static_cast<arrow::Time64Builder*>(builder_)->Append(unit == arrow::TimeUnit::NANO ? micros * 1000 : micros);
  }
};

class TimestampConverter : public PrimitiveConverter {
 public:
  using PrimitiveConverter::PrimitiveConverter;

 protected:
  std::string_view expected_json() const override {
    return static_cast<const arrow::TimestampType&>(*field_->type()).timezone().empty()
               ? "a timestamp string (YYYY-MM-DDTHH:MM:SS[.ffffff])"
               : "a timestamp string (YYYY-MM-DDTHH:MM:SS[.ffffff]Z)";
  }
  Status Parse(std::string_view text) override {
    ARROW_ASSIGN_OR_RAISE(int64_t v, ParseTimestampIn(text, static_cast<const arrow::TimestampType&>(*field_->type())));
    return static_cast<arrow::TimestampBuilder*>(builder_)->Append(v);
  }
};

template <typename BuilderType>
class StringConverter : public PrimitiveConverter {
 public:
  using PrimitiveConverter::PrimitiveConverter;

 protected:
  Status Parse(std::string_view text) override { return static_cast<BuilderType*>(builder_)->Append(text); }
};

template <typename BuilderType>
class BinaryConverter : public PrimitiveConverter {
 public:
  using PrimitiveConverter::PrimitiveConverter;

 protected:
  std::string_view expected_json() const override { return "a base64 string"; }
  Status Parse(std::string_view text) override {
    ARROW_ASSIGN_OR_RAISE(auto bytes, ParseBase64(text));
    return static_cast<BuilderType*>(builder_)->Append(bytes);
  }
};

// fixed(L) as base64; a 16-byte column (Iceberg's uuid) also takes the canonical uuid text.
class FixedConverter : public PrimitiveConverter {
 public:
  using PrimitiveConverter::PrimitiveConverter;

 protected:
  int width() const { return static_cast<const arrow::FixedSizeBinaryType&>(*field_->type()).byte_width(); }
  std::string_view expected_json() const override {
    return width() == 16 ? "a uuid string or base64 of 16 bytes" : "a base64 string";
  }
  Status Parse(std::string_view text) override {
    std::string bytes;
    if (width() == 16 && text.size() == 36 && text[8] == '-') {
      auto uuid = iceberg::ParseUuid(text);
      if (!uuid.ok()) return InvalidArgument("{} is not a uuid", Quoted(text));
      bytes = std::move(uuid).ValueUnsafe();
    } else {
      ARROW_ASSIGN_OR_RAISE(bytes, ParseBase64(text));
    }
    if (static_cast<int>(bytes.size()) != width()) {
      return InvalidArgument("{} holds {} bytes, but type {} needs {}", Quoted(text), bytes.size(),
                             TypeName(*field_->type()), width());
    }
    return static_cast<arrow::FixedSizeBinaryBuilder*>(builder_)->Append(bytes);
  }
};

class NullTypeConverter : public ValueConverter {
 public:
  using ValueConverter::ValueConverter;
  Status AppendJson(const JsonNode& node, const ValuePath& path) override {
    if (node.kind != Kind::kNull) return AtPath(path, WrongKind(node, "null", *field_->type()));
    return builder_->AppendNull();
  }
  Status AppendText(std::string_view text, const ValuePath& path) override {
    return AtPath(path, InvalidArgument("expected an empty cell for type {}, got {}", TypeName(*field_->type()),
                                        Quoted(text)));
  }
};

// ---------------------------------------------------------------------------------------------
// Nested values. In CSV cells they are JSON text.

class NestedConverter : public ValueConverter {
 public:
  using ValueConverter::ValueConverter;
  Status AppendText(std::string_view text, const ValuePath& path) override {
    JsonNode node;
    Status st = ParseJson(text, &node);
    if (!st.ok()) return AtPath(path, st);
    return AppendJson(node, path);
  }
};

class StructConverter : public NestedConverter {
 public:
  StructConverter(std::shared_ptr<arrow::Field> field, arrow::ArrayBuilder* builder, ValueRole role,
                  std::vector<std::unique_ptr<ValueConverter>> children)
      : NestedConverter(std::move(field), builder, role), fields_(std::move(children), /*columns=*/false) {}

  Status AppendJson(const JsonNode& node, const ValuePath& path) override {
    if (node.kind == Kind::kNull) return AppendNull(path);
    if (node.kind != Kind::kObject) return AtPath(path, WrongKind(node, "an object", *field_->type()));
    ARROW_RETURN_NOT_OK(static_cast<arrow::StructBuilder*>(builder_)->Append());
    return fields_.Append(node, &path);
  }

 private:
  ObjectFields fields_;
};

template <typename BuilderType>
class ListConverter : public NestedConverter {
 public:
  ListConverter(std::shared_ptr<arrow::Field> field, arrow::ArrayBuilder* builder, ValueRole role,
                std::unique_ptr<ValueConverter> element)
      : NestedConverter(std::move(field), builder, role), element_(std::move(element)) {}

  Status AppendJson(const JsonNode& node, const ValuePath& path) override {
    if (node.kind == Kind::kNull) return AppendNull(path);
    if (node.kind != Kind::kArray) return AtPath(path, WrongKind(node, "an array", *field_->type()));
    ARROW_RETURN_NOT_OK(static_cast<BuilderType*>(builder_)->Append());
    for (size_t i = 0; i < node.items.size(); ++i) {
      ValuePath element{&path, {}, static_cast<int64_t>(i)};
      ARROW_RETURN_NOT_OK(element_->AppendJson(node.items[i], element));
    }
    return Status::OK();
  }

 private:
  std::unique_ptr<ValueConverter> element_;
};

// Maps as the writer writes them: an object when the keys are strings (any key type is accepted
// in that form, its text parsed like a CSV cell), else an array of {"key": ..., "value": ...}.
class MapConverter : public NestedConverter {
 public:
  MapConverter(std::shared_ptr<arrow::Field> field, arrow::ArrayBuilder* builder, ValueRole role,
               std::unique_ptr<ValueConverter> key, std::unique_ptr<ValueConverter> value)
      : NestedConverter(std::move(field), builder, role), key_(std::move(key)), value_(std::move(value)) {}

  Status AppendJson(const JsonNode& node, const ValuePath& path) override {
    if (node.kind == Kind::kNull) return AppendNull(path);
    if (node.kind == Kind::kObject) {
      ARROW_RETURN_NOT_OK(static_cast<arrow::MapBuilder*>(builder_)->Append());
      for (size_t i = 0; i < node.items.size(); ++i) {
        ValuePath entry{&path, {}, -1, &node.keys[i]};
        ARROW_RETURN_NOT_OK(key_->AppendText(node.keys[i], entry));
        ARROW_RETURN_NOT_OK(value_->AppendJson(node.items[i], entry));
      }
      return Status::OK();
    }
    if (node.kind != Kind::kArray) {
      return AtPath(path, WrongKind(node, "an object or an array of {\"key\": ..., \"value\": ...} objects",
                                    *field_->type()));
    }
    ARROW_RETURN_NOT_OK(static_cast<arrow::MapBuilder*>(builder_)->Append());
    for (size_t i = 0; i < node.items.size(); ++i) {
      const JsonNode& entry = node.items[i];
      ValuePath entry_path{&path, {}, static_cast<int64_t>(i)};
      if (entry.kind != Kind::kObject) {
        return AtPath(entry_path, InvalidArgument("expected a {{\"key\": ..., \"value\": ...}} object, got {}",
                                                  JsonSnippet(entry)));
      }
      const JsonNode* key = nullptr;
      const JsonNode* value = nullptr;
      for (size_t m = 0; m < entry.items.size(); ++m) {
        const JsonNode** slot = entry.keys[m] == "key" ? &key : entry.keys[m] == "value" ? &value : nullptr;
        if (slot == nullptr) {
          return AtPath(entry_path, InvalidArgument("a map entry has only \"key\" and \"value\", not \"{}\"",
                                                    entry.keys[m]));
        }
        if (*slot != nullptr) return AtPath(entry_path, InvalidArgument("\"{}\" is given twice", entry.keys[m]));
        *slot = &entry.items[m];
      }
      ValuePath key_path{&entry_path, "key"};
      ValuePath value_path{&entry_path, "value"};
      ARROW_RETURN_NOT_OK(key ? key_->AppendJson(*key, key_path) : key_->AppendMissing(key_path));
      ARROW_RETURN_NOT_OK(value ? value_->AppendJson(*value, value_path) : value_->AppendMissing(value_path));
    }
    return Status::OK();
  }

 private:
  std::unique_ptr<ValueConverter> key_;
  std::unique_ptr<ValueConverter> value_;
};

template <typename T, typename... Args>
Result<std::unique_ptr<ValueConverter>> Make(Args&&... args) {
  return std::unique_ptr<ValueConverter>(std::make_unique<T>(std::forward<Args>(args)...));
}

}  // namespace

std::string ValuePath::ToString() const {
  std::string parent_text = parent ? parent->ToString() : std::string();
  if (map_key != nullptr) {
    parent_text.push_back('[');
    AppendJsonString(parent_text, *map_key);
    parent_text.push_back(']');
    return parent_text;
  }
  if (index >= 0) return parent_text + "[" + std::to_string(index) + "]";
  if (parent_text.empty()) return std::string(name);
  return parent_text + "." + std::string(name);
}

Status AtPath(const ValuePath& path, const Status& reason) {
  return MakeError(KindOf(reason), fmt::format("column '{}': {}", path.ToString(), reason.message()));
}

Status ValueConverter::AppendNull(const ValuePath& path) {
  if (!field_->nullable()) {
    switch (role_) {
      case ValueRole::kColumn: return AtPath(path, InvalidArgument("null in a required column"));
      case ValueRole::kField: return AtPath(path, InvalidArgument("null in a required field"));
      case ValueRole::kElement: return AtPath(path, InvalidArgument("null in a list whose elements are required"));
      case ValueRole::kMapKey: return AtPath(path, InvalidArgument("map keys cannot be null"));
      case ValueRole::kMapValue: return AtPath(path, InvalidArgument("null in a map whose values are required"));
    }
  }
  return builder_->AppendNull();
}

Status ValueConverter::AppendMissing(const ValuePath& path) {
  if (!field_->nullable()) {
    switch (role_) {
      case ValueRole::kColumn: return AtPath(path, InvalidArgument("required column is missing"));
      case ValueRole::kMapKey: return AtPath(path, InvalidArgument("map entry has no \"key\""));
      default: return AtPath(path, InvalidArgument("required field is missing"));
    }
  }
  return builder_->AppendNull();
}

Result<std::unique_ptr<ValueConverter>> MakeValueConverter(const std::shared_ptr<arrow::Field>& field,
                                                           arrow::ArrayBuilder* builder, ValueRole role) {
  using arrow::Type;
  const auto& type = *field->type();
  switch (type.id()) {
    case Type::NA: return Make<NullTypeConverter>(field, builder, role);
    case Type::BOOL: return Make<BoolConverter>(field, builder, role);
    case Type::INT8: return Make<IntegerConverter<arrow::Int8Type>>(field, builder, role);
    case Type::INT16: return Make<IntegerConverter<arrow::Int16Type>>(field, builder, role);
    case Type::INT32: return Make<IntegerConverter<arrow::Int32Type>>(field, builder, role);
    case Type::INT64: return Make<IntegerConverter<arrow::Int64Type>>(field, builder, role);
    case Type::UINT8: return Make<IntegerConverter<arrow::UInt8Type>>(field, builder, role);
    case Type::UINT16: return Make<IntegerConverter<arrow::UInt16Type>>(field, builder, role);
    case Type::UINT32: return Make<IntegerConverter<arrow::UInt32Type>>(field, builder, role);
    case Type::UINT64: return Make<IntegerConverter<arrow::UInt64Type>>(field, builder, role);
    case Type::FLOAT: return Make<FloatingConverter<arrow::FloatType>>(field, builder, role);
    case Type::DOUBLE: return Make<FloatingConverter<arrow::DoubleType>>(field, builder, role);
    case Type::DECIMAL128: return Make<DecimalConverter>(field, builder, role);
    case Type::DATE32: return Make<DateConverter>(field, builder, role);
    case Type::TIME64: return Make<TimeConverter>(field, builder, role);
    case Type::TIMESTAMP: return Make<TimestampConverter>(field, builder, role);
    case Type::STRING: return Make<StringConverter<arrow::StringBuilder>>(field, builder, role);
    case Type::LARGE_STRING: return Make<StringConverter<arrow::LargeStringBuilder>>(field, builder, role);
    case Type::BINARY: return Make<BinaryConverter<arrow::BinaryBuilder>>(field, builder, role);
    case Type::LARGE_BINARY: return Make<BinaryConverter<arrow::LargeBinaryBuilder>>(field, builder, role);
    case Type::FIXED_SIZE_BINARY: return Make<FixedConverter>(field, builder, role);
    case Type::STRUCT: {
      auto* struct_builder = static_cast<arrow::StructBuilder*>(builder);
      std::vector<std::unique_ptr<ValueConverter>> children;
      for (int i = 0; i < type.num_fields(); ++i) {
        ARROW_ASSIGN_OR_RAISE(auto child, MakeValueConverter(type.field(i), struct_builder->field_builder(i),
                                                             ValueRole::kField));
        children.push_back(std::move(child));
      }
      return Make<StructConverter>(field, builder, role, std::move(children));
    }
    case Type::LIST: {
      auto* list_builder = static_cast<arrow::ListBuilder*>(builder);
      ARROW_ASSIGN_OR_RAISE(auto element,
                            MakeValueConverter(type.field(0), list_builder->value_builder(), ValueRole::kElement));
      return Make<ListConverter<arrow::ListBuilder>>(field, builder, role, std::move(element));
    }
    case Type::LARGE_LIST: {
      auto* list_builder = static_cast<arrow::LargeListBuilder*>(builder);
      ARROW_ASSIGN_OR_RAISE(auto element,
                            MakeValueConverter(type.field(0), list_builder->value_builder(), ValueRole::kElement));
      return Make<ListConverter<arrow::LargeListBuilder>>(field, builder, role, std::move(element));
    }
    case Type::MAP: {
      const auto& map_type = static_cast<const arrow::MapType&>(type);
      auto* map_builder = static_cast<arrow::MapBuilder*>(builder);
      ARROW_ASSIGN_OR_RAISE(auto key,
                            MakeValueConverter(map_type.key_field(), map_builder->key_builder(), ValueRole::kMapKey));
      ARROW_ASSIGN_OR_RAISE(auto value, MakeValueConverter(map_type.item_field(), map_builder->item_builder(),
                                                           ValueRole::kMapValue));
      return Make<MapConverter>(field, builder, role, std::move(key), std::move(value));
    }
    default:
      return Unsupported("column '{}' has Arrow type {}, which JSON Lines and CSV input cannot fill", field->name(),
                         type.ToString());
  }
}

// ---------------------------------------------------------------------------------------------

ObjectFields::ObjectFields(std::vector<std::unique_ptr<ValueConverter>> converters, bool columns)
    : converters_(std::move(converters)), columns_(columns), seen_(converters_.size(), 0) {
  for (size_t i = 0; i < converters_.size(); ++i) {
    by_name_.emplace(converters_[i]->field()->name(), static_cast<int>(i));
  }
}

Status ObjectFields::Append(const JsonNode& object, const ValuePath* parent) {
  ++counter_;
  for (size_t m = 0; m < object.items.size(); ++m) {
    const std::string& name = object.keys[m];
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return Unknown(name, parent);
    const size_t i = static_cast<size_t>(it->second);
    ValuePath path{parent, name};
    if (seen_[i] == counter_) return AtPath(path, InvalidArgument("given twice"));
    seen_[i] = counter_;
    ARROW_RETURN_NOT_OK(converters_[i]->AppendJson(object.items[m], path));
  }
  for (size_t i = 0; i < converters_.size(); ++i) {
    if (seen_[i] == counter_) continue;
    ValuePath path{parent, converters_[i]->field()->name()};
    ARROW_RETURN_NOT_OK(converters_[i]->AppendMissing(path));
  }
  return Status::OK();
}

Status ObjectFields::Unknown(const std::string& name, const ValuePath* parent) const {
  constexpr size_t kMaxNames = 12;
  std::string names;
  for (size_t i = 0; i < converters_.size() && i < kMaxNames; ++i) {
    names += (i ? ", " : "") + converters_[i]->field()->name();
  }
  if (converters_.size() > kMaxNames) names += fmt::format(", ... ({} in all)", converters_.size());
  ValuePath path{parent, name};
  if (columns_) return AtPath(path, InvalidArgument("not in the table (its columns: {})", names));
  return AtPath(path, InvalidArgument("not a field of struct '{}' (its fields: {})", parent->ToString(), names));
}

ColumnBuilders::ColumnBuilders() = default;
ColumnBuilders::~ColumnBuilders() = default;

Result<std::unique_ptr<ColumnBuilders>> ColumnBuilders::Make(std::shared_ptr<arrow::Schema> schema) {
  auto c = std::make_unique<ColumnBuilders>();
  for (const auto& f : schema->fields()) {
    std::unique_ptr<arrow::ArrayBuilder> builder;
    ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), f->type(), &builder));
    ARROW_ASSIGN_OR_RAISE(auto converter, MakeValueConverter(f, builder.get(), ValueRole::kColumn));
    c->builders_.push_back(std::move(builder));
    c->converters_.push_back(std::move(converter));
  }
  c->schema_ = std::move(schema);
  return c;
}

Status ColumnBuilders::Reserve(int64_t rows) {
  for (auto& b : builders_) ARROW_RETURN_NOT_OK(b->Reserve(rows));
  return Status::OK();
}

Result<std::shared_ptr<arrow::RecordBatch>> ColumnBuilders::Finish(int64_t rows) {
  arrow::ArrayVector columns;
  for (size_t i = 0; i < builders_.size(); ++i) {
    std::shared_ptr<arrow::Array> array;
    ARROW_RETURN_NOT_OK(builders_[i]->Finish(&array));
    const auto& type = schema_->field(static_cast<int>(i))->type();
    // Nested builders rebuild their type from the children's and can lose field names or metadata
    // (the Iceberg field ids); the layout is the same, so only the type is replaced.
    if (!array->type()->Equals(*type, /*check_metadata=*/true)) {
      ARROW_ASSIGN_OR_RAISE(array, array->View(type));
    }
    columns.push_back(std::move(array));
  }
  return arrow::RecordBatch::Make(schema_, rows, std::move(columns));
}

std::string TypeName(const arrow::DataType& type) {
  using arrow::Type;
  switch (type.id()) {
    case Type::BOOL: return "boolean";
    case Type::INT32: return "int";
    case Type::INT64: return "long";
    case Type::FLOAT: return "float";
    case Type::DOUBLE: return "double";
    case Type::DECIMAL128: {
      const auto& d = static_cast<const arrow::Decimal128Type&>(type);
      return fmt::format("decimal({}, {})", d.precision(), d.scale());
    }
    case Type::DATE32: return "date";
    case Type::TIME64: return "time";
    case Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(type);
      std::string name = ts.timezone().empty() ? "timestamp" : "timestamptz";
      if (ts.unit() == arrow::TimeUnit::NANO) return name + "_ns";
      if (ts.unit() == arrow::TimeUnit::MICRO) return name;
      return type.ToString();
    }
    case Type::STRING: return "string";
    case Type::BINARY: return "binary";
    case Type::FIXED_SIZE_BINARY: {
      const int width = static_cast<const arrow::FixedSizeBinaryType&>(type).byte_width();
      return width == 16 ? "fixed[16] (or uuid)" : fmt::format("fixed[{}]", width);
    }
    case Type::STRUCT: return "struct";
    case Type::LIST: return "list<" + TypeName(*type.field(0)->type()) + ">";
    case Type::MAP: {
      const auto& m = static_cast<const arrow::MapType&>(type);
      return "map<" + TypeName(*m.key_type()) + ", " + TypeName(*m.item_type()) + ">";
    }
    default: return type.ToString();
  }
}

}  // namespace lakesync::tabular
