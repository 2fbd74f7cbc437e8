#include "lakesync/plan/change_batch_preparer_internal.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/type_traits.h>

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "lakesync/plan/key_view_internal.h"

namespace lakesync::plan::internal {
namespace {

namespace cp = arrow::compute;

constexpr char kSequenceField[] = "__lakesync_sequence";
constexpr char kRankField[] = "__lakesync_kind_rank";
constexpr char kErrorField[] = "_error";

std::string Source(const CollapseOptions& options) {
  return options.source_name.empty() ? std::string("changes") : options.source_name;
}

Result<int> FindTopLevel(const arrow::Schema& schema, const std::string& name, std::string_view role,
                         const std::string& source) {
  const auto indices = schema.GetAllFieldIndices(name);
  if (indices.size() > 1) return InvalidArgument("{} column '{}' appears more than once in {}", role, name, source);
  if (indices.empty()) {
    if (name.find('.') != std::string::npos) {
      return InvalidArgument("{} column '{}' is not a top-level column of {} (nested fields cannot be used)", role,
                             name, source);
    }
    return InvalidArgument("{} column '{}' is missing from {}", role, name, source);
  }
  return indices.front();
}

bool IsInteger(arrow::Type::type id) {
  switch (id) {
    case arrow::Type::INT8: case arrow::Type::INT16: case arrow::Type::INT32: case arrow::Type::INT64:
    case arrow::Type::UINT8: case arrow::Type::UINT16: case arrow::Type::UINT32: case arrow::Type::UINT64:
      return true;
    default:
      return false;
  }
}

bool IsStringLike(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::STRING: case arrow::Type::LARGE_STRING: case arrow::Type::STRING_VIEW:
      return true;
    case arrow::Type::DICTIONARY:
      return IsStringLike(*static_cast<const arrow::DictionaryType&>(type).value_type());
    default:
      return false;
  }
}

// Dictionary columns are decoded: the table has no dictionary types, and batches with different
// dictionaries could not share one spill file.
std::shared_ptr<arrow::Field> DecodedField(const std::shared_ptr<arrow::Field>& field) {
  if (field->type()->id() != arrow::Type::DICTIONARY) return field;
  return field->WithType(std::static_pointer_cast<arrow::DictionaryType>(field->type())->value_type());
}

Result<std::shared_ptr<arrow::Array>> Decoded(const std::shared_ptr<arrow::Array>& array,
                                              const std::shared_ptr<arrow::DataType>& type) {
  if (array->type()->Equals(*type)) return array;
  ARROW_ASSIGN_OR_RAISE(auto datum, cp::Cast(array, type));
  return datum.make_array();
}

std::shared_ptr<arrow::Array> IndexArray(std::vector<int64_t> indices) {
  const auto n = static_cast<int64_t>(indices.size());
  return std::make_shared<arrow::Int64Array>(n, arrow::Buffer::FromVector(std::move(indices)));
}

}  // namespace

