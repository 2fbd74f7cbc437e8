// Parquet writer settings from Iceberg table properties (`write.parquet.*`, with the
// `write.delete.parquet.*` variants for delete files), parsed once with Java's defaults.
#pragma once

#include <arrow/type_fwd.h>
#include <arrow/util/type_fwd.h>
#include <parquet/properties.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"


namespace lakesync::parquet_io {

inline constexpr char kParquetCompressionCodec[] = "write.parquet.compression-codec";
inline constexpr char kParquetCompressionLevel[] = "write.parquet.compression-level";
inline constexpr char kParquetRowGroupSizeBytes[] = "write.parquet.row-group-size-bytes";
inline constexpr char kParquetPageSizeBytes[] = "write.parquet.page-size-bytes";
inline constexpr char kParquetPageRowLimit[] = "write.parquet.page-row-limit";
inline constexpr char kParquetDictSizeBytes[] = "write.parquet.dict-size-bytes";
// Bloom filters, Iceberg's keys: ...-enabled.column.<col> (true/false), ...-fpp.column.<col> (default
// 0.01), ...-max-bytes (default 1 MiB). Any other write.parquet.bloom-filter-* key is refused: a
// setting lakesync would not honour must not look accepted.
inline constexpr char kParquetBloomEnabledPrefix[] = "write.parquet.bloom-filter-enabled.column.";
inline constexpr char kParquetBloomFppPrefix[] = "write.parquet.bloom-filter-fpp.column.";
inline constexpr char kParquetBloomMaxBytes[] = "write.parquet.bloom-filter-max-bytes";

// A Parquet codec by name, case-insensitive: zstd, snappy, gzip, lz4 (or lz4_raw; written as LZ4_RAW),
// brotli, uncompressed (or none). `what` names the setting in errors ("table property K", "--compression"):
// InvalidArgument for an unknown name, Unsupported for a codec this Arrow library lacks.
Result<arrow::Compression::type> ParseParquetCodec(std::string_view name, std::string_view what);

struct ParquetWriteProperties {
  arrow::Compression::type codec;               // zstd, like Java
  std::optional<int> compression_level;         // codec default when unset
  int64_t row_group_size_bytes = 128LL << 20;   // compressed bytes, estimated while writing
  int64_t page_size_bytes = 1LL << 20;
  int64_t page_row_limit = 20000;
  int64_t dict_size_bytes = 2LL << 20;
  // Columns (Iceberg names, dotted inside structs) that get a bloom filter, with its false-positive
  // probability; each filter is sized for as many distinct values as fit in bloom_filter_max_bytes.
  std::map<std::string, double> bloom_filter_columns;
  int64_t bloom_filter_max_bytes = 1LL << 20;

  ParquetWriteProperties();

  // Reads the write.parquet.* keys (for delete files, write.delete.parquet.* first, then the data
  // keys, as Java does). Unrelated keys are ignored: table properties hold many other settings.
  // Codecs: zstd, snappy, gzip, lz4 (written as LZ4_RAW), brotli, uncompressed.
  // Returns InvalidArgument naming the key for an unknown codec, a malformed/non-positive number, a
  // bloom-filter fpp outside (0, 1) or an unknown write.parquet.bloom-filter-* key. Delete files get
  // no bloom filters (readers look rows up in data files).
  static Result<ParquetWriteProperties> FromTableProperties(const std::map<std::string, std::string>& properties,
                                                            bool for_delete_files = false);

  // Arrow's writer properties for these settings: statistics on, dictionary on (except for the
  // top-level columns named in `plain_columns`, see ColumnsWithoutDictionaryGain), decimals stored as
  // INT32/INT64 up to precision 18 (the Iceberg spec's Parquet mapping), data page v1 like Java,
  // and a CRC32 checksum in every page header (see ParquetReaderProperties).
  std::shared_ptr<parquet::WriterProperties> ToWriterProperties(const std::vector<std::string>& plain_columns = {}) const;
};

// Fewer sampled rows than this say too little about a column's cardinality: every column keeps its
// dictionary (Arrow then falls back to plain past dict_size_bytes, as before).
inline constexpr int64_t kMinDictionarySampleRows = 1024;

// The top-level columns of `batch` to write without a dictionary: parquet-mr's fallback rule
// (DictionaryValuesWriter.isCompressionSatisfying), which Java-written Iceberg files follow, decided
// on the first `sample_rows` rows (a page's worth) instead of after the first page. A column whose
// sample would take at least as many bytes dictionary-encoded (distinct values plus bit-packed
// indexes) as plain is written plain: a mostly-unique column (ids, versions, amounts, timestamps)
// gains nothing from a dictionary, yet Arrow's writer hashes every value into one until the
// dictionary passes dict_size_bytes (2 MiB: 262,144 int64 values). Nested columns and booleans keep
// Arrow's default; with fewer than kMinDictionarySampleRows rows nothing is decided (empty result).
// A function of the rows only, so files stay the same whatever thread writes them.
std::vector<std::string> ColumnsWithoutDictionaryGain(const arrow::RecordBatch& batch, int64_t sample_rows);

// The reader properties every Parquet file lakesync reads is opened with (data and delete files,
// Delta data files and checkpoints, user input): page checksums are verified where the writer
// stored them, so flipped bytes in a page are a corrupt-file error instead of other values. Pages
// without a checksum (most writers leave them out) are read as before.
parquet::ReaderProperties ParquetReaderProperties(arrow::MemoryPool* pool);

// Arrow decodes a dictionary-encoded string or binary column chunk faster as an Arrow dictionary
// (the dictionary page once, then indices) than value by value, and the cast to plain strings after
// is one gather: about half the CPU for a few distinct values per row group. But it inserts every
// dictionary entry into a hash table, so a dictionary nearly as large as its row group costs more
// than it saves; measured with pyarrow 26 on one snappy column (docs/benchmarks.md, "Stop 35"), the
// two meet near 2 bytes of dictionary page per row. This many rows per dictionary byte at least
// choose the dictionary read.
inline constexpr int64_t kDictionaryReadRowsPerByte = 2;

// The leaf columns of a file to read as Arrow dictionaries (parquet::ArrowReaderProperties::
// set_read_dictionary): top-level BYTE_ARRAY columns (strings, binaries; not nested) whose chunk in
// every row group of `row_groups` has a dictionary page of at most rows / kDictionaryReadRowsPerByte
// bytes and, by the page encoding stats, only dictionary-encoded data pages. A chunk whose writer
// fell back to plain pages, or left the encoding stats out, stays a plain read: Arrow would hash
// every plain value into the dictionary. The reader casts such columns back to their plain type, so
// what it returns does not change.
std::vector<int> SmallDictionaryColumns(const parquet::FileMetaData& metadata, const std::vector<int>& row_groups);

// Whether a Parquet error message is a failed page checksum (Arrow raises it as a plain
// ParquetException, which callers otherwise cannot tell from an I/O failure).
bool IsPageChecksumFailure(std::string_view message);

}  // namespace lakesync::parquet_io
