#include "lakesync/iceberg/scan/data_file_reader.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/bit_run_reader.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/parallel.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>

#include "lakesync/common/column_threads.h"
#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/iceberg/expr/row_filter.h"
#include "lakesync/iceberg/model/arrow_schema.h"

namespace lakesync::iceberg {
namespace {

// A run of kept rows of a batch: rows [begin, begin + length).
struct RowRun {
  int64_t begin = 0;
  int64_t length = 0;
};

// Whether CopyRuns copies this column: flat fixed-width types (numbers, dates, times, timestamps,
// decimals, fixed binary), booleans, and strings/binaries with 32-bit offsets.
bool CopyRunsHandles(const arrow::Array& array) {
  const arrow::ArrayData& data = *array.data();
  switch (array.type_id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      return data.buffers.size() == 3 && data.buffers[1] != nullptr;
    case arrow::Type::DICTIONARY:
    case arrow::Type::EXTENSION:
      return false;
    default:
      break;
  }
  const auto* fixed = dynamic_cast<const arrow::FixedWidthType*>(array.type().get());
  return fixed != nullptr && data.buffers.size() == 2 && data.buffers[1] != nullptr &&
         (fixed->bit_width() == 1 || fixed->bit_width() % 8 == 0);
}

// Copies the rows in `runs` (`kept` rows in all) of `array`, which CopyRunsHandles accepts: one
// memcpy (or bitmap copy) per run and column. With deletes sparse, runs are long and this costs a
// fraction of a row-by-row gather (Arrow's Take).
Result<std::shared_ptr<arrow::Array>> CopyRuns(const arrow::Array& array, const std::vector<RowRun>& runs,
                                               int64_t kept) {
  arrow::MemoryPool* pool = arrow::default_memory_pool();
  const arrow::ArrayData& data = *array.data();
  const int64_t offset = data.offset;
  auto copy_bits = [&](const uint8_t* bits) -> Result<std::shared_ptr<arrow::Buffer>> {
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out, arrow::AllocateEmptyBitmap(kept, pool));
    int64_t position = 0;
    uint8_t* out_bits = out->mutable_data();
    for (const auto& run : runs) {
      if (run.length < 64) {
        // Bit by bit: cheaper than CopyBitmap's set-up for the short runs dense deletes leave.
        for (int64_t i = 0; i < run.length; ++i) {
          if (arrow::bit_util::GetBit(bits, offset + run.begin + i)) arrow::bit_util::SetBit(out_bits, position + i);
        }
      } else {
        arrow::internal::CopyBitmap(bits, offset + run.begin, run.length, out_bits, position);
      }
      position += run.length;
    }
    return out;
  };
  std::shared_ptr<arrow::Buffer> validity;
  if (array.null_count() > 0) {
    ARROW_ASSIGN_OR_RAISE(validity, copy_bits(data.buffers[0]->data()));
  }
  const int64_t null_count = validity ? arrow::kUnknownNullCount : 0;

