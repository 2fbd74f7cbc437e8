#include "lakesync/formats/parquet/parquet_properties.h"

#include <arrow/array.h>
#include <arrow/compute/api_vector.h>
#include <arrow/datum.h>
#include <arrow/extension_type.h>
#include <arrow/record_batch.h>
#include <arrow/util/compression.h>
#include <parquet/bloom_filter.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#include <parquet/properties.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>
#include <limits>

#include "lakesync/common/text.h"

namespace lakesync::parquet_io {
namespace {

const std::string* Lookup(const std::map<std::string, std::string>& props, const std::string& data_key,
                          bool for_delete_files, std::string* used_key) {
  if (for_delete_files) {
    // write.parquet.x → write.delete.parquet.x
    std::string delete_key = "write.delete." + data_key.substr(std::string("write.").size());
    if (auto it = props.find(delete_key); it != props.end()) {
      *used_key = delete_key;
      return &it->second;
    }
  }
  if (auto it = props.find(data_key); it != props.end()) {
    *used_key = data_key;
    return &it->second;
  }
  return nullptr;
}

Result<int64_t> ParsePositive(const std::string& key, const std::string& text) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v <= 0) {
    return InvalidArgument("table property {} must be a positive integer, got '{}'", key, text);
  }
  return v;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

Status ReadBloomFilters(const std::map<std::string, std::string>& properties, ParquetWriteProperties& out) {
  std::map<std::string, double> fpp;
  for (const auto& [key, value] : properties) {
    if (!StartsWith(key, "write.parquet.bloom-filter-")) continue;
    const std::string lower = AsciiLower(value);
    if (StartsWith(key, kParquetBloomEnabledPrefix) && key.size() > std::strlen(kParquetBloomEnabledPrefix)) {
      const std::string column = key.substr(std::strlen(kParquetBloomEnabledPrefix));
      if (lower == "true") {
        out.bloom_filter_columns.emplace(column, 0.01);
      } else if (lower != "false") {
        return InvalidArgument("table property {} must be true or false, got '{}'", key, value);
      }
    } else if (StartsWith(key, kParquetBloomFppPrefix) && key.size() > std::strlen(kParquetBloomFppPrefix)) {
      double v = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || ptr != value.data() + value.size() || !(v > 0.0 && v < 1.0)) {
        return InvalidArgument("table property {} must be a probability between 0 and 1 (exclusive), got '{}'", key,
                               value);
      }
      fpp[key.substr(std::strlen(kParquetBloomFppPrefix))] = v;
    } else if (key == kParquetBloomMaxBytes) {
      ARROW_ASSIGN_OR_RAISE(out.bloom_filter_max_bytes, ParsePositive(key, value));
    } else {
      return InvalidArgument("table property {} is not supported; lakesync writes bloom filters with {}<column>, "
                             "{}<column> and {}",
                             key, kParquetBloomEnabledPrefix, kParquetBloomFppPrefix, kParquetBloomMaxBytes);
    }
  }
  for (const auto& [column, p] : fpp) {
    // An fpp for a column without a filter would be a setting with no effect.
    auto it = out.bloom_filter_columns.find(column);
    if (it == out.bloom_filter_columns.end()) {
      return InvalidArgument("table property {}{} is set but {}{} is not true", kParquetBloomFppPrefix, column,
                             kParquetBloomEnabledPrefix, column);
    }
    it->second = p;
  }
  return Status::OK();
}

}  // namespace

Result<arrow::Compression::type> ParseParquetCodec(std::string_view name, std::string_view what) {
  const std::string lower = AsciiLower(std::string(name));
  arrow::Compression::type codec;
  if (lower == "zstd") {
    codec = arrow::Compression::ZSTD;
  } else if (lower == "snappy") {
    codec = arrow::Compression::SNAPPY;
  } else if (lower == "gzip") {
    codec = arrow::Compression::GZIP;
  } else if (lower == "lz4" || lower == "lz4_raw") {
    codec = arrow::Compression::LZ4;
  } else if (lower == "brotli") {
    codec = arrow::Compression::BROTLI;
  } else if (lower == "uncompressed" || lower == "none") {
    codec = arrow::Compression::UNCOMPRESSED;
  } else {
    return InvalidArgument("{}: unsupported Parquet codec '{}'; expected zstd, snappy, gzip, lz4, brotli or uncompressed",
                           what, name);
  }
  if (!arrow::util::Codec::IsAvailable(codec)) {
    return Unsupported("{}: codec '{}' is not built into this Arrow library", what, name);
  }
  return codec;
}

ParquetWriteProperties::ParquetWriteProperties() : codec(arrow::Compression::ZSTD) {}

