#include "lakesync/formats/parquet/parquet_data_reader.h"

#include "lakesync/common/arrow_compute.h"
#include "lakesync/common/column_threads.h"
#include "lakesync/formats/parquet/parquet_properties.h"

#include <arrow/array.h>
#include <arrow/array/util.h>
#include <arrow/compute/cast.h>
#include <arrow/extension_type.h>
#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>
#include <arrow/scalar.h>
#include <arrow/table.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/statistics.h>

#include <algorithm>

#include "lakesync/common/constant_column.h"
#include "lakesync/formats/parquet/arrow_layout_internal.h"
#include "lakesync/formats/parquet/arrow_literal.h"
#include "lakesync/formats/parquet/parquet_stats_internal.h"
#include "lakesync/formats/parquet/schema_projection.h"
#include "lakesync/iceberg/model/arrow_schema.h"

namespace lakesync::parquet_io {

using iceberg::TypeId;

struct ParquetDataReader::Plan {
  struct Node {
    const iceberg::NestedField* target = nullptr;
    std::shared_ptr<arrow::DataType> target_type;
    bool present = false;
    std::string file_name;                  // the field's name in the file at this level
    std::shared_ptr<const ConstantColumn> fill;  // value for every row when absent, made once per file
    std::vector<Node> children;             // struct fields; list {element}; map {key, value}
  };
  struct StatColumn {
    int32_t field_id;
    int leaf;
    const iceberg::Type* type;
  };
  std::vector<Node> top;
  std::vector<StatColumn> stat_columns;
};

namespace {

using Node = ParquetDataReader::Plan::Node;
using Plan = ParquetDataReader::Plan;

const arrow::DataType& Storage(const arrow::DataType& t) {
  if (t.id() == arrow::Type::EXTENSION) return *static_cast<const arrow::ExtensionType&>(t).storage_type();
  return t;
}

int LeafCount(const arrow::DataType& type) {
  const arrow::DataType& t = Storage(type);
  if (t.num_fields() == 0) return 1;
  int n = 0;
  for (const auto& f : t.fields()) n += LeafCount(*f->type());
  return n;
}

bool AnyFieldId(const arrow::FieldVector& fields) {
  for (const auto& f : fields) {
    if (iceberg::ArrowFieldId(*f) >= 0) return true;
    if (AnyFieldId(Storage(*f->type()).fields())) return true;
  }
  return false;
}

bool IsListLike(arrow::Type::type id) { return id == arrow::Type::LIST || id == arrow::Type::LARGE_LIST; }

// Whether a file column of Arrow type `file` may be read as Iceberg `target` (same type, or an
// allowed promotion, or a storage variant Arrow readers produce for it).
bool Readable(const arrow::DataType& file_in, const iceberg::Type& target, bool v3_promotions) {
  const arrow::DataType& file = Storage(file_in);
  using A = arrow::Type;
  const A::type f = file.id();
  if (f == A::NA) return true;  // an all-null column reads as nulls of any type
  // Small-dictionary columns are read as dictionaries (SmallDictionaryColumns) and cast to their values.
  if (f == A::DICTIONARY) {
    return Readable(*static_cast<const arrow::DictionaryType&>(file).value_type(), target, v3_promotions);
  }
  switch (target.id()) {
    case TypeId::kBoolean: return f == A::BOOL;
    case TypeId::kInt: return f == A::INT32 || f == A::INT16 || f == A::INT8 || f == A::UINT8 || f == A::UINT16;
    case TypeId::kLong:
      return f == A::INT64 || f == A::INT32 || f == A::INT16 || f == A::INT8 || f == A::UINT8 || f == A::UINT16 ||
             f == A::UINT32;
    case TypeId::kFloat: return f == A::FLOAT || f == A::HALF_FLOAT;
    case TypeId::kDouble: return f == A::DOUBLE || f == A::FLOAT || f == A::HALF_FLOAT;
    case TypeId::kDecimal: {
      if (f != A::DECIMAL128 && f != A::DECIMAL64 && f != A::DECIMAL32 && f != A::DECIMAL256) return false;
      const auto& d = static_cast<const arrow::DecimalType&>(file);
      return d.scale() == target.scale() && d.precision() <= target.precision();
    }
    case TypeId::kDate: return f == A::DATE32 || f == A::DATE64;
    case TypeId::kTime: return f == A::TIME32 || f == A::TIME64;
    // v3 promotes date to timestamp and timestamp_ns, not to the zoned types.
    case TypeId::kTimestamp:
    case TypeId::kTimestampNs: return f == A::TIMESTAMP || (v3_promotions && f == A::DATE32);
    case TypeId::kTimestampTz:
    case TypeId::kTimestampTzNs: return f == A::TIMESTAMP;
    case TypeId::kString:
    case TypeId::kBinary:
      return f == A::STRING || f == A::LARGE_STRING || f == A::STRING_VIEW || f == A::BINARY || f == A::LARGE_BINARY ||
             f == A::BINARY_VIEW;
    case TypeId::kUuid:
      return f == A::FIXED_SIZE_BINARY && static_cast<const arrow::FixedSizeBinaryType&>(file).byte_width() == 16;
    case TypeId::kFixed:
      return f == A::FIXED_SIZE_BINARY &&
             static_cast<const arrow::FixedSizeBinaryType&>(file).byte_width() == target.length();
    case TypeId::kUnknown: return true;
    default: return false;
  }
}

class PlanBuilder {
 public:
  PlanBuilder(bool by_id, std::string location, const ParquetReadOptions& options)
      : by_id_(by_id), location_(std::move(location)), constants_(options.constants),
        v3_promotions_(options.v3_promotions), convert_by_value_(options.convert_by_value),
        batch_size_(options.batch_size), pool_(options.pool) {}