Result<CollapseLayout> ResolveLayout(const std::shared_ptr<arrow::Schema>& input_schema,
                                     const CollapseOptions& options) {
  const std::string source = Source(options);
  if (!input_schema) return InvalidArgument("no input schema for {}", source);
  CollapseLayout layout;
  layout.input_schema = input_schema;
  const arrow::Schema& schema = *input_schema;

  ARROW_ASSIGN_OR_RAISE(layout.sequence_index, FindTopLevel(schema, options.sequence_column, "sequence", source));
  const auto& sequence_type = schema.field(layout.sequence_index)->type();
  if (!IsInteger(sequence_type->id())) {
    return InvalidArgument("sequence column '{}' of {} has type {}; it must be an integer (int64)",
                           options.sequence_column, source, sequence_type->ToString());
  }
  if (options.change_type_column) {
    if (*options.change_type_column == options.sequence_column) {
      return InvalidArgument("change type column and sequence column are both '{}'", options.sequence_column);
    }
    ARROW_ASSIGN_OR_RAISE(layout.change_type_index,
                          FindTopLevel(schema, *options.change_type_column, "change type", source));
    const auto& type = schema.field(layout.change_type_index)->type();
    if (!IsStringLike(*type)) {
      return InvalidArgument("change type column '{}' of {} has type {}; it must be a string",
                             *options.change_type_column, source, type->ToString());
    }
  } else if (options.mapper.uses_custom_map()) {
    return InvalidArgument("a change_type_map needs a change_type_column");
  }

  auto is_control = [&](int index) { return index == layout.sequence_index || index == layout.change_type_index; };
  if (options.output_columns.empty()) {
    for (int i = 0; i < schema.num_fields(); ++i) {
      if (!is_control(i)) layout.output_input_indices.push_back(i);
    }
  } else {
    std::set<std::string> seen;
    for (const auto& name : options.output_columns) {
      if (!seen.insert(name).second) return InvalidArgument("output column '{}' is listed twice", name);
      ARROW_ASSIGN_OR_RAISE(int index, FindTopLevel(schema, name, "output", source));
      if (is_control(index)) {
        return InvalidArgument("output column '{}' is a control column (sequence or change type); control "
                               "columns are stripped before writing", name);
      }
      layout.output_input_indices.push_back(index);
    }
  }
  if (layout.output_input_indices.empty()) return InvalidArgument("{} has no table columns", source);

  if (options.key_columns.empty()) return InvalidArgument("no equality (key) columns given for {}", source);
  std::set<std::string> seen_keys;
  for (const auto& name : options.key_columns) {
    if (!seen_keys.insert(name).second) return InvalidArgument("equality column '{}' is listed twice", name);
    ARROW_ASSIGN_OR_RAISE(int index, FindTopLevel(schema, name, "equality", source));
    if (is_control(index)) return InvalidArgument("equality column '{}' is a control column", name);
    ARROW_RETURN_NOT_OK(CheckKeyType(name, schema.field(index)->type()));
    const auto& outputs = layout.output_input_indices;
    const auto it = std::find(outputs.begin(), outputs.end(), index);
    if (it == outputs.end()) return InvalidArgument("equality column '{}' is not one of the output columns", name);
    layout.key_input_indices.push_back(index);
    layout.key_output_positions.push_back(static_cast<int>(it - outputs.begin()));
  }

  arrow::FieldVector output_fields;
  for (int index : layout.output_input_indices) output_fields.push_back(DecodedField(schema.field(index)));
  layout.output_schema = arrow::schema(output_fields);
  auto prepared_fields = output_fields;
  prepared_fields.push_back(arrow::field(kSequenceField, arrow::int64(), false));
  prepared_fields.push_back(arrow::field(kRankField, arrow::int8(), false));
  layout.prepared_schema = arrow::schema(prepared_fields);
  // Delete images: keys, the listed columns and nested columns (a null struct would break its
  // required children) keep their values.
  std::set<int> image_positions(layout.key_output_positions.begin(), layout.key_output_positions.end());
  for (size_t p = 0; p < output_fields.size(); ++p) {
    if (!options.delete_image_columns || arrow::is_nested(output_fields[p]->type()->id())) {
      image_positions.insert(static_cast<int>(p));
    }
  }
  if (options.delete_image_columns) {
    for (const auto& name : *options.delete_image_columns) {
      const int p = layout.output_schema->GetFieldIndex(name);
      if (p < 0) return InvalidArgument("delete image column '{}' is not one of the output columns", name);
      image_positions.insert(p);
    }
  }
  layout.image_output_positions.assign(image_positions.begin(), image_positions.end());
  layout.image_position_of_output.assign(output_fields.size(), -1);
  arrow::FieldVector narrow_fields;
  for (int p : layout.image_output_positions) {
    layout.image_position_of_output[static_cast<size_t>(p)] = static_cast<int>(narrow_fields.size());
    narrow_fields.push_back(output_fields[static_cast<size_t>(p)]);
  }
  for (int p : layout.key_output_positions) {
    layout.narrow_key_positions.push_back(layout.image_position_of_output[static_cast<size_t>(p)]);
  }
  narrow_fields.push_back(prepared_fields[prepared_fields.size() - 2]);
  narrow_fields.push_back(prepared_fields.back());
  layout.narrow_schema = arrow::schema(narrow_fields);
  auto dead_fields = schema.fields();
  dead_fields.push_back(arrow::field(kErrorField, arrow::utf8(), false));
  layout.dead_letter_schema = arrow::schema(dead_fields);
  return layout;
}