  if (array.type_id() == arrow::Type::STRING || array.type_id() == arrow::Type::BINARY) {
    const auto* offsets = data.GetValues<int32_t>(1);  // already shifted by the array's offset
    const uint8_t* values = data.buffers[2] ? data.buffers[2]->data() : nullptr;
    int64_t bytes = 0;
    for (const auto& run : runs) bytes += offsets[run.begin + run.length] - offsets[run.begin];
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out_offsets,
                          arrow::AllocateBuffer((kept + 1) * static_cast<int64_t>(sizeof(int32_t)), pool));
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out_values, arrow::AllocateBuffer(bytes, pool));
    auto* next_offset = reinterpret_cast<int32_t*>(out_offsets->mutable_data());
    uint8_t* next_value = out_values->mutable_data();
    int32_t position = 0;  // fits: the output is a subset of an array with 32-bit offsets
    for (const auto& run : runs) {
      const int32_t base = offsets[run.begin];
      const int32_t length = offsets[run.begin + run.length] - base;
      for (int64_t i = 0; i < run.length; ++i) *next_offset++ = position + (offsets[run.begin + i] - base);
      if (length > 0) std::memcpy(next_value, values + base, static_cast<size_t>(length));
      next_value += length;
      position += length;
    }
    *next_offset = position;
    return arrow::MakeArray(
        arrow::ArrayData::Make(array.type(), kept, {validity, out_offsets, out_values}, null_count));
  }

  const int bit_width = static_cast<const arrow::FixedWidthType&>(*array.type()).bit_width();
  if (bit_width == 1) {
    ARROW_ASSIGN_OR_RAISE(auto out_values, copy_bits(data.buffers[1]->data()));
    return arrow::MakeArray(arrow::ArrayData::Make(array.type(), kept, {validity, out_values}, null_count));
  }
  const int64_t width = bit_width / 8;
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out_values, arrow::AllocateBuffer(kept * width, pool));
  const uint8_t* values = data.buffers[1]->data() + offset * width;
  uint8_t* next = out_values->mutable_data();
  for (const auto& run : runs) {
    std::memcpy(next, values + run.begin * width, static_cast<size_t>(run.length * width));
    next += run.length * width;
  }
  return arrow::MakeArray(arrow::ArrayData::Make(array.type(), kept, {validity, out_values}, null_count));
}

// The kept rows' indices, for Take: 32-bit where the batch allows. Written straight into the buffer
// (a builder's per-value bookkeeping costs more than the loop itself).
template <typename ArrayType>
Result<std::shared_ptr<arrow::Array>> FillIndices(const std::vector<RowRun>& runs, int64_t kept) {
  using Value = typename ArrayType::value_type;
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> buffer,
                        arrow::AllocateBuffer(kept * static_cast<int64_t>(sizeof(Value))));
  auto* next = reinterpret_cast<Value*>(buffer->mutable_data());
  for (const auto& run : runs) {
    const auto begin = static_cast<Value>(run.begin);
    for (Value i = 0; i < static_cast<Value>(run.length); ++i) *next++ = begin + i;
  }
  return std::make_shared<ArrayType>(kept, std::move(buffer));
}

Result<std::shared_ptr<arrow::Array>> RunIndices(const std::vector<RowRun>& runs, int64_t kept, int64_t n) {
  if (n <= std::numeric_limits<uint32_t>::max()) return FillIndices<arrow::UInt32Array>(runs, kept);
  return FillIndices<arrow::Int64Array>(runs, kept);
}

// The bits of `bits` (from bit 0) whose row is kept in `keep`, packed from bit 0 of `out` (room for
// whole 64-bit words). A byte of rows at a time: a byte whose 8 rows are all kept (43% of them at 10%
// deleted at random) is appended whole, any other bit by bit; 3x faster than Take on booleans.
void CompactBits(const uint8_t* bits, const uint8_t* keep, int64_t n, uint8_t* out) {
  uint64_t word = 0;
  int fill = 0;  // bits of `word` in use
  auto flush = [&out](uint64_t w) {
    std::memcpy(out, &w, sizeof(w));
    out += sizeof(w);
  };
  auto append = [&](uint64_t packed, int count) {
    word |= packed << fill;
    fill += count;
    if (fill >= 64) {
      flush(word);
      fill -= 64;
      word = fill > 0 ? packed >> (count - fill) : 0;
    }
  };
  const int64_t bytes = n / 8;
  for (int64_t i = 0; i < bytes; ++i) {
    uint64_t k = keep[i];
    if (k == 0xFF) {
      append(bits[i], 8);
      continue;
    }
    uint64_t packed = 0;
    int count = 0;
    for (; k != 0; k &= k - 1, ++count) packed |= ((bits[i] >> std::countr_zero(k)) & 1ULL) << count;
    if (count > 0) append(packed, count);
  }
  for (int64_t i = bytes * 8; i < n; ++i) {
    if (arrow::bit_util::GetBit(keep, i)) append(arrow::bit_util::GetBit(bits, i) ? 1 : 0, 1);
  }
  if (fill > 0) flush(word);
}