  std::vector<int> leaves;
  std::vector<Plan::StatColumn> stats;

  // The column an absent field reads as: one value, made once for the file's batches.
  std::shared_ptr<const ConstantColumn> Fill(std::shared_ptr<arrow::Scalar> value) const {
    return std::make_shared<const ConstantColumn>(std::move(value), batch_size_, pool_);
  }

  // Builds the node for `target` matched to `file` (nullptr when absent).
  Result<Node> Build(const iceberg::NestedField& target, const arrow::Field* file, int first_leaf,
                     const std::vector<MappedField>* scope, const std::string& path, bool struct_path) {
    Node node;
    node.target = &target;
    LS_ASSIGN_OR_RAISE_CTX(node.target_type, iceberg::ToArrowType(*target.type), "column '{}'", path);
    if (file == nullptr) {
      if (auto it = constants_.find(target.id); it != constants_.end() && !it->second.is_null()) {
        LS_ASSIGN_OR_RAISE_CTX(auto lit, iceberg::PromoteLiteral(it->second, *target.type),
                               "{}: the partition value of column '{}'", location_, path);
        LS_ASSIGN_OR_RAISE_CTX(auto value, LiteralToScalar(lit, *target.type), "{}: the partition value of column '{}'",
                               location_, path);
        node.fill = Fill(std::move(value));
      } else if (target.initial_default && !target.initial_default->is_null()) {
        LS_ASSIGN_OR_RAISE_CTX(auto lit, iceberg::Literal::FromJson(*target.type, *target.initial_default),
                               "initial-default of column '{}'", path);
        LS_ASSIGN_OR_RAISE_CTX(auto value, LiteralToScalar(lit, *target.type), "initial-default of column '{}'", path);
        node.fill = Fill(std::move(value));
      } else {
        if (target.required && target.type->id() != TypeId::kUnknown) {
          return InvalidArgument("{}: required column '{}' (id {}) is missing and has no partition value or "
                                 "initial-default", location_, path, target.id);
        }
        node.fill = Fill(arrow::MakeNullScalar(node.target_type));
      }
      return node;
    }
    node.present = true;
    node.file_name = file->name();
    const arrow::DataType& ftype = Storage(*file->type());
    const iceberg::Type& ttype = *target.type;
    auto mismatch = [&]() {
      return InvalidArgument("{}: column '{}' (id {}) has type {} in the file, which cannot be read as {}", location_,
                             path, target.id, file->type()->ToString(), ttype.ToString());
    };
    switch (ttype.id()) {
      case TypeId::kStruct: {
        if (ftype.id() != arrow::Type::STRUCT) return mismatch();
        bool any = false;
        for (const auto& child : ttype.fields()) {
          int child_first = first_leaf;
          const arrow::Field* match = nullptr;
          const MappedField* mapped = nullptr;
          for (const auto& fc : ftype.fields()) {
            if (ResolveId(*fc, scope, &mapped) == child.id) {
              match = fc.get();
              break;
            }
            child_first += LeafCount(*fc->type());
          }
          const auto* child_scope = match && mapped ? &mapped->fields : nullptr;
          ARROW_ASSIGN_OR_RAISE(auto cn, Build(child, match, child_first, child_scope, path + "." + child.name,
                                               struct_path));
          any = any || cn.present;
          node.children.push_back(std::move(cn));
        }
        // Nothing selected below: read one leaf anyway, for the struct's own nulls.
        if (!any) leaves.push_back(first_leaf);
        return node;
      }
      case TypeId::kList: {
        if (!IsListLike(ftype.id())) return mismatch();
        const auto& elem = *ftype.field(0);
        ARROW_ASSIGN_OR_RAISE(auto cn, Build(ttype.element(), &elem, first_leaf, ChildScope(scope, "element"),
                                             path + ".element", false));
        node.children.push_back(std::move(cn));
        return node;
      }
      case TypeId::kMap: {
        if (ftype.id() != arrow::Type::MAP) return mismatch();
        const auto& m = static_cast<const arrow::MapType&>(ftype);
        ARROW_ASSIGN_OR_RAISE(auto kn, Build(ttype.key(), m.key_field().get(), first_leaf, ChildScope(scope, "key"),
                                             path + ".key", false));
        ARROW_ASSIGN_OR_RAISE(auto vn, Build(ttype.value(), m.item_field().get(),
                                             first_leaf + LeafCount(*m.key_type()), ChildScope(scope, "value"),
                                             path + ".value", false));
        node.children.push_back(std::move(kn));
        node.children.push_back(std::move(vn));
        return node;
      }
      default: {
        if (ftype.num_fields() != 0) return mismatch();
        const bool readable = Readable(*file->type(), ttype, v3_promotions_);
        if (!readable && !(convert_by_value_ && arrow::compute::CanCast(ftype, *node.target_type))) return mismatch();
        leaves.push_back(first_leaf);
        // A date read as a timestamp has date statistics, which are not the target type's bounds;
        // neither are the statistics of a column converted value by value.
        const bool promoted_date = ftype.id() == arrow::Type::DATE32 && ttype.id() != TypeId::kDate;
        if (struct_path && !promoted_date && readable) stats.push_back(Plan::StatColumn{target.id, first_leaf, &ttype});
        return node;
      }
    }
  }

