// Property test for pruning: random filters over random small tables, split into files by partition.
// For every file, if the row filter selects any row, then the metrics evaluator (with metrics computed
// from the file's rows, exact or with truncated string bounds or with metrics missing), the partition
// evaluator (on the file's partition tuple) and the manifest evaluator (on summaries over the files of
// a manifest) must all say "might match". Any false answer there is a false negative: a scan would skip
// rows it must return. The row filter itself is cross-checked row by row against the literal evaluator.
// Seeds are fixed, so runs are deterministic.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <sstream>

#include "lakesync/iceberg/expr/literal_evaluator.h"
#include "lakesync/iceberg/expr/metrics_evaluator.h"
#include "lakesync/iceberg/expr/partition_evaluator.h"
#include "lakesync/iceberg/expr/row_filter.h"
#include "test_support.h"

namespace lakesync::iceberg {
namespace {

using testing::Optional;
using testing::Row;

constexpr int64_t kMicrosPerDay = 86400LL * 1000000;
constexpr int64_t kMicrosPerHour = 3600LL * 1000000;

const Schema& PropertySchema() {
  static const Schema schema(
      0, {Optional(1, "id", Type::Long()), Optional(2, "i", Type::Int()), Optional(3, "d", Type::Double()),
          Optional(4, "s", Type::String()), Optional(5, "dt", Type::Date()), Optional(6, "ts", Type::Timestamp()),
          Optional(7, "dec", Type::Decimal(9, 2)), Optional(8, "b", Type::Boolean()),
          Optional(9, "st", Type::Struct({Optional(10, "x", Type::Int()), Optional(11, "y", Type::String())})),
          Optional(12, "tz", Type::TimestampTz()), Optional(13, "f", Type::Float())});
  return schema;
}

PartitionField PF(int32_t source, int32_t id, const std::string& transform) {
  return PartitionField{source, id, "p" + std::to_string(id), Transform::Parse(transform).ValueOrDie()};
}

std::vector<PartitionSpec> Specs() {
  return {
      PartitionSpec(0, {}),
      PartitionSpec(1, {PF(2, 1000, "identity"), PF(1, 1001, "bucket[4]")}),
      PartitionSpec(2, {PF(4, 1000, "truncate[2]"), PF(1, 1001, "truncate[10]")}),
      PartitionSpec(3, {PF(6, 1000, "day"), PF(5, 1001, "month")}),
      PartitionSpec(4, {PF(6, 1000, "year"), PF(12, 1001, "hour")}),
      PartitionSpec(5, {PF(3, 1000, "identity"), PF(7, 1001, "truncate[100]")}),
      PartitionSpec(6, {PF(8, 1000, "void"), PF(10, 1001, "identity"), PF(11, 1002, "truncate[1]")}),
      PartitionSpec(7, {PF(4, 1000, "bucket[3]"), PF(5, 1001, "day"), PF(8, 1002, "identity")}),
      PartitionSpec(8, {PF(13, 1000, "identity"), PF(4, 1001, "identity")}),
      PartitionSpec(9, {PF(6, 1000, "month"), PF(5, 1001, "year"), PF(12, 1002, "day")}),
      PartitionSpec(10, {PF(6, 1000, "hour"), PF(7, 1001, "bucket[2]"), PF(2, 1002, "truncate[4]")}),
  };
}

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int64_t>(v.size()) - 1))];
  }

  // ---- values ----

  std::string Str() {
    static const std::vector<std::string> kChars = {"a", "b", "\xC3\xA9", "z"};
    std::string s;
    const int64_t n = Int(0, 3);
    for (int64_t k = 0; k < n; ++k) s += Pick(kChars);
    return s;
  }
  double Dbl() {
    static const std::vector<double> kValues = {-2.5, -1, -0.0, 0, 0.5, 1, 2.5, 3, std::nan(""), INFINITY, -INFINITY};
    return Pick(kValues);
  }
  int32_t Day() { return static_cast<int32_t>(Chance(0.1) ? 19723 + Int(-2, 2) : Int(-40, 40)); }
  int64_t Micros() {
    const int64_t day = Int(-3, 3) * kMicrosPerDay;
    static const std::vector<int64_t> kOffsets = {0, 1, kMicrosPerHour - 1, kMicrosPerHour, kMicrosPerDay - 1, -1};
    return day + (Chance(0.5) ? Pick(kOffsets) : Int(0, kMicrosPerDay - 1));
  }

  Literal MaybeNull(Literal v) { return Chance(0.15) ? Literal() : v; }

  Row RandomRow() {
    Row r;
    r.top = {MaybeNull(Literal(Int(-25, 25))),
             MaybeNull(Literal(static_cast<int32_t>(Int(-12, 12)))),
             MaybeNull(Literal(Dbl())),
             MaybeNull(Literal(Str())),
             MaybeNull(Literal(Day())),
             MaybeNull(Literal(Micros())),
             MaybeNull(Literal(Decimal{Int(-300, 300)})),
             MaybeNull(Literal(Chance(0.5))),
             Literal(),  // struct: see struct_kids
             MaybeNull(Literal(Micros())),
             MaybeNull(Literal(static_cast<float>(Dbl())))};
    r.struct_valid[9] = !Chance(0.2);
    r.struct_kids[9] = {MaybeNull(Literal(static_cast<int32_t>(Int(-5, 5)))), MaybeNull(Literal(Str()))};
    return r;
  }

  // ---- filter text ----

  std::string Quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }

  std::string Cmp() { return Pick(std::vector<std::string>{"=", "!=", "<>", "<", "<=", ">", ">=", "=="}); }

  std::string IntLit(int64_t lo, int64_t hi) {
    const int64_t kind = Int(0, 9);
    if (kind == 0) return std::to_string(Int(lo, hi)) + ".5";
    if (kind == 1) return Chance(0.5) ? "1e20" : "-1e20";
    return std::to_string(Int(lo, hi));
  }
  std::string DblLit() {
    return Pick(std::vector<std::string>{"-2.5", "-1", "0", "-0.0", "0.5", "1", "2.5", "3", "1e0", "-1.25", "'inf'"});
  }
  std::string DateLit() {
    if (Chance(0.2)) return "TIMESTAMP '" + FormatTimestamp(Micros() + 40 * kMicrosPerDay * Int(-1, 0), false, false) + "'";
    return (Chance(0.5) ? "DATE '" : "'") + FormatDate(Day()) + "'";
  }
  std::string TsLit(bool zoned) {
    if (Chance(0.1)) return "DATE '" + FormatDate(static_cast<int32_t>(Int(-3, 3))) + "'";
    const int64_t v = Micros();
    if (!zoned) return "TIMESTAMP '" + FormatTimestamp(v, false, false) + "'";
    if (Chance(0.5)) return "TIMESTAMPTZ '" + FormatTimestamp(v, false, true) + "'";
    // The same instant written in another zone.
    return "'" + FormatTimestamp(v + kMicrosPerHour, false, false) + "+01:00'";
  }
  std::string DecLit() {
    if (Chance(0.2)) return FormatDecimal(Int(-3000, 3000), 3);
    return FormatDecimal(Int(-310, 310), 2);
  }

  struct Column {
    std::string name;
    enum Kind { kIntegral, kFloating, kString, kDate, kTs, kTsTz, kDecimal, kBool } kind;
    int64_t lo = 0, hi = 0;
  };

  std::string Value(const Column& c) {
    switch (c.kind) {
      case Column::kIntegral: return IntLit(c.lo, c.hi);
      case Column::kFloating: return DblLit();
      case Column::kString: return Quote(Str());
      case Column::kDate: return DateLit();
      case Column::kTs: return TsLit(false);
      case Column::kTsTz: return TsLit(true);
      case Column::kDecimal: return DecLit();
      case Column::kBool: return Chance(0.5) ? "TRUE" : "FALSE";
    }
    return "0";
  }

  std::string Leaf() {
    static const std::vector<Column> kColumns = {
        {"id", Column::kIntegral, -27, 27}, {"i", Column::kIntegral, -14, 14}, {"st.x", Column::kIntegral, -6, 6},
        {"d", Column::kFloating},           {"f", Column::kFloating},          {"s", Column::kString},
        {"st.y", Column::kString},          {"dt", Column::kDate},             {"ts", Column::kTs},
        {"tz", Column::kTsTz},              {"dec", Column::kDecimal},         {"b", Column::kBool}};
    const Column& c = Pick(kColumns);
    const int64_t form = Int(0, 11);
    if (form == 0) return c.name + (Chance(0.5) ? " IS NULL" : " IS NOT NULL");
    if (form == 1 && c.kind == Column::kFloating) return c.name + (Chance(0.5) ? " IS NAN" : " IS NOT NAN");
    if (form == 2) {
      std::string list = Value(c);
      for (int64_t k = Int(0, 3); k > 0; --k) list += ", " + Value(c);
      return c.name + (Chance(0.5) ? " IN (" : " NOT IN (") + list + ")";
    }
    if (form == 3 && c.kind != Column::kBool) {
      return c.name + (Chance(0.3) ? " NOT" : "") + " BETWEEN " + Value(c) + " AND " + Value(c);
    }
    if (form <= 5 && c.kind == Column::kString) {
      std::string prefix = Str();
      if (Chance(0.3)) prefix = prefix.substr(0, 1);
      return c.name + (Chance(0.3) ? " NOT" : "") + " LIKE " + Quote(prefix + "%");
    }
    if (c.kind == Column::kBool && Chance(0.5)) return Chance(0.5) ? "b" : "NOT b";
    if (form == 6) return Value(c) + " " + Cmp() + " " + c.name;  // value first
    return c.name + " " + Cmp() + " " + Value(c);
  }

  std::string Filter(int depth) {
    if (depth == 0 || Chance(0.35)) return Leaf();
    switch (Int(0, 3)) {
      case 0: return Filter(depth - 1) + " AND " + Filter(depth - 1);
      case 1: return Filter(depth - 1) + " OR " + Filter(depth - 1);
      case 2: return "NOT (" + Filter(depth - 1) + ")";
      default: return "(" + Filter(depth - 1) + " OR " + Filter(depth - 1) + ") AND " + Filter(depth - 1);
    }
  }

 private:
  std::mt19937_64 rng_;
};