// The kept rows of a boolean array with offset 0 (CompactBits on its values and validity).
Result<std::shared_ptr<arrow::Array>> CompactBooleans(const arrow::Array& array, const uint8_t* keep, int64_t kept) {
  const arrow::ArrayData& data = *array.data();
  const int64_t words = (kept + 63) / 64;
  auto compact = [&](const uint8_t* bits) -> Result<std::shared_ptr<arrow::Buffer>> {
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out, arrow::AllocateBuffer(words * 8));
    CompactBits(bits, keep, array.length(), out->mutable_data());
    return out;
  };
  std::shared_ptr<arrow::Buffer> validity;
  if (array.null_count() > 0) {
    ARROW_ASSIGN_OR_RAISE(validity, compact(data.buffers[0]->data()));
  }
  ARROW_ASSIGN_OR_RAISE(auto values, compact(data.buffers[1]->data()));
  return arrow::MakeArray(arrow::ArrayData::Make(array.type(), kept, {validity, values},
                                                 validity ? arrow::kUnknownNullCount : 0));
}

// How one column's kept rows are copied: whichever measured cheaper for its type and the batch's
// runs of kept rows (docs/benchmarks.md, "The scan after issue-15k").
enum class Selector {
  kRuns,    // CopyRuns: a memcpy per run, for long runs (sparse deletes)
  kFilter,  // Arrow's Filter with the keep bitmap as its mask: strings and binaries when runs are
            // short, where it copies the values of a run at once and Take gathers them one by one
  kBits,    // CompactBooleans: booleans (at offset 0) when runs are short
  kTake,    // Arrow's Take with the kept rows' indices: everything else when runs are short (for
            // fixed-width values it beats Filter, which calls memcpy per run)
};

Selector SelectorFor(const arrow::Array& column, bool long_runs) {
  if (long_runs && CopyRunsHandles(column)) return Selector::kRuns;
  switch (column.type_id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      return Selector::kFilter;
    case arrow::Type::BOOL:
      return column.offset() == 0 ? Selector::kBits : Selector::kTake;
    default:
      return Selector::kTake;
  }
}

// The kept rows of `column` by `selector`: `runs` (`kept` rows) for kRuns, `indices` for kTake (made
// when a column needs them), `mask` (the keep bitmap) for kFilter and kBits.
Result<std::shared_ptr<arrow::Array>> SelectColumn(Selector selector, const std::shared_ptr<arrow::Array>& column,
                                                   const std::vector<RowRun>& runs, int64_t kept,
                                                   const std::shared_ptr<arrow::Array>& indices,
                                                   const arrow::BooleanArray& mask) {
  switch (selector) {
    case Selector::kRuns:
      return CopyRuns(*column, runs, kept);
    case Selector::kTake:
      return arrow::compute::Take(*column, *indices, arrow::compute::TakeOptions::NoBoundsCheck());
    case Selector::kFilter: {
      ARROW_ASSIGN_OR_RAISE(arrow::Datum filtered, arrow::compute::Filter(column, mask));
      return filtered.make_array();
    }
    case Selector::kBits:
      return CompactBooleans(*column, mask.values()->data(), kept);
  }
  return Status::Invalid("unknown row selector");
}

// The top-level field of `schema` that holds field `id` (itself when top-level).
int32_t TopLevelIdOf(const Schema& schema, int32_t id) {
  if (schema.TopLevelIndex(id) >= 0) return id;
  const std::string name = schema.FindColumnName(id);
  const auto* top = schema.FindFieldByName(name.substr(0, name.find('.')));
  return top ? top->id : id;
}

// An all-ones bitmap of n bits.
Result<std::shared_ptr<arrow::Buffer>> AllLive(int64_t n) {
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> bits, arrow::AllocateBitmap(n));
  arrow::bit_util::SetBitsTo(bits->mutable_data(), 0, n, true);
  return bits;
}

}  // namespace