  // The Iceberg id of a file field at a level: its Parquet field id, or its name-mapping id.
  int32_t ResolveId(const arrow::Field& field, const std::vector<MappedField>* scope, const MappedField** mapped) {
    *mapped = nullptr;
    if (by_id_) return iceberg::ArrowFieldId(field);
    if (scope == nullptr) return -1;
    const MappedField* m = NameMapping::Find(*scope, field.name());
    *mapped = m;
    return m && m->field_id ? *m->field_id : -1;
  }

  // The mapping scope of a list element or map key/value, which mappings name by role.
  const std::vector<MappedField>* ChildScope(const std::vector<MappedField>* scope, std::string_view role) {
    if (by_id_ || scope == nullptr) return nullptr;
    // `scope` here is the children of the list/map field itself.
    const MappedField* m = NameMapping::Find(*scope, role);
    return m ? &m->fields : nullptr;
  }

 private:
  bool by_id_;
  std::string location_;
  const std::map<int32_t, iceberg::Literal>& constants_;
  bool v3_promotions_;
  bool convert_by_value_;
  int64_t batch_size_;
  arrow::MemoryPool* pool_;
};

Result<std::shared_ptr<arrow::ArrayData>> ConvertNode(const Node& node, const std::shared_ptr<arrow::ArrayData>& file,
                                                      int64_t length, arrow::MemoryPool* pool) {
  if (!node.present || file == nullptr) {
    ARROW_ASSIGN_OR_RAISE(auto arr, node.fill->Get(length));
    return arr->data();
  }
  const iceberg::Type& ttype = *node.target->type;
  switch (ttype.id()) {
    case TypeId::kStruct: {
      const auto& ftype = static_cast<const arrow::StructType&>(*file->type);
      auto out = file->Copy();
      out->type = node.target_type;
      out->child_data.clear();
      const int64_t child_length = file->offset + file->length;
      for (const auto& child : node.children) {
        std::shared_ptr<arrow::ArrayData> cf;
        if (child.present) {
          const int idx = ftype.GetFieldIndex(child.file_name);
          if (idx < 0) return Corrupt("column '{}' lost field '{}' while reading", node.target->name, child.file_name);
          cf = file->child_data[static_cast<size_t>(idx)];
        }
        ARROW_ASSIGN_OR_RAISE(auto conv, ConvertNode(child, cf, cf ? cf->length : child_length, pool));
        out->child_data.push_back(std::move(conv));
      }
      return out;
    }
    case TypeId::kList: {
      std::shared_ptr<arrow::ArrayData> list = file;
      if (file->type->id() == arrow::Type::LARGE_LIST) {
        const auto& lt = static_cast<const arrow::LargeListType&>(*file->type);
        ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*arrow::MakeArray(file), arrow::list(lt.value_field())));
        list = cast->data();
      }
      auto out = list->Copy();
      out->type = node.target_type;
      const auto& values = list->child_data[0];
      ARROW_ASSIGN_OR_RAISE(auto conv, ConvertNode(node.children[0], values, values->length, pool));
      out->child_data = {conv};
      return out;
    }
    case TypeId::kMap: {
      const auto& entries = file->child_data[0];
      auto new_entries = entries->Copy();
      new_entries->type = static_cast<const arrow::MapType&>(*node.target_type).value_type();
      const auto& keys = entries->child_data[0];
      const auto& items = entries->child_data[1];
      ARROW_ASSIGN_OR_RAISE(auto k, ConvertNode(node.children[0], keys, keys->length, pool));
      ARROW_ASSIGN_OR_RAISE(auto v, ConvertNode(node.children[1], items, items->length, pool));
      new_entries->child_data = {k, v};
      auto out = file->Copy();
      out->type = node.target_type;
      out->child_data = {new_entries};
      return out;
    }
    default: {
      if (internal::SameLayout(*file->type, *node.target_type)) return internal::Retype(file, node.target_type);
      auto options = arrow::compute::CastOptions::Safe(node.target_type);
      // Finer timestamps than the Iceberg unit (ns files read as µs, INT96) lose sub-unit digits.
      options.allow_time_truncate = true;
      std::shared_ptr<arrow::Array> in = arrow::MakeArray(file);
      if (in->type_id() == arrow::Type::EXTENSION) in = static_cast<const arrow::ExtensionArray&>(*in).storage();
      arrow::compute::ExecContext ctx(pool);
      LS_ASSIGN_OR_RAISE_CTX(auto cast, arrow::compute::Cast(*in, node.target_type, options, &ctx),
                             "{} values read as {}", in->type()->ToString(), node.target_type->ToString());
      return cast->data();
    }
  }
}