std::shared_ptr<arrow::RecordBatch> ImageView(const std::shared_ptr<arrow::RecordBatch>& prepared,
                                              const CollapseLayout& layout) {
  arrow::ArrayVector columns;
  for (int p : layout.image_output_positions) columns.push_back(prepared->column(p));
  columns.push_back(prepared->column(layout.sequence_position()));
  columns.push_back(prepared->column(layout.rank_position()));
  return arrow::RecordBatch::Make(layout.narrow_schema, prepared->num_rows(), std::move(columns));
}

ChangePreparer::ChangePreparer(CollapseLayout layout, const CollapseOptions& options)
    : layout_(std::move(layout)), options_(options), source_(Source(options)) {}

int8_t ChangePreparer::RankOf(std::string_view code) {
  // Sources use a handful of codes, so a short linear cache beats hashing every row.
  for (const auto& [known, rank] : rank_cache_) {
    if (known == code) return rank;
  }
  const auto kind = options_.mapper.Map(code);
  const int8_t rank = kind ? static_cast<int8_t>(change::KindRank(*kind)) : kUnknownCode;
  if (rank_cache_.size() < 64) rank_cache_.emplace_back(std::string(code), rank);
  return rank;
}

Result<std::vector<int8_t>> ChangePreparer::Ranks(const arrow::RecordBatch& batch) {
  const int64_t n = batch.num_rows();
  const int8_t insert_rank = static_cast<int8_t>(change::KindRank(change::ChangeKind::kInsert));
  if (layout_.change_type_index < 0) return std::vector<int8_t>(n, insert_rank);
  std::vector<int8_t> ranks(n);
  auto column = batch.column(layout_.change_type_index);
  if (column->type_id() != arrow::Type::STRING && column->type_id() != arrow::Type::LARGE_STRING) {
    ARROW_ASSIGN_OR_RAISE(column, Decoded(column, arrow::utf8()));
  }
  auto fill = [&](const auto& strings) {
    for (int64_t i = 0; i < n; ++i) {
      ranks[i] = strings.IsNull(i) ? kNullCode : RankOf(strings.GetView(i));
    }
  };
  if (column->type_id() == arrow::Type::STRING) {
    fill(static_cast<const arrow::StringArray&>(*column));
  } else {
    fill(static_cast<const arrow::LargeStringArray&>(*column));
  }
  return ranks;
}

std::string ChangePreparer::Reason(const arrow::RecordBatch& batch, const arrow::Array& sequence,
                                   const std::vector<int8_t>& ranks, int64_t row) const {
  for (size_t k = 0; k < layout_.key_input_indices.size(); ++k) {
    if (batch.column(layout_.key_input_indices[k])->IsNull(row)) {
      return fmt::format("equality column '{}' is null", options_.key_columns[k]);
    }
  }
  if (sequence.IsNull(row)) return fmt::format("sequence column '{}' is null", options_.sequence_column);
  if (ranks[row] == kNullCode) return fmt::format("change type column '{}' is null", *options_.change_type_column);
  if (ranks[row] == kUnknownCode) {
    const auto column = batch.column(layout_.change_type_index);
    const auto scalar = column->GetScalar(row);
    const std::string code = scalar.ok() ? (*scalar)->ToString() : std::string("?");
    std::string known;
    if (options_.mapper.uses_custom_map()) {
      known = fmt::format("known codes: {}", fmt::join(options_.mapper.codes(), ", "));
    } else {
      known = "expected INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE or Delta's insert, update_preimage, "
              "update_postimage, delete";
    }
    return fmt::format("unknown change type '{}' in column '{}' ({})", code, *options_.change_type_column, known);
  }
  return {};
}