std::vector<NestedField> RowLineageFields() {
  return {NestedField{kRowIdFieldId, kRowIdColumn, false, Type::Long(), "", std::nullopt, std::nullopt},
          NestedField{kLastUpdatedSequenceNumberFieldId, kLastUpdatedSequenceNumberColumn, false, Type::Long(), "",
                      std::nullopt, std::nullopt}};
}

namespace {

// One lineage column: the stored values where not null, else base + i (row ids: base = first_row_id
// + the batch's first position, step 1) or base (sequence numbers, step 0); all null without a base.
Result<std::shared_ptr<arrow::Array>> InheritLineage(const std::shared_ptr<arrow::Array>& stored, int64_t n,
                                                     std::optional<int64_t> base, int64_t step) {
  const auto* values = stored ? static_cast<const arrow::Int64Array*>(stored.get()) : nullptr;
  if (values && values->null_count() == 0) return stored;
  arrow::Int64Builder out;
  ARROW_RETURN_NOT_OK(out.Reserve(n));
  for (int64_t i = 0; i < n; ++i) {
    if (values && values->IsValid(i)) {
      out.UnsafeAppend(values->Value(i));
    } else if (base) {
      out.UnsafeAppend(*base + step * i);
    } else {
      out.UnsafeAppendNull();
    }
  }
  return out.Finish();
}

}  // namespace

Result<std::shared_ptr<const ScanContext>> ScanContext::Make(std::shared_ptr<io::FileIO> io,
                                                             const TableMetadata& metadata, SchemaPtr schema) {
  auto context = std::make_shared<ScanContext>();
  context->io = std::move(io);
  context->schema = std::move(schema);
  for (const auto& spec : metadata.partition_specs) context->specs[spec->spec_id()] = spec;
  context->format_version = metadata.format_version;
  if (auto it = metadata.properties.find(kNameMappingProperty); it != metadata.properties.end()) {
    LS_ASSIGN_OR_RAISE_CTX(auto mapping, NameMapping::Parse(it->second), "table property {}",
                           kNameMappingProperty);
    context->name_mapping = std::make_shared<const NameMapping>(std::move(mapping));
  }
  context->deletes = std::make_shared<DeleteLoader>(context->io, context->schema, context->specs);
  return std::shared_ptr<const ScanContext>(std::move(context));
}

// What finishing a decoded batch needs (DataFileReader::Open fills it; read-only afterwards).
struct DataFileProcessing {
  std::shared_ptr<const ScanContext> context;  // keeps what the delete states point into alive
  DataFileReadOptions options;
  std::string path;
  std::vector<int> output_index;  // read-batch column of each output column
  int row_id_index = -1, last_updated_index = -1;  // read-batch columns of the stored lineage
  std::optional<int64_t> first_row_id;               // the file's (inherited) first_row_id
  std::optional<int64_t> data_sequence_number;       // v3 only: what null sequence numbers inherit
  std::shared_ptr<arrow::Schema> output_schema;

  Result<std::optional<DataFileBatch>> Process(const std::shared_ptr<arrow::RecordBatch>& read, int64_t first) const;
};

DataFileReader::~DataFileReader() = default;

const std::shared_ptr<arrow::Schema>& DataFileReader::schema() const { return processing_->output_schema; }
const std::string& DataFileReader::path() const { return processing_->path; }