// A parquet-cpp exception as a status: failures of the underlying stream keep their status (and
// kind); everything else means the bytes are not valid Parquet.
Status FromParquetException(const std::exception& e, const std::string& location, std::string_view what) {
  if (dynamic_cast<const parquet::ParquetInvalidOrCorruptedFileException*>(&e) == nullptr) {
    if (const auto* se = dynamic_cast<const parquet::ParquetStatusException*>(&e); se && se->status().IsIOError()) {
      return WithContext(se->status(), fmt::format("{} {}", what, location));
    }
  }
  return Corrupt("{} {}: {}", what, location, e.what());
}

bool HasNanosTimestamp(const iceberg::Type& type) {
  if (type.id() == TypeId::kTimestampNs || type.id() == TypeId::kTimestampTzNs) return true;
  for (const auto& f : type.fields()) {
    if (HasNanosTimestamp(*f.type)) return true;
  }
  return false;
}

}  // namespace

// What converting a decoded batch needs; the batches still to be converted keep it alive.
class BatchConversion {
 public:
  iceberg::SchemaPtr read_schema;  // the plan's nodes point into it
  std::shared_ptr<const Plan> plan;
  std::shared_ptr<arrow::Schema> schema;
  std::string location;
  arrow::MemoryPool* pool = nullptr;

