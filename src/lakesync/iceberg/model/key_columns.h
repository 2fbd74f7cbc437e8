// Equality of Iceberg values held in Arrow arrays: the one key encoder behind equality deletes (scan,
// changelog, key resolution), key → position resolution in the sink, grouping a change stream by key
// in the planner and the changelog's row and key hashes.
//
// Two values are equal exactly when their encodings are, and the rules are the spec's for equality
// deletes: a null equals a null (an equality-delete null matches IS NULL); floating-point values
// compare by bit pattern with every NaN the same (-0.0 and 0.0 differ, as in Java's comparators);
// extension arrays (uuid) compare by their storage; strings and binaries compare by bytes whatever
// their Arrow layout (32/64-bit offsets, views), so one value decoded differently by two files still
// matches. Nested values (only the changelog's whole-row hashes meet them) compare by their text.
//
// Columns compared with each other must have the same Iceberg type; callers read both sides through
// the same projection (the table schema), which guarantees it.
#pragma once

#include <arrow/type_fwd.h>
#include <arrow/util/hashing.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::iceberg {

// 128 bits of a row's hash (two independently seeded 64-bit lanes).
struct Hash128 {
  uint64_t a = 0, b = 0;
  bool operator==(const Hash128& o) const { return a == o.a && b == o.b; }
};

// A read-only view of one or more key columns of equal length. Holds the arrays it was made from.
class KeyColumns {
 public:
  // Errors: InvalidArgument for columns of different lengths.
  static Result<KeyColumns> Make(std::vector<std::shared_ptr<arrow::Array>> columns);

  int64_t length() const { return length_; }
  size_t num_columns() const { return columns_.size(); }

  // Whether rows i and j hold equal keys.
  bool Equal(int64_t i, int64_t j) const;
  // Appends the byte encoding of row `row`'s key to `out`: equal keys give equal strings.
  void AppendKey(int64_t row, std::string& out) const;
  // One 64-bit hash per row; different seeds give independent hashes.
  std::vector<uint64_t> HashRows(uint64_t seed) const;
  // 128-bit hashes per row (where a collision must be unlikely among many millions of rows).
  void HashRows128(std::vector<Hash128>& out) const;
  // Folds these columns into `hashes` (one per row, made by HashRows128 over other columns): the hash
  // of those columns followed by these, without hashing the first ones again.
  void FoldRows128(std::vector<Hash128>& hashes) const;

  // Keys of a single fixed-width column of at most 8 bytes (integers, dates, times, timestamps,
  // floats, booleans, small decimals) are one machine word each: KeySet stores them as such.
  bool single_word() const { return single_word_; }
  bool IsNull(int64_t row) const;
  // The word of a single-word key (floats with NaN canonicalised); undefined for a null row.
  uint64_t Word(int64_t row) const;
  // Word() of rows [begin, begin + count) into `out`, with one switch on the column's layout per call
  // rather than per row: bulk probes (KeySet::FindAll over a data file's keys) are mostly this load.
  void Words(int64_t begin, int64_t count, uint64_t* out) const;
  // Whether IsNull can be true for some row (false lets bulk probes skip the per-row check).
  bool may_have_nulls() const;

  // How a column's values are laid out in memory (public for key_columns.cc's helpers).
  enum class Layout { kFixed, kFloat, kDouble, kBit, kBinary32, kBinary64, kView, kOther };
  struct Column {
    Layout layout = Layout::kOther;
    std::shared_ptr<arrow::Array> array;  // the storage array
    const uint8_t* validity = nullptr;    // null when the column has no nulls
    const uint8_t* data = nullptr;        // values (fixed, bit, binary bytes)
    const int32_t* offsets32 = nullptr;
    const int64_t* offsets64 = nullptr;
    int64_t offset = 0;  // the array's slice offset
    int32_t width = 0;   // bytes per value (kFixed)
  };

  // Rows per block of ForEachWordBlock: 8 KB of words stay in L1, and a multiple of 8 keeps a block's
  // rows on whole bytes of a per-row bit vector.
  static constexpr int64_t kWordBlock = 1024;
  // Calls fn(begin, count, words) for consecutive blocks of at most kWordBlock rows covering every
  // row, `words` holding Word() of rows [begin, begin + count) (undefined for null rows). The one bulk
  // load of single-word keys behind every probe and build loop of KeySet and KeySequenceMap.
  template <typename Fn>
  void ForEachWordBlock(Fn&& fn) const {
    uint64_t words[kWordBlock];
    for (int64_t begin = 0; begin < length_; begin += kWordBlock) {
      const int64_t count = length_ - begin < kWordBlock ? length_ - begin : kWordBlock;
      Words(begin, count, words);
      fn(begin, count, static_cast<const uint64_t*>(words));
    }
  }

