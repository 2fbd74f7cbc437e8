// Types of a JSON Lines file without a table: Arrow infers the structure, lakesync the temporal types
// (see InferJsonlSchema in tabular.h for why Arrow's own guess is not used for them).
#include <arrow/api.h>
#include <arrow/io/api.h>
#include <arrow/json/api.h>

#include <regex>

#include "lakesync/formats/tabular/tabular.h"

namespace lakesync::tabular {
namespace {

enum class Temporal { kNone, kDate, kTimestamp, kTimestampTz, kTimestampNs, kTimestampTzNs };

// The JSON Lines contract's spellings (and ISO-8601's space separator and offsets).
Temporal Classify(std::string_view text) {
  static const std::regex kDate(R"(^\d{4}-\d{2}-\d{2}$)");
  static const std::regex kTimestamp(
      R"(^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.(\d{1,9}))?)?(Z|z|[+-]\d{2}(:?\d{2})?)?$)");
  std::cmatch m;
  if (std::regex_match(text.begin(), text.end(), m, kDate)) return Temporal::kDate;
  if (!std::regex_match(text.begin(), text.end(), m, kTimestamp)) return Temporal::kNone;
  const bool zone = m[4].matched;
  const bool nanos = m[3].matched && m[3].length() > 6;
  if (zone) return nanos ? Temporal::kTimestampTzNs : Temporal::kTimestampTz;
  return nanos ? Temporal::kTimestampNs : Temporal::kTimestamp;
}

// One type for a column's values, or kNone when they disagree in a way no type covers (a zone on some
// values and not on others) or one of them is not temporal at all.
Temporal Combine(Temporal a, Temporal b) {
  if (a == b) return a;
  auto zoned = [](Temporal t) { return t == Temporal::kTimestampTz || t == Temporal::kTimestampTzNs; };
  auto plain = [](Temporal t) { return t == Temporal::kTimestamp || t == Temporal::kTimestampNs; };
  if (zoned(a) && zoned(b)) return Temporal::kTimestampTzNs;
  if (plain(a) && plain(b)) return Temporal::kTimestampNs;
  return Temporal::kNone;
}

std::shared_ptr<arrow::DataType> TypeOf(Temporal t) {
  switch (t) {
    case Temporal::kDate: return arrow::date32();
    case Temporal::kTimestamp: return arrow::timestamp(arrow::TimeUnit::MICRO);
    case Temporal::kTimestampTz: return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case Temporal::kTimestampNs: return arrow::timestamp(arrow::TimeUnit::NANO);
    case Temporal::kTimestampTzNs: return arrow::timestamp(arrow::TimeUnit::NANO, "UTC");
    case Temporal::kNone: break;
  }
  return arrow::utf8();
}

// Inside lists and objects Arrow's timestamps (zone dropped) become the strings they were, and
// all-null fields (Arrow's null type, which no table type matches) strings too.
std::shared_ptr<arrow::DataType> NestedAsText(const std::shared_ptr<arrow::DataType>& type) {
  switch (type->id()) {
    case arrow::Type::TIMESTAMP:
    case arrow::Type::NA:
      return arrow::utf8();
    case arrow::Type::LIST: {
      const auto& list = static_cast<const arrow::ListType&>(*type);
      return arrow::list(list.value_field()->WithType(NestedAsText(list.value_type())));
    }
    case arrow::Type::STRUCT: {
      arrow::FieldVector children;
      for (const auto& f : type->fields()) children.push_back(f->WithType(NestedAsText(f->type())));
      return arrow::struct_(children);
    }
    default:
      return type;
  }
}

}  // namespace

Result<std::shared_ptr<arrow::Schema>> InferJsonlSchema(const io::FileIO& io, const std::string& location) {
  auto first_block = [&](const arrow::json::ParseOptions& parse) -> Result<std::shared_ptr<arrow::RecordBatch>> {
    ARROW_ASSIGN_OR_RAISE(auto input, io.OpenInput(location));
    auto read = arrow::json::ReadOptions::Defaults();
    read.block_size = 1 << 22;
    read.use_threads = false;
    auto reader = arrow::json::StreamingReader::Make(input, read, parse);
    if (!reader.ok()) return WithContext(reader.status(), "reading " + location);
    std::shared_ptr<arrow::RecordBatch> batch;
    LS_RETURN_NOT_OK_CTX((*reader)->ReadNext(&batch), "reading {}", location);
    if (!batch) return InvalidArgument("{}: no rows to take column types from", location);
    return batch;
  };
  // Pass 1: Arrow's structure. Pass 2: the columns Arrow made strings or timestamps, read as the
  // text they are, to be typed by their spelling.
  ARROW_ASSIGN_OR_RAISE(auto inferred, first_block(arrow::json::ParseOptions::Defaults()));
  arrow::FieldVector as_text;
  std::vector<int> candidates;
  for (int i = 0; i < inferred->num_columns(); ++i) {
    const auto& f = inferred->schema()->field(i);
    const auto id = f->type()->id();
    if (id == arrow::Type::TIMESTAMP || id == arrow::Type::STRING) {
      candidates.push_back(i);
      as_text.push_back(f->WithType(arrow::utf8()));
    }
  }
  arrow::FieldVector fields;
  for (const auto& f : inferred->schema()->fields()) fields.push_back(f->WithType(NestedAsText(f->type())));
  if (!candidates.empty()) {
    auto parse = arrow::json::ParseOptions::Defaults();
    parse.explicit_schema = arrow::schema(as_text);
    ARROW_ASSIGN_OR_RAISE(auto text, first_block(parse));
    for (int i : candidates) {
      const std::string& name = fields[static_cast<size_t>(i)]->name();
      auto column = text->GetColumnByName(name);
      std::optional<Temporal> kind;
      if (column) {
        const auto& strings = static_cast<const arrow::StringArray&>(*column);
        for (int64_t r = 0; r < strings.length() && (!kind || *kind != Temporal::kNone); ++r) {
          if (strings.IsNull(r)) continue;
          const Temporal t = Classify(strings.GetView(r));
          kind = kind ? Combine(*kind, t) : t;
        }
      }
      fields[static_cast<size_t>(i)] = fields[static_cast<size_t>(i)]->WithType(TypeOf(kind.value_or(Temporal::kNone)));
    }
  }
  return arrow::schema(fields);
}

}  // namespace lakesync::tabular
