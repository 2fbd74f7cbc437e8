// Appending JSON values and text cells to Arrow builders by the target Arrow type, with the
// encodings of the JSON Lines contract (tabular.h) and of our CSV output (the same values without
// JSON quoting, nested values as JSON text). The JSON Lines and CSV readers share these, so both
// accept exactly what the writers produce and report errors the same way.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/formats/tabular/json_document_internal.h"

namespace lakesync::tabular {

// Where a value sits in a row: a chain of segments on the stack, rendered only when an error
// needs it ("address.city", "tags[2]", "prices[\"eur\"]", "pairs[0].key").
struct ValuePath {
  const ValuePath* parent = nullptr;
  std::string_view name;                  // a column or struct field, or "key"/"value" of a map entry
  int64_t index = -1;                     // a list element or map entry, 0-based
  const std::string* map_key = nullptr;   // the key of a map written as a JSON object
  std::string ToString() const;
};

// What a value is to its parent; chooses the words of "null in a required ..." messages.
enum class ValueRole { kColumn, kField, kElement, kMapKey, kMapValue };

class ValueConverter {
 public:
  virtual ~ValueConverter() = default;

  // Appends one JSON value; JSON null appends a null.
  // Errors: InvalidArgument "column '<path>': <reason>" for a null where the field is required,
  // a value of the wrong JSON kind, or one that does not parse or fit.
  virtual Status AppendJson(const JsonNode& node, const ValuePath& path) = 0;
  // Appends one non-null text cell as our CSV output writes it: primitives in the text of the
  // JSON Lines contract without quotes, structs, lists and maps as JSON. Errors as above.
  virtual Status AppendText(std::string_view text, const ValuePath& path) = 0;
  // Appends a null. Errors: InvalidArgument naming the path when the field is required.
  Status AppendNull(const ValuePath& path);
  // Appends a null for a value its object leaves out. Errors as AppendNull, saying "missing".
  Status AppendMissing(const ValuePath& path);

  const std::shared_ptr<arrow::Field>& field() const { return field_; }

  // Public so that subclasses inherit it as it is (MakeValueConverter is the way to make one).
  ValueConverter(std::shared_ptr<arrow::Field> field, arrow::ArrayBuilder* builder, ValueRole role)
      : field_(std::move(field)), builder_(builder), role_(role) {}

 protected:

  std::shared_ptr<arrow::Field> field_;
  arrow::ArrayBuilder* builder_;
  ValueRole role_;
};

// A converter for `field` appending to `builder`, which must have been made for the field's type
// (arrow::MakeBuilder); nested builders' children get converters of their own.
// Errors: Unsupported naming the field for Arrow types outside the Iceberg mapping (time32,
// date64, decimal256, extension types, ...).
Result<std::unique_ptr<ValueConverter>> MakeValueConverter(const std::shared_ptr<arrow::Field>& field,
                                                           arrow::ArrayBuilder* builder, ValueRole role);

// Matches the members of a JSON object to a set of fields: a row's columns or a struct's fields.
class ObjectFields {
 public:
  // `columns`: the fields are a table's columns (a row), which messages call columns.
  ObjectFields(std::vector<std::unique_ptr<ValueConverter>> converters, bool columns);

  // Appends each member to its field and a null to every field the object leaves out.
  // Errors: InvalidArgument "column '<path>': ..." for a member that is not a field (naming the
  // fields there are), a member given twice, a missing required field, and every error of the
  // fields' converters.
  Status Append(const JsonNode& object, const ValuePath* parent);

 private:
  Status Unknown(const std::string& name, const ValuePath* parent) const;

  std::vector<std::unique_ptr<ValueConverter>> converters_;
  bool columns_;
  std::unordered_map<std::string_view, int> by_name_;
  std::vector<uint64_t> seen_;  // per field, the object counter when it was last given
  uint64_t counter_ = 0;
};

// A builder and a converter for every column of `schema`, finished into batches of that schema.
class ColumnBuilders {
 public:
  // Errors: Unsupported naming the column for a type no converter fills.
  static Result<std::unique_ptr<ColumnBuilders>> Make(std::shared_ptr<arrow::Schema> schema);
  ColumnBuilders();
  ~ColumnBuilders();

  // Hands the converters over (to an ObjectFields); the builders stay here.
  std::vector<std::unique_ptr<ValueConverter>> TakeConverters() { return std::move(converters_); }
  std::vector<std::unique_ptr<ValueConverter>>& converters() { return converters_; }

  // Makes room for `rows` more rows in every column, saving regrowth as they are appended.
  Status Reserve(int64_t rows);

  // Finishes the rows appended so far into a batch of exactly the schema (names, types,
  // nullability and field metadata) and resets the builders.
  Result<std::shared_ptr<arrow::RecordBatch>> Finish(int64_t rows);

 private:
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders_;
  std::vector<std::unique_ptr<ValueConverter>> converters_;
};

// Regex-free parsing of the common spellings, with the results of iceberg::ParseDate, ParseTime
// and ParseTimestamp (literal.h); false for anything else (expanded years, "HH:MM", "+hhmm" offsets,
// errors), which those parsers then handle.
bool ParseDateFast(std::string_view text, int32_t* days);
bool ParseTimeFast(std::string_view text, int64_t* micros);
bool ParseTimestampFast(std::string_view text, bool nanos, int64_t* value);

// The Iceberg name of an Arrow type where there is one ("long", "decimal(9, 2)", "timestamptz"),
// else Arrow's; for error messages.
std::string TypeName(const arrow::DataType& type);

// "column '<path>': <reason>", keeping the kind of `reason`.
Status AtPath(const ValuePath& path, const Status& reason);

}  // namespace lakesync::tabular