  // A batch of `rows` rows in `schema`: the file's columns converted, the absent ones filled
  // (`file_batch` null: every column is absent).
  Result<std::shared_ptr<arrow::RecordBatch>> Convert(const arrow::RecordBatch* file_batch, int64_t rows) const {
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (const auto& node : plan->top) {
      std::shared_ptr<arrow::ArrayData> data;
      if (node.present && file_batch) {
        const int idx = file_batch->schema()->GetFieldIndex(node.file_name);
        if (idx < 0) return Corrupt("{}: column '{}' missing from a decoded batch", location, node.file_name);
        data = file_batch->column_data(idx);
      }
      LS_ASSIGN_OR_RAISE_CTX(auto conv, ConvertNode(node, data, rows, pool), "reading column '{}' of {}",
                             node.target->name, location);
      columns.push_back(arrow::MakeArray(conv));
    }
    return arrow::RecordBatch::Make(schema, rows, std::move(columns));
  }
};

Result<PositionedBatch> DecodedBatch::Convert() const {
  ARROW_ASSIGN_OR_RAISE(auto batch, conversion->Convert(file_batch.get(), num_rows));
  return PositionedBatch{std::move(batch), first_row_position, row_group};
}

ParquetDataReader::ParquetDataReader() = default;
ParquetDataReader::~ParquetDataReader() = default;