 private:
  std::vector<Column> columns_;
  int64_t length_ = 0;
  bool single_word_ = false;
};

// A set of keys, built once from KeyColumns and then only read, so any number of threads may probe
// it at once without locks (key resolution probes it from every unit of a scan). Probed with
// KeyColumns of the same types as it was built from.
//
// Every key has an index in [0, index_space()): equal keys the same, distinct keys distinct ones, so a
// caller can tell which keys it found with a bit vector instead of a second set.
//
// No node per key: a node-based std::unordered_set (one allocation per key, a pointer chase per
// probe) was about a third of the CPU of an apply (perf, docs/benchmarks.md). Single-word keys (one
// integer, date, timestamp, float or boolean column: the common case) are held
//  - as a bit vector over [min, max] when that is no larger than a hash table of the keys would be
//    (at most 128 bits a key): ids and other dense integer keys, a probe is one bit test;
//  - otherwise in a flat open-addressing table of words (at most half full, probes prefetched in
//    FindAll), written here for the same reason as KeySequenceMap's;
// other keys (strings, decimals, several columns) by their byte encoding (KeyColumns::AppendKey) in
// Arrow's BinaryMemoTable, whose index is the key's.
class KeySet {
 public:
  static constexpr int64_t kAbsent = -1;
  enum class Representation { kBitmap, kWordTable, kEncoded };

  KeySet();
  KeySet(KeySet&&) noexcept;
  KeySet& operator=(KeySet&&) noexcept;
  ~KeySet();

  // The set of the keys of every row of `keys`.
  static Result<KeySet> Make(const KeyColumns& keys);

  // The index of row `row`'s key, kAbsent when it is not in the set.
  int64_t Find(const KeyColumns& keys, int64_t row) const;
  bool Contains(const KeyColumns& keys, int64_t row) const { return Find(keys, row) != kAbsent; }
  // Find for every row of `keys` into `out` (resized); table probes are prefetched a few rows ahead.
  void FindAll(const KeyColumns& keys, std::vector<int64_t>& out) const;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Indexes lie in [0, index_space()).
  int64_t index_space() const { return index_space_; }
  Representation representation() const { return representation_; }

 private:
  int64_t FindWord(uint64_t word) const;

  Representation representation_ = Representation::kEncoded;
  size_t size_ = 0;
  int64_t index_space_ = 0;
  // A null single-word key and, in the word table, the word that marks an empty slot are kept apart
  // from the words, at indexes null_index_ and empty_word_index_ (kAbsent while not in the set).
  int64_t null_index_ = kAbsent;
  int64_t empty_word_index_ = kAbsent;
  // kBitmap: bit (word - base_) of bits_, for word - base_ <= span_ (unsigned, so wrapping ranges of
  // signed keys work too).
  uint64_t base_ = 0, span_ = 0;
  std::vector<uint64_t> bits_;
  // kWordTable: a power of two in size, at most half full; a slot's index is its position.
  std::vector<uint64_t> slots_;
  // kEncoded
  std::unique_ptr<arrow::internal::BinaryMemoTable<arrow::BinaryBuilder>> encoded_;
};

// Keys mapped to the highest sequence number recorded with each (equality deletes: a key to the
// highest data sequence number of a delete file holding it; iceberg/scan/equality_deletes.h). Built
// from and probed with KeyColumns of the same types: Insert every batch, Seal once, then probe
// (Find/FindAll are const and safe from several threads after Seal).
//
// Single-word keys (the common case: one integer key column) are held, chosen at Seal by KeySet's
// density rule (one rule, DenseRangeFits in key_columns.cc):
//  - dense keys (ids: the range [min, max] is no larger than a hash table of the keys would be): an
//    array indexed by key - min of *ranks*, a 1- or 2-byte index into the sorted distinct sequence
//    numbers (0: no delete). 2.8M ids take 2.8 MB, a probe is one read from cache and the build is
//    array writes; the hash table's random probes and inserts were ~35% of reading a table after 20
//    equality-delete commits (perf, docs/benchmarks.md);
//  - otherwise a flat open-addressing table of {word, number} slots, written here because a probe is
//    then one cache miss: with Arrow's memo table (key → memo index, then the number by index)
//    probing was 38% of that read, two dependent misses per row.
// Other keys are kept by their byte encoding in Arrow's BinaryMemoTable.
class KeySequenceMap {
 public:
  static constexpr int64_t kAbsent = std::numeric_limits<int64_t>::min();
  enum class Representation { kUnsealed, kDenseRanks, kWordTable, kEncoded };