Result<std::unique_ptr<DataFileReader>> DataFileReader::Open(std::shared_ptr<const ScanContext> context,
                                                             const FileScanTask& task, DataFileReadOptions options) {
  const DataFile& file = *task.file;
  if (file.file_format != FileFormat::kParquet) {
    return Unsupported("data file {} is {}; lakesync reads Parquet data files", file.file_path,
                       FileFormatName(file.file_format));
  }
  std::unique_ptr<DataFileReader> r(new DataFileReader());
  auto p = std::make_shared<DataFileProcessing>();
  p->path = file.file_path;
  const Schema& schema = *context->schema;
  if (options.columns.empty()) {
    for (const auto& f : schema.fields()) options.columns.push_back(f.id);
  }
  if (options.delete_states.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto own, DeleteFilter::Make(*context->deletes, task));
    options.delete_states.push_back(std::move(own));
  }
  if (options.deletes == DataFileReadOptions::Deletes::kApply && options.delete_states.size() != 1) {
    return InvalidArgument("applying deletes takes one delete state, got {}", options.delete_states.size());
  }
  // Read the output columns, the filter's and the equality deletes' (top-level fields, schema order).
  std::set<int32_t> needed;
  for (int32_t id : options.columns) {
    if (schema.TopLevelIndex(id) < 0) return InvalidArgument("field id {} is not a column of the table", id);
    needed.insert(id);
  }
  for (int32_t id : ReferencedFieldIds(options.filter)) needed.insert(TopLevelIdOf(schema, id));
  for (const auto& state : options.delete_states) {
    for (int32_t id : state->required_field_ids()) needed.insert(id);
  }
  std::vector<NestedField> fields;
  std::map<int32_t, int> read_index;
  for (const auto& f : schema.fields()) {
    if (!needed.count(f.id)) continue;
    read_index[f.id] = static_cast<int>(fields.size());
    fields.push_back(f);
  }
  if (options.with_row_lineage) {
    // Read as optional columns: a file without them reads nulls, which inherit (InheritLineage).
    for (auto& f : RowLineageFields()) {
      (f.id == kRowIdFieldId ? p->row_id_index : p->last_updated_index) = static_cast<int>(fields.size());
      fields.push_back(std::move(f));
    }
    p->first_row_id = file.first_row_id;
    if (context->format_version >= 3) p->data_sequence_number = task.data_sequence_number;
  }
  auto read_schema = std::make_shared<const Schema>(schema.schema_id(), fields);
  std::vector<NestedField> output_fields;
  for (int32_t id : options.columns) {
    p->output_index.push_back(read_index.at(id));
    output_fields.push_back(schema.fields()[static_cast<size_t>(schema.TopLevelIndex(id))]);
  }
  ARROW_ASSIGN_OR_RAISE(p->output_schema,
                        ToArrowSchema(Schema(schema.schema_id(), output_fields), options.uuid_extension));
  if (options.with_file_and_pos) {
    ARROW_ASSIGN_OR_RAISE(p->output_schema, p->output_schema->AddField(p->output_schema->num_fields(),
                                                                         arrow::field(kFileColumn, arrow::utf8(), false)));
    ARROW_ASSIGN_OR_RAISE(p->output_schema, p->output_schema->AddField(p->output_schema->num_fields(),
                                                                         arrow::field(kPosColumn, arrow::int64(), false)));
  }
  if (options.with_row_lineage) {
    for (const auto& f : RowLineageFields()) {
      ARROW_ASSIGN_OR_RAISE(auto field, ToArrowField(f));
      ARROW_ASSIGN_OR_RAISE(p->output_schema, p->output_schema->AddField(p->output_schema->num_fields(), field));
    }
  }

  parquet_io::ParquetReadOptions read_options;
  read_options.batch_size = options.batch_rows;
  read_options.use_threads = options.use_threads;
  read_options.name_mapping = context->name_mapping;
  auto spec = context->specs.find(file.spec_id);
  read_options.constants = IdentityPartitionValues(file, spec == context->specs.end() ? nullptr : spec->second.get());
  read_options.v3_promotions = context->format_version >= 3;
  read_options.row_groups = options.row_groups;
  // The file must be what its manifest entry says (row count, columns with values): a mismatch is a
  // damaged table, reported instead of read.
  parquet_io::ExpectManifestEntry(read_options, file);
  LS_ASSIGN_OR_RAISE_CTX(auto input, context->io->OpenInput(file.file_path, file.file_size_in_bytes),
                         "opening data file {}", file.file_path);
  ARROW_ASSIGN_OR_RAISE(r->reader_, parquet_io::ParquetDataReader::Open(std::move(input), file.file_path,
                                                                        read_schema, std::move(read_options)));
  p->context = std::move(context);
  // A unit of work on the pool copies columns on its own thread (see ParquetDataReader::Open).
  options.use_threads = ColumnThreads(options.use_threads);
  p->options = std::move(options);
  r->processing_ = std::move(p);
  return r;
}