Result<std::unique_ptr<ParquetDataReader>> ParquetDataReader::Open(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                                   std::string location,
                                                                   iceberg::SchemaPtr read_schema,
                                                                   ParquetReadOptions options) {
  // The casts of ConvertNode (and the Take/Filter of the readers above) need Arrow's compute functions;
  // batches may convert on pool threads, so they are registered before the first one.
  ARROW_RETURN_NOT_OK(EnsureArrowCompute());
  if (!file) return InvalidArgument("no input file given for {}", location);
  if (!read_schema) return InvalidArgument("no read schema given for {}", location);
  if (options.batch_size <= 0) return InvalidArgument("batch size must be positive, got {}", options.batch_size);
  std::unique_ptr<ParquetDataReader> r(new ParquetDataReader());
  r->location_ = std::move(location);
  r->read_schema_ = std::move(read_schema);
  r->options_ = std::move(options);
  // A reader used by a unit of work on the pool decodes on that thread (common/executor.h).
  r->options_.use_threads = ColumnThreads(r->options_.use_threads);
  r->file_ = std::move(file);
  arrow::MemoryPool* pool = r->options_.pool ? r->options_.pool : arrow::default_memory_pool();
  r->options_.pool = pool;
  LS_ASSIGN_OR_RAISE_CTX(r->arrow_schema_, iceberg::ToArrowSchema(*r->read_schema_), "reading {}", r->location_);

  parquet::ArrowReaderProperties arrow_props(r->options_.use_threads);
  arrow_props.set_batch_size(r->options_.batch_size);
  // INT96 values keep nanoseconds only when the read schema has a nanosecond timestamp; the
  // microsecond unit reaches far more years (ns overflow outside 1677..2262).
  const bool nanos = HasNanosTimestamp(*r->read_schema_->as_struct());
  arrow_props.set_coerce_int96_timestamp_unit(nanos ? arrow::TimeUnit::NANO : arrow::TimeUnit::MICRO);
  std::shared_ptr<arrow::Schema> file_schema;
  try {
    auto pq = parquet::ParquetFileReader::Open(r->file_, ParquetReaderProperties(pool));
    // The row groups asked for (all by default); the statistics filter below may drop some.
    const parquet::FileMetaData& footer = *pq->metadata();
    if (r->options_.row_groups) {
      for (int rg : *r->options_.row_groups) {
        if (rg < 0 || rg >= footer.num_row_groups()) {
          return InvalidArgument("{} has {} row groups, row group {} was asked for", r->location_,
                                 footer.num_row_groups(), rg);
        }
      }
      r->selected_ = *r->options_.row_groups;
    } else {
      for (int rg = 0; rg < footer.num_row_groups(); ++rg) r->selected_.push_back(rg);
    }
    // Small-dictionary string columns of those row groups decode as Arrow dictionaries; ConvertNode
    // casts them back.
    for (int column : SmallDictionaryColumns(footer, r->selected_)) arrow_props.set_read_dictionary(column, true);
    ARROW_ASSIGN_OR_RAISE(r->reader_, parquet::arrow::FileReader::Make(pool, std::move(pq), arrow_props));
    Status st = r->reader_->GetSchema(&file_schema);
    if (!st.ok()) return Corrupt("reading the schema of Parquet file {}: {}", r->location_, st.message());
  } catch (const std::exception& e) {
    return FromParquetException(e, r->location_, "opening Parquet file");
  }

  std::shared_ptr<parquet::FileMetaData> md = r->reader_->parquet_reader()->metadata();
  r->num_rows_ = md->num_rows();
  if (r->options_.expected_record_count && *r->options_.expected_record_count != r->num_rows_) {
    return Corrupt("Parquet file {} holds {} rows but its manifest entry says {}", r->location_, r->num_rows_,
                   *r->options_.expected_record_count);
  }
  try {
    int64_t first = 0;
    for (int i = 0; i < md->num_row_groups(); ++i) {
      auto rg = md->RowGroup(i);
      RowGroupInfo info;
      info.index = i;
      info.first_row = first;
      info.num_rows = rg->num_rows();
      info.compressed_size = rg->total_compressed_size();
      if (rg->num_columns() > 0) {
        auto c0 = rg->ColumnChunk(0);
        info.start_offset = c0->data_page_offset();
        if (c0->has_dictionary_page() && c0->dictionary_page_offset() > 0 &&
            c0->dictionary_page_offset() < info.start_offset) {
          info.start_offset = c0->dictionary_page_offset();
        }
      }
      first += info.num_rows;
      r->row_groups_.push_back(info);
    }
  } catch (const std::exception& e) {
    return FromParquetException(e, r->location_, "reading the footer of Parquet file");
  }

  // Plan: match read-schema fields to file columns.
  r->by_field_id_ = !r->options_.ignore_field_ids && AnyFieldId(file_schema->fields());
  std::shared_ptr<const NameMapping> mapping = r->options_.name_mapping;
  if (!r->by_field_id_ && !mapping) mapping = std::make_shared<NameMapping>(NameMapping::FromSchema(*r->read_schema_));
  PlanBuilder builder(r->by_field_id_, r->location_, r->options_);
  r->plan_ = std::make_shared<Plan>();
  const std::vector<MappedField>* top_scope = mapping ? &mapping->fields() : nullptr;
  for (const auto& target : r->read_schema_->fields()) {
    int first_leaf = 0;
    const arrow::Field* match = nullptr;
    const MappedField* mapped = nullptr;
    for (const auto& ff : file_schema->fields()) {
      if (builder.ResolveId(*ff, top_scope, &mapped) == target.id) {
        match = ff.get();
        break;
      }
      first_leaf += LeafCount(*ff->type());
    }
    if (!match && r->options_.expected_field_ids.count(target.id)) {
      return Corrupt("Parquet file {} has no column for field '{}' (id {}), which its manifest entry records "
                     "metrics for: the file's schema is damaged",
                     r->location_, target.name, target.id);
    }
    const auto* scope = match && mapped ? &mapped->fields : nullptr;
    ARROW_ASSIGN_OR_RAISE(auto node, builder.Build(target, match, first_leaf, scope, target.name, true));
    r->plan_->top.push_back(std::move(node));
  }
  r->column_indices_ = builder.leaves;
  std::sort(r->column_indices_.begin(), r->column_indices_.end());
  r->column_indices_.erase(std::unique(r->column_indices_.begin(), r->column_indices_.end()), r->column_indices_.end());
  r->plan_->stat_columns = builder.stats;
  auto conversion = std::make_shared<BatchConversion>();
  conversion->read_schema = r->read_schema_;
  conversion->plan = r->plan_;
  conversion->schema = r->arrow_schema_;
  conversion->location = r->location_;
  conversion->pool = pool;
  r->conversion_ = std::move(conversion);

  // Row groups whose statistics say the filter keeps none of their rows are not read.
  if (r->options_.row_group_filter) {
    std::vector<int> kept;
    for (int rg : r->selected_) {
      ARROW_ASSIGN_OR_RAISE(auto stats, r->StatsFor(rg));
      if (r->options_.row_group_filter(stats)) kept.push_back(rg);
    }
    r->selected_ = std::move(kept);
  }
  return r;
}