  KeySequenceMap();
  KeySequenceMap(KeySequenceMap&&) noexcept;
  KeySequenceMap& operator=(KeySequenceMap&&) noexcept;
  ~KeySequenceMap();

  // Records every row of `keys` with `sequence_number` (>= 0), keeping the highest number per key.
  // Single-word keys are only collected here (8 bytes a key until Seal), as the choice of layout needs
  // their range. Invalid after Seal.
  Status Insert(const KeyColumns& keys, int64_t sequence_number);
  // Builds the probe structure from what was inserted; call once, after the last Insert.
  void Seal();
  // The highest number recorded with row `row`'s key, kAbsent when the key was never inserted.
  int64_t Find(const KeyColumns& keys, int64_t row) const;
  // Find for every row of `keys` into `out` (resized). Word-table probes are prefetched a few rows
  // ahead: a probe of a large table is a cache miss, and overlapping them is what makes the scan of a
  // table with many equality-delete commits cheap.
  void FindAll(const KeyColumns& keys, std::vector<int64_t>& out) const;

  // Clears the bit (in `live`, one bit per row of `keys`, from bit 0) of every row whose key was
  // recorded with a number above `threshold`; returns how many set bits it cleared. A dense map
  // probed with single-word keys is one loop over the words (KeyColumns::ForEachWordBlock) into the
  // rank array, eight rows to a byte of `live`: a probe is then a load and a compare, where a call per
  // row (Find, Word, IsNull) and a number per row written and read back were a third of the map's
  // share of reading a table after 20 equality-delete commits. Other maps go through FindAll.
  int64_t ClearAbove(const KeyColumns& keys, int64_t threshold, uint8_t* live) const;

  // Room for `n` single-word keys without growing (delete files' record counts are known upfront).
  void ReserveWords(size_t n);

  size_t size() const { return word_count_ + sequences_.size() + (null_sequence_ != kAbsent ? 1 : 0); }
  bool empty() const { return size() == 0 && pending_words_.empty(); }
  Representation representation() const { return representation_; }

 private:
  struct WordSlot {
    uint64_t word = 0;
    int64_t sequence = kAbsent;  // kAbsent: an empty slot
  };
  // Inserted words [begin, next run's begin) of pending_words_ carry `sequence`.
  struct PendingRun {
    size_t begin = 0;
    int64_t sequence = 0;
  };
  static uint64_t SlotHash(uint64_t word);
  void InsertWord(uint64_t word, int64_t sequence_number);
  void GrowWords();
  template <typename Rank>
  void BuildRanks(std::vector<Rank>& ranks);
  int64_t FindWord(uint64_t word) const;
  template <typename Rank>
  int64_t ClearDenseAbove(const KeyColumns& keys, const Rank* ranks, int64_t threshold, uint8_t* live) const;

  Representation representation_ = Representation::kUnsealed;
  // Single-word keys until Seal.
  std::vector<uint64_t> pending_words_;
  std::vector<PendingRun> pending_runs_;
  bool any_encoded_ = false;

  // kDenseRanks: word w has rank ranks{8,16}_[w - base_] for w - base_ <= span_ (unsigned, so wrapping
  // ranges of signed keys work too); rank r > 0 stands for sequence_by_rank_[r - 1].
  uint64_t base_ = 0, span_ = 0;
  std::vector<uint8_t> ranks8_;
  std::vector<uint16_t> ranks16_;
  std::vector<int64_t> sequence_by_rank_;
  // kWordTable
  std::vector<WordSlot> words_;  // a power of two in size, at most half full
  size_t word_count_ = 0;        // distinct single-word keys (either layout)
  // Encoded keys: a key's memo index is its position in sequences_.
  std::vector<int64_t> sequences_;
  std::unique_ptr<arrow::internal::BinaryMemoTable<arrow::BinaryBuilder>> encoded_;
  int64_t null_sequence_ = kAbsent;  // a null single-word key's
};

}  // namespace lakesync::iceberg