Result<PreparedBatch> ChangePreparer::Prepare(const std::shared_ptr<arrow::RecordBatch>& batch_ptr,
                                              int64_t rows_before) {
  const arrow::RecordBatch& batch = *batch_ptr;
  const int64_t n = batch.num_rows();
  ARROW_ASSIGN_OR_RAISE(std::vector<int8_t> ranks, Ranks(batch));

  std::shared_ptr<arrow::Array> sequence = batch.column(layout_.sequence_index);
  bool maybe_invalid = sequence->null_count() > 0;
  for (int index : layout_.key_input_indices) maybe_invalid = maybe_invalid || batch.column(index)->null_count() > 0;
  for (int8_t rank : ranks) maybe_invalid = maybe_invalid || rank < 0;

  std::vector<int64_t> invalid_rows;
  std::vector<std::string> reasons;
  if (maybe_invalid) {
    for (int64_t i = 0; i < n; ++i) {
      std::string reason = Reason(batch, *sequence, ranks, i);
      if (reason.empty()) continue;
      std::string message = fmt::format("{} row {}: {}", source_, rows_before + i + 1, reason);
      if (!options_.dead_letter) {
        int64_t more = 0;
        for (int64_t j = i + 1; j < n; ++j) more += Reason(batch, *sequence, ranks, j).empty() ? 0 : 1;
        if (more > 0) message += fmt::format(" (and {} more invalid rows in this batch)", more);
        return InvalidArgument("{}", message);
      }
      invalid_rows.push_back(i);
      reasons.push_back(std::move(message));
    }
  }

  if (sequence->type_id() != arrow::Type::INT64) {
    // Casting needs valid rows only: the invalid ones are dropped below, and nulls cast to nulls.
    auto cast = cp::Cast(sequence, arrow::int64());
    if (!cast.ok()) {
      return InvalidArgument("{}: sequence column '{}' does not fit int64: {}", source_, options_.sequence_column,
                             cast.status().message());
    }
    sequence = cast->make_array();
  }

  PreparedBatch out;
  std::vector<int64_t> kept;
  const bool drop_befores = options_.upsert;
  const bool select = !invalid_rows.empty() || drop_befores;
  size_t next_invalid = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (next_invalid < invalid_rows.size() && invalid_rows[next_invalid] == i) {
      ++next_invalid;
      continue;
    }
    ++out.rank_counts[ranks[i]];
    if (drop_befores && ranks[i] == 0) {
      ++out.dropped_before_images;
      continue;
    }
    if (select) kept.push_back(i);
  }

  arrow::ArrayVector columns;
  for (size_t c = 0; c < layout_.output_input_indices.size(); ++c) {
    ARROW_ASSIGN_OR_RAISE(auto column, Decoded(batch.column(layout_.output_input_indices[c]),
                                               layout_.output_schema->field(static_cast<int>(c))->type()));
    columns.push_back(std::move(column));
  }
  columns.push_back(sequence);
  columns.push_back(std::make_shared<arrow::Int8Array>(n, arrow::Buffer::FromVector(std::move(ranks))));
  auto prepared = arrow::RecordBatch::Make(layout_.prepared_schema, n, std::move(columns));
  if (select && static_cast<int64_t>(kept.size()) != n) {
    ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(prepared, IndexArray(std::move(kept))));
    prepared = taken.record_batch();
  }
  out.rows = std::move(prepared);

  if (!invalid_rows.empty()) {
    const auto count = static_cast<int64_t>(invalid_rows.size());
    auto input = arrow::RecordBatch::Make(layout_.input_schema, n, batch.columns());
    ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(input, IndexArray(std::move(invalid_rows))));
    arrow::StringBuilder errors;
    ARROW_RETURN_NOT_OK(errors.AppendValues(reasons));
    ARROW_ASSIGN_OR_RAISE(auto error_column, errors.Finish());
    auto dead_columns = taken.record_batch()->columns();
    dead_columns.push_back(error_column);
    out.dead = arrow::RecordBatch::Make(layout_.dead_letter_schema, count, std::move(dead_columns));
  }
  return out;
}

}  // namespace lakesync::plan::internal