std::vector<int> ParquetDataReader::RowGroupsInRange(const std::vector<RowGroupInfo>& row_groups, int64_t start,
                                                    int64_t length) {
  std::vector<int> out;
  for (const auto& info : row_groups) {
    if (info.start_offset >= start && info.start_offset - start < length) out.push_back(info.index);
  }
  return out;
}

void ParquetDataReader::set_use_threads(bool use_threads) {
  options_.use_threads = ColumnThreads(use_threads);
  reader_->set_use_threads(options_.use_threads);
}

Result<RowGroupStats> ParquetDataReader::StatsFor(int row_group) const {
  if (row_group < 0 || row_group >= static_cast<int>(row_groups_.size())) {
    return InvalidArgument("{} has no row group {}", location_, row_group);
  }
  RowGroupStats out;
  out.index = row_group;
  out.num_rows = row_groups_[static_cast<size_t>(row_group)].num_rows;
  try {
    auto rg = reader_->parquet_reader()->metadata()->RowGroup(row_group);
    for (const auto& sc : plan_->stat_columns) {
      auto chunk = rg->ColumnChunk(sc.leaf);
      ColumnChunkStats cs;
      cs.value_count = chunk->num_values();
      if (chunk->is_stats_set()) {
        auto stats = chunk->statistics();
        if (stats->HasNullCount()) cs.null_count = stats->null_count();
        auto bounds = internal::BoundsFromStatistics(*stats, *sc.type);
        cs.lower = bounds.min;
        cs.upper = bounds.max;
      }
      out.columns[sc.field_id] = std::move(cs);
    }
  } catch (const std::exception& e) {
    return FromParquetException(e, location_, "reading statistics of Parquet file");
  }
  return out;
}