std::string Describe(const Schema& schema, const std::vector<Row>& rows) {
  std::ostringstream out;
  for (const auto& r : rows) {
    out << "  {";
    for (int32_t id : {1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13}) {
      const Literal v = testing::ValueOf(schema, r, id);
      out << schema.FindColumnName(id) << "=" << v.ToString(*schema.FindFieldById(id)->type) << " ";
    }
    out << "}\n";
  }
  return out.str();
}

struct File {
  std::vector<Row> rows;
  std::vector<Literal> partition;
  std::shared_ptr<arrow::RecordBatch> batch;
  DataFile exact, truncated, sparse;
  size_t manifest = 0;
};

struct Counters {
  int filters = 0, files = 0, files_with_matches = 0, metrics_pruned = 0, partition_pruned = 0, manifests_pruned = 0;
};

void CheckRound(Gen& gen, const PartitionSpec& spec, int filters_per_round, Counters& counts) {
  const Schema& schema = PropertySchema();
  // Rows, grouped into files by partition tuple (unpartitioned: random chunks).
  std::vector<Row> rows;
  for (int64_t n = gen.Int(10, 60); n > 0; --n) rows.push_back(gen.RandomRow());
  std::vector<File> files;
  if (spec.fields().empty()) {
    for (size_t start = 0; start < rows.size();) {
      const size_t len = static_cast<size_t>(gen.Int(1, 12));
      File f;
      f.rows.assign(rows.begin() + static_cast<long>(start), rows.begin() + static_cast<long>(std::min(rows.size(), start + len)));
      files.push_back(std::move(f));
      start += len;
    }
  } else {
    std::map<std::string, size_t> by_key;
    for (const auto& r : rows) {
      auto tuple = testing::PartitionTuple(spec, schema, r);
      const std::string key = spec.PartitionPath(schema, tuple);
      auto [it, inserted] = by_key.emplace(key, files.size());
      if (inserted) {
        files.emplace_back();
        files.back().partition = tuple;
      }
      files[it->second].rows.push_back(r);
    }
  }
  const size_t manifests = 3;
  for (auto& f : files) {
    f.batch = testing::MakeBatch(schema, f.rows);
    f.exact = testing::FileWithMetrics(schema, f.rows);
    f.truncated = testing::FileWithMetrics(schema, f.rows, {static_cast<size_t>(gen.Int(1, 2))});
    f.sparse = f.exact;
    for (auto* m : {&f.sparse.lower_bounds, &f.sparse.upper_bounds}) {
      for (auto it = m->begin(); it != m->end();) it = gen.Chance(0.4) ? m->erase(it) : std::next(it);
    }
    for (auto* m : {&f.sparse.value_counts, &f.sparse.null_value_counts, &f.sparse.nan_value_counts}) {
      for (auto it = m->begin(); it != m->end();) it = gen.Chance(0.3) ? m->erase(it) : std::next(it);
    }
    f.manifest = static_cast<size_t>(gen.Int(0, manifests - 1));
  }
  std::vector<std::vector<std::vector<Literal>>> tuples(manifests);
  for (const auto& f : files) tuples[f.manifest].push_back(f.partition);
  std::vector<std::vector<PartitionFieldSummary>> summaries;
  for (const auto& t : tuples) summaries.push_back(testing::Summaries(spec, schema, t));

  for (int k = 0; k < filters_per_round; ++k) {
    const std::string text = gen.Filter(3);
    auto bound = ParseAndBind(text, schema);
    ASSERT_TRUE(bound.ok()) << text << ": " << bound.status().ToString();
    ++counts.filters;
    const InclusiveMetricsEvaluator metrics(*bound);
    auto partitions = PartitionEvaluator::Make(*bound, spec, schema);
    ASSERT_TRUE(partitions.ok()) << partitions.status().ToString();
    auto manifest_eval = ManifestEvaluator::Make(*bound, spec, schema);
    ASSERT_TRUE(manifest_eval.ok()) << manifest_eval.status().ToString();
    std::vector<bool> manifest_has_match(manifests, false);

    for (const auto& f : files) {
      ++counts.files;
      auto selection = EvaluateRowFilter(*bound, *f.batch);
      ASSERT_TRUE(selection.ok()) << text << ": " << selection.status().ToString();
      bool any = false;
      for (size_t r = 0; r < f.rows.size(); ++r) {
        auto expected = EvaluateLiterals(*bound, [&](int32_t id) -> const Literal* {
          thread_local Literal v;
          v = testing::ValueOf(schema, f.rows[r], id);
          return &v;
        });
        ASSERT_TRUE(expected.ok());
        ASSERT_EQ((*selection)->Value(static_cast<int64_t>(r)), expected->value_or(false))
            << "row filter and literal evaluator disagree on " << text << " (bound: " << bound->ToString()
            << ") for row\n" << Describe(schema, {f.rows[r]});
        any = any || (*selection)->Value(static_cast<int64_t>(r));
      }
      const bool by_metrics = metrics.MightMatch(f.exact);
      auto by_partition = spec.fields().empty() ? Result<bool>(true) : partitions->MightMatch(f.partition);
      ASSERT_TRUE(by_partition.ok()) << by_partition.status().ToString();
      counts.metrics_pruned += !by_metrics;
      counts.partition_pruned += !*by_partition;
      if (!any) continue;
      ++counts.files_with_matches;
      manifest_has_match[f.manifest] = true;
      const std::string context = "filter: " + text + "\nbound: " + bound->ToString() + "\nrows:\n" + Describe(schema, f.rows);
      ASSERT_TRUE(by_metrics) << "metrics evaluator dropped a matching file\n" << context;
      ASSERT_TRUE(metrics.MightMatch(f.truncated)) << "metrics evaluator dropped a file with truncated bounds\n" << context;
      ASSERT_TRUE(metrics.MightMatch(f.sparse)) << "metrics evaluator dropped a file with missing metrics\n" << context;
      ASSERT_TRUE(*by_partition) << "partition evaluator dropped a matching file\nprojected: "
                                 << partitions->projected().ToString() << "\npartition: "
                                 << spec.PartitionPath(schema, f.partition) << "\n" << context;
    }
    for (size_t m = 0; m < manifests; ++m) {
      if (tuples[m].empty() || spec.fields().empty()) continue;
      auto might = manifest_eval->MightMatch(summaries[m]);
      ASSERT_TRUE(might.ok()) << might.status().ToString();
      counts.manifests_pruned += !*might;
      ASSERT_TRUE(!manifest_has_match[m] || *might)
          << "manifest evaluator dropped a manifest with matches\nfilter: " << text
          << "\nprojected: " << manifest_eval->projected().ToString();
    }
  }
}

TEST(PruningPropertyTest, NoFalseNegatives) {
  Gen gen(20241129);
  Counters counts;
  const auto specs = Specs();
  for (int round = 0; round < 220; ++round) {
    CheckRound(gen, specs[static_cast<size_t>(round) % specs.size()], 12, counts);
    if (HasFatalFailure()) return;
  }
  // The property is only meaningful if the evaluators actually prune: make sure they do, often.
  EXPECT_GT(counts.files_with_matches, counts.files / 10);
  EXPECT_GT(counts.metrics_pruned, counts.files / 10);
  EXPECT_GT(counts.partition_pruned, counts.files / 20);
  EXPECT_GT(counts.manifests_pruned, 50);
  std::cout << "filters " << counts.filters << ", files " << counts.files << ", with matches "
            << counts.files_with_matches << ", pruned by metrics " << counts.metrics_pruned << ", by partition "
            << counts.partition_pruned << ", manifests pruned " << counts.manifests_pruned << "\n";
}

}  // namespace
}  // namespace lakesync::iceberg