void DataFileReader::set_use_threads(bool use_threads) {
  // A copy: batches decoded earlier may still be finishing with the current one.
  auto p = std::make_shared<DataFileProcessing>(*processing_);
  p->options.use_threads = ColumnThreads(use_threads);
  reader_->set_use_threads(p->options.use_threads);
  processing_ = std::move(p);
}

Result<std::optional<DataFileBatch>> DataFileReader::Next() {
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto decoded, NextDecoded());
    if (!decoded) return std::nullopt;
    ARROW_ASSIGN_OR_RAISE(auto out, decoded->Finish());
    if (out) return out;
  }
}

Result<std::optional<DecodedDataFileBatch>> DataFileReader::NextDecoded() {
  ARROW_ASSIGN_OR_RAISE(auto decoded, reader_->NextDecoded());
  if (!decoded) return std::nullopt;
  return DecodedDataFileBatch{std::move(*decoded), processing_};
}

Result<std::optional<DataFileBatch>> DecodedDataFileBatch::Finish() const {
  ARROW_ASSIGN_OR_RAISE(auto positioned, decoded.Convert());
  return processing->Process(positioned.batch, positioned.first_row_position);
}

Result<std::optional<DataFileBatch>> DataFileProcessing::Process(const std::shared_ptr<arrow::RecordBatch>& read,
                                                                 int64_t first) const {
  const int64_t n = read->num_rows();
  // Live rows per delete state (null: all live), then the filter on top of each.
  std::vector<std::shared_ptr<arrow::Buffer>> live(options.delete_states.size());
  for (size_t s = 0; s < options.delete_states.size(); ++s) {
    if (options.delete_states[s]->empty()) continue;
    ARROW_ASSIGN_OR_RAISE(auto bits, AllLive(n));
    ARROW_ASSIGN_OR_RAISE(int64_t cleared, options.delete_states[s]->MarkDeleted(*read, first, bits->mutable_data()));
    if (cleared > 0) live[s] = std::move(bits);
  }
  if (options.filter.op() != Operation::kTrue) {
    ARROW_ASSIGN_OR_RAISE(auto selection, EvaluateRowFilter(options.filter, *read));
    // The selection is never null (EvaluateRowFilter's contract), so its values are the bitmap.
    if (selection->true_count() != n) {
      const uint8_t* selected = selection->values()->data();
      for (auto& bits : live) {
        if (bits) {
          arrow::internal::BitmapAnd(bits->data(), 0, selected, selection->offset(), n, 0, bits->mutable_data());
        } else {
          ARROW_ASSIGN_OR_RAISE(bits, arrow::internal::CopyBitmap(arrow::default_memory_pool(), selected,
                                                                  selection->offset(), n));
        }
      }
    }
  }
  // Project to the output columns (and _file/_pos).
  arrow::ArrayVector columns;
  for (size_t i = 0; i < output_index.size(); ++i) {
    const auto& column = read->column(output_index[i]);
    const auto& type = output_schema->field(static_cast<int>(i))->type();
    columns.push_back(column->type()->Equals(*type) ? column : arrow::MakeArray(RetypeArrayData(column->data(), type)));
  }
  if (options.with_file_and_pos) {
    arrow::StringBuilder paths;
    ARROW_RETURN_NOT_OK(paths.Reserve(n));
    ARROW_RETURN_NOT_OK(paths.ReserveData(n * static_cast<int64_t>(path.size())));
    arrow::Int64Builder positions;
    ARROW_RETURN_NOT_OK(positions.Reserve(n));
    for (int64_t i = 0; i < n; ++i) {
      paths.UnsafeAppend(path);
      positions.UnsafeAppend(first + i);
    }
    ARROW_ASSIGN_OR_RAISE(auto path_array, paths.Finish());
    ARROW_ASSIGN_OR_RAISE(auto pos_array, positions.Finish());
    columns.push_back(path_array);
    columns.push_back(pos_array);
  }
  if (options.with_row_lineage) {
    std::optional<int64_t> first_id;
    if (first_row_id) first_id = *first_row_id + first;
    ARROW_ASSIGN_OR_RAISE(auto ids, InheritLineage(read->column(row_id_index), n, first_id, 1));
    ARROW_ASSIGN_OR_RAISE(auto seqs, InheritLineage(read->column(last_updated_index), n, data_sequence_number, 0));
    columns.push_back(std::move(ids));
    columns.push_back(std::move(seqs));
  }
  auto batch = arrow::RecordBatch::Make(output_schema, n, std::move(columns));
  DataFileBatch out;
  out.first_row_position = first;
  if (options.deletes == DataFileReadOptions::Deletes::kMask) {
    out.batch = std::move(batch);
    out.live = std::move(live);
    return out;
  }
  if (!live[0]) {
    out.batch = std::move(batch);
    return out;
  }
  ARROW_ASSIGN_OR_RAISE(out.batch, SelectRows(*batch, *live[0], ColumnThreads(options.use_threads)));
  if (out.batch->num_rows() == 0) return std::nullopt;
  return out;
}