Result<std::optional<PositionedBatch>> ParquetDataReader::Next() {
  ARROW_ASSIGN_OR_RAISE(auto decoded, NextDecoded());
  if (!decoded) return std::nullopt;
  ARROW_ASSIGN_OR_RAISE(auto batch, decoded->Convert());
  return std::optional<PositionedBatch>(std::move(batch));
}

Result<std::optional<DecodedBatch>> ParquetDataReader::NextDecoded() {
  while (true) {
    if (current_) {
      std::shared_ptr<arrow::RecordBatch> file_batch;
      Status st;
      try {
        st = current_->ReadNext(&file_batch);
      } catch (const std::exception& e) {
        return FromParquetException(e, location_, "reading Parquet file");
      }
      if (!st.ok()) {
        if (KindOf(st) == ErrorKind::kIO && st.detail() != nullptr) {
          return WithContext(st, fmt::format("reading row group {} of {}", current_row_group_, location_));
        }
        return Corrupt("reading row group {} of Parquet file {}: {}", current_row_group_, location_, st.message());
      }
      if (file_batch) {
        const int64_t rows = file_batch->num_rows();
        DecodedBatch out{std::move(file_batch), rows, current_position_, current_row_group_, conversion_};
        current_position_ += rows;
        return out;
      }
      current_.reset();
      // Positions (deletion vectors, position deletes) count on every row of a row group being read:
      // a damaged page header that ends the column early must not shift or drop rows silently.
      const RowGroupInfo& done = row_groups_[static_cast<size_t>(current_row_group_)];
      if (current_position_ - done.first_row != done.num_rows) {
        return Corrupt("row group {} of Parquet file {} yielded {} rows, its footer says {}", current_row_group_,
                       location_, current_position_ - done.first_row, done.num_rows);
      }
    }
    if (current_remaining_ > 0) {
      const int64_t rows = std::min(current_remaining_, options_.batch_size);
      DecodedBatch out{nullptr, rows, current_position_, current_row_group_, conversion_};
      current_position_ += rows;
      current_remaining_ -= rows;
      return out;
    }
    if (next_selected_ >= selected_.size()) return std::nullopt;
    current_row_group_ = selected_[next_selected_++];
    const RowGroupInfo& info = row_groups_[static_cast<size_t>(current_row_group_)];
    current_position_ = info.first_row;
    if (column_indices_.empty()) {
      current_remaining_ = info.num_rows;
      continue;
    }
    try {
      LS_ASSIGN_OR_RAISE_CTX(current_, reader_->GetRecordBatchReader({current_row_group_}, column_indices_),
                             "reading row group {} of {}", current_row_group_, location_);
    } catch (const std::exception& e) {
      return FromParquetException(e, location_, "reading Parquet file");
    }
  }
}

Result<std::shared_ptr<arrow::Table>> ParquetDataReader::ReadAll() {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto next, Next());
    if (!next) break;
    batches.push_back(next->batch);
  }
  return arrow::Table::FromRecordBatches(arrow_schema_, batches);
}

void ExpectManifestEntry(ParquetReadOptions& options, const iceberg::DataFile& file) {
  options.expected_record_count = file.record_count;
  for (const auto& [id, size] : file.column_sizes) options.expected_field_ids.insert(id);
  for (const auto& [id, count] : file.value_counts) options.expected_field_ids.insert(id);
}

Result<std::unique_ptr<ParquetDataReader>> OpenKeyColumnReader(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                               std::string location,
                                                               const iceberg::Schema& table_schema,
                                                               const std::vector<int32_t>& key_field_ids,
                                                               ParquetReadOptions options) {
  LS_ASSIGN_OR_RAISE_CTX(auto schema, SelectFields(table_schema, key_field_ids), "key columns of {}", location);
  return ParquetDataReader::Open(std::move(file), std::move(location), std::move(schema), std::move(options));
}

}  // namespace lakesync::parquet_io