Result<ParquetWriteProperties> ParquetWriteProperties::FromTableProperties(
    const std::map<std::string, std::string>& properties, bool for_delete_files) {
  ParquetWriteProperties out;
  std::string key;
  if (const std::string* v = Lookup(properties, kParquetCompressionCodec, for_delete_files, &key)) {
    ARROW_ASSIGN_OR_RAISE(out.codec, ParseParquetCodec(*v, "table property " + key));
  }
  if (const std::string* v = Lookup(properties, kParquetCompressionLevel, for_delete_files, &key)) {
    int level = 0;
    auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), level);
    if (ec != std::errc() || ptr != v->data() + v->size()) {
      return InvalidArgument("table property {} must be an integer, got '{}'", key, *v);
    }
    out.compression_level = level;
  }
  if (const std::string* v = Lookup(properties, kParquetRowGroupSizeBytes, for_delete_files, &key)) {
    ARROW_ASSIGN_OR_RAISE(out.row_group_size_bytes, ParsePositive(key, *v));
  }
  if (const std::string* v = Lookup(properties, kParquetPageSizeBytes, for_delete_files, &key)) {
    ARROW_ASSIGN_OR_RAISE(out.page_size_bytes, ParsePositive(key, *v));
  }
  if (const std::string* v = Lookup(properties, kParquetPageRowLimit, for_delete_files, &key)) {
    ARROW_ASSIGN_OR_RAISE(out.page_row_limit, ParsePositive(key, *v));
  }
  if (const std::string* v = Lookup(properties, kParquetDictSizeBytes, for_delete_files, &key)) {
    ARROW_ASSIGN_OR_RAISE(out.dict_size_bytes, ParsePositive(key, *v));
  }
  if (!for_delete_files) ARROW_RETURN_NOT_OK(ReadBloomFilters(properties, out));
  return out;
}

std::shared_ptr<parquet::WriterProperties> ParquetWriteProperties::ToWriterProperties(
    const std::vector<std::string>& plain_columns) const {
  parquet::WriterProperties::Builder b;
  b.compression(codec);
  // Java passes the level only to codecs that have levels; so do we.
  if (compression_level && arrow::util::Codec::SupportsCompressionLevel(codec)) b.compression_level(*compression_level);
  b.data_pagesize(page_size_bytes);
  b.max_rows_per_page(page_row_limit);
  b.dictionary_pagesize_limit(dict_size_bytes);
  b.enable_dictionary();
  for (const auto& column : plain_columns) b.disable_dictionary(column);
  b.enable_statistics();
  b.enable_store_decimal_as_integer();
  b.data_page_version(parquet::ParquetDataPageVersion::V1);
  // Page CRCs (parquet-format PageHeader.crc): without them a flipped byte inside a compressed or
  // plain page can still decode, to other values, which a merge-on-read table then serves (or a
  // key lookup resolves to the wrong row). Java's parquet-mr writes them by default too.
  b.enable_page_checksum();
  for (const auto& [column, fpp] : bloom_filter_columns) {
    // The most distinct values whose filter still fits in max-bytes (Arrow sizes filters by ndv and
    // fpp, rounded up to a power of two, and folds them down when fewer values arrive).
    uint64_t lo = 1, hi = uint64_t{1} << 40;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo + 1) / 2;
      if (parquet::BlockSplitBloomFilter::OptimalNumOfBytes(mid, fpp) <= static_cast<uint64_t>(bloom_filter_max_bytes)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    parquet::BloomFilterOptions options;
    options.fpp = fpp;
    options.ndv = static_cast<int64_t>(lo);
    b.enable_bloom_filter(column, options);
  }
  // Row groups are cut by estimated bytes in ParquetFileWriter, not by a row count.
  b.max_row_group_length(std::numeric_limits<int64_t>::max());
  return b.build();
}

namespace {

// The bytes of the non-null values of a binary column in their plain encoding (4-byte length + data).
template <typename ArrayType>
int64_t PlainBinaryBytes(const arrow::Array& array) {
  const auto& a = static_cast<const ArrayType&>(array);
  const int64_t data = static_cast<int64_t>(a.value_offset(a.length()) - a.value_offset(0));
  return data + 4 * (a.length() - a.null_count());
}

}  // namespace