// The rows of `columns` whose bit is set in `keep`. Runs of kept rows are found once per batch and
// each column is copied by its Selector; with use_threads the columns are copied in parallel on
// Arrow's CPU pool. The copy is what deletes cost a scan: on one core, after the columns were decoded
// on all of them, it would add its whole time to the scan's.
Result<std::shared_ptr<arrow::RecordBatch>> SelectRows(const arrow::RecordBatch& batch, const arrow::Buffer& keep,
                                                     bool use_threads) {
  const int64_t n = batch.num_rows();
  arrow::ArrayVector columns = batch.columns();
  const auto& schema = batch.schema();
  std::vector<RowRun> runs;
  int64_t kept = 0;
  arrow::internal::SetBitRunReader run_reader(keep.data(), 0, n);
  for (auto run = run_reader.NextRun(); run.length != 0; run = run_reader.NextRun()) {
    runs.push_back(RowRun{run.position, run.length});
    kept += run.length;
  }
  if (kept == 0) {
    for (auto& c : columns) c = c->Slice(0, 0);
    return arrow::RecordBatch::Make(schema, 0, std::move(columns));
  }
  // Copying run by run costs a call per run and column; when runs are short (dense deletes) Take or
  // Filter is cheaper. Measured on the benchmark table (docs/benchmarks.md): runs win at 1% deleted
  // (average run ~100 rows), not at 10% (~9 rows).
  constexpr int64_t kMinAverageRunForCopy = 16;
  const bool long_runs = kept >= kMinAverageRunForCopy * static_cast<int64_t>(runs.size());
  std::vector<Selector> selectors;
  for (const auto& c : columns) selectors.push_back(SelectorFor(*c, long_runs));
  std::shared_ptr<arrow::Array> indices;  // for Take, made only when a column needs it
  if (std::find(selectors.begin(), selectors.end(), Selector::kTake) != selectors.end()) {
    ARROW_ASSIGN_OR_RAISE(indices, RunIndices(runs, kept, n));
  }
  // The keep bitmap as Filter's mask (not owned: it lives through this call).
  const arrow::BooleanArray mask(n, std::make_shared<arrow::Buffer>(keep.data(), keep.size()));
  // Batches are at most batch_rows long; a copy of a small one is not worth a task hand-off.
  constexpr int64_t kMinRowsForThreads = 4096;
  const bool threads = use_threads && columns.size() > 1 && n >= kMinRowsForThreads;
  arrow::ArrayVector out(columns.size());
  ARROW_RETURN_NOT_OK(arrow::internal::OptionalParallelFor(
      threads, static_cast<int>(columns.size()), [&](int i) -> Status {
        const auto c = static_cast<size_t>(i);
        ARROW_ASSIGN_OR_RAISE(out[c], SelectColumn(selectors[c], columns[c], runs, kept, indices, mask));
        return Status::OK();
      }));
  return arrow::RecordBatch::Make(schema, kept, std::move(out));
}

}  // namespace lakesync::iceberg