std::vector<std::string> ColumnsWithoutDictionaryGain(const arrow::RecordBatch& batch, int64_t sample_rows) {
  std::vector<std::string> out;
  const int64_t rows = std::min(batch.num_rows(), sample_rows);
  if (rows < kMinDictionarySampleRows) return out;
  for (int i = 0; i < batch.num_columns(); ++i) {
    std::shared_ptr<arrow::Array> column = batch.column(i)->Slice(0, rows);
    while (column->type_id() == arrow::Type::EXTENSION) {
      column = std::static_pointer_cast<arrow::ExtensionArray>(column)->storage();
    }
    const arrow::DataType& type = *column->type();
    const int64_t values = column->length() - column->null_count();
    if (values < kMinDictionarySampleRows) continue;
    // Plain bytes per value for fixed-width columns (as stored: decimals up to precision 18 as
    // INT32/INT64, ToWriterProperties); binary columns are summed below. The width mostly cancels
    // out of the rule; it matters only against the indexes' bit width.
    int64_t width = 0;
    int64_t (*binary_bytes)(const arrow::Array&) = nullptr;
    switch (type.id()) {
      case arrow::Type::BOOL:
        continue;  // Arrow never dictionary-encodes booleans
      case arrow::Type::DICTIONARY:
        continue;  // already a dictionary: Arrow's writer keeps its codes
      case arrow::Type::DECIMAL128:
      case arrow::Type::DECIMAL256: {
        const int32_t precision = static_cast<const arrow::DecimalType&>(type).precision();
        width = precision <= 9 ? 4 : precision <= 18 ? 8 : arrow::DecimalType::DecimalSize(precision);
        break;
      }
      case arrow::Type::STRING:
      case arrow::Type::BINARY:
        binary_bytes = &PlainBinaryBytes<arrow::BinaryArray>;
        break;
      case arrow::Type::LARGE_STRING:
      case arrow::Type::LARGE_BINARY:
        binary_bytes = &PlainBinaryBytes<arrow::LargeBinaryArray>;
        break;
      default:
        if (!arrow::is_fixed_width(type.id()) || type.bit_width() < 8) continue;  // nested and others: keep
        width = type.bit_width() / 8;
        break;
    }
    auto unique = arrow::compute::Unique(arrow::Datum(column));
    if (!unique.ok()) continue;  // no kernel for the type: keep Arrow's default
    const auto& distinct_values = **unique;
    const int64_t distinct = distinct_values.length() - distinct_values.null_count();
    // RLE/bit-packed indexes: ceil(log2(distinct)) bits each (parquet-mr's estimate ignores runs too).
    const int bits = distinct <= 1 ? 1 : std::bit_width(static_cast<uint64_t>(distinct - 1));
    const double index_bytes = static_cast<double>(values) * bits / 8.0;
    double plain_bytes = 0, dictionary_bytes = 0;
    if (binary_bytes) {
      plain_bytes = static_cast<double>(binary_bytes(*column));
      dictionary_bytes = static_cast<double>(binary_bytes(distinct_values));
    } else {
      plain_bytes = static_cast<double>(values * width);
      dictionary_bytes = static_cast<double>(distinct * width);
    }
    if (dictionary_bytes + index_bytes >= plain_bytes) out.push_back(batch.schema()->field(i)->name());
  }
  return out;
}

parquet::ReaderProperties ParquetReaderProperties(arrow::MemoryPool* pool) {
  parquet::ReaderProperties props(pool ? pool : arrow::default_memory_pool());
  props.set_page_checksum_verification(true);
  return props;
}

namespace {

bool OnlyDictionaryDataPages(const parquet::ColumnChunkMetaData& chunk) {
  const auto& stats = chunk.encoding_stats();
  if (stats.empty()) return false;  // not recorded: the pages could be anything
  for (const parquet::PageEncodingStats& page : stats) {
    if (page.page_type != parquet::PageType::DATA_PAGE && page.page_type != parquet::PageType::DATA_PAGE_V2) continue;
    if (page.encoding != parquet::Encoding::RLE_DICTIONARY && page.encoding != parquet::Encoding::PLAIN_DICTIONARY &&
        page.count > 0) {
      return false;
    }
  }
  return true;
}

bool SmallDictionaryChunk(const parquet::ColumnChunkMetaData& chunk, int64_t rows) {
  if (!chunk.has_dictionary_page()) return false;
  const int64_t dictionary_offset = chunk.dictionary_page_offset();
  const int64_t data_offset = chunk.data_page_offset();
  // The dictionary page precedes the data pages; a writer that recorded no usable offset says nothing.
  if (dictionary_offset <= 0 || data_offset <= dictionary_offset) return false;
  const int64_t dictionary_bytes = data_offset - dictionary_offset;
  return dictionary_bytes <= rows / kDictionaryReadRowsPerByte && OnlyDictionaryDataPages(chunk);
}

}  // namespace

std::vector<int> SmallDictionaryColumns(const parquet::FileMetaData& metadata, const std::vector<int>& row_groups) {
  std::vector<int> out;
  if (row_groups.empty()) return out;
  const parquet::SchemaDescriptor& schema = *metadata.schema();
  for (int column = 0; column < schema.num_columns(); ++column) {
    const parquet::ColumnDescriptor& leaf = *schema.Column(column);
    // Top-level columns only: their Arrow reader is the plain leaf reader.
    if (leaf.physical_type() != parquet::Type::BYTE_ARRAY || leaf.max_repetition_level() != 0 ||
        leaf.path()->ToDotVector().size() != 1) {
      continue;
    }
    bool small = true;
    for (int rg : row_groups) {
      auto group = metadata.RowGroup(rg);
      if (!SmallDictionaryChunk(*group->ColumnChunk(column), group->num_rows())) {
        small = false;
        break;
      }
    }
    if (small) out.push_back(column);
  }
  return out;
}

bool IsPageChecksumFailure(std::string_view message) {
  return message.find("CRC checksum verification failed") != std::string_view::npos;
}

}  // namespace lakesync::parquet_io
