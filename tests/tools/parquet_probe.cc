// parquet_probe: drives lakesync's Parquet writer and reader from the command line so that Python
// oracles (tests/interop/test_parquet_oracle.py) can check them against pyarrow and pyiceberg.
//
//   parquet_probe write --schema S.json --input IN.parquet --output OUT.parquet [--prop k=v]...
//       Reads IN (matched to the schema by field id, or by name for files without ids), writes OUT
//       with lakesync's ParquetFileWriter and prints the Iceberg metrics as one JSON object:
//       {"record_count", "file_size_in_bytes", "column_sizes", "value_counts", "null_value_counts",
//        "nan_value_counts", "lower_bounds", "upper_bounds" (hex of the Appendix D bytes),
//        "split_offsets"}; map keys are field ids as strings.
//   parquet_probe read --schema S.json --input IN.parquet --output OUT.parquet
//       [--name-mapping M.json] [--batch-size N] [--row-groups 0,2]
//       Reads IN with ParquetDataReader and writes what it returned, plus a "_pos" column with each
//       row's file position, with Arrow's plain Parquet writer; prints {"rows", "matched_by_field_id",
//       "row_groups"}.
// S.json is an Iceberg schema JSON object. --prop gives table properties (write.parquet.*,
// write.metadata.metrics.*). Errors print "error<TAB><kind><TAB><message>" to stderr and exit 1;
// usage errors exit 2.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/writer.h>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/formats/parquet/parquet_file_writer.h"
#include "lakesync/iceberg/model/json_serde.h"

namespace {

using lakesync::Result;
using lakesync::Status;

int Usage(const std::string& why) {
  std::cerr << "parquet_probe: " << why << "\n"
            << "usage: parquet_probe write --schema S.json --input IN --output OUT [--prop k=v]...\n"
            << "       parquet_probe read --schema S.json --input IN --output OUT [--name-mapping M.json]"
               " [--batch-size N] [--row-groups 0,2]\n";
  return 2;
}

int Fail(const Status& status) {
  std::cerr << "error\t" << lakesync::ErrorKindName(lakesync::KindOf(status)) << "\t" << status.message() << "\n";
  return 1;
}

Result<std::string> Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return lakesync::NotFound("cannot open {}", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Hex(const std::string& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

template <typename V>
nlohmann::json ById(const std::map<int32_t, V>& m, bool hex = false) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [id, v] : m) {
    if constexpr (std::is_same_v<V, std::string>) {
      out[std::to_string(id)] = hex ? Hex(v) : v;
    } else {
      out[std::to_string(id)] = v;
    }
  }
  return out;
}

struct Args {
  std::string command, schema, input, output, name_mapping;
  std::map<std::string, std::string> props;
  int64_t batch_size = 64 * 1024;
  std::optional<std::vector<int>> row_groups;
};

Result<lakesync::iceberg::SchemaPtr> LoadSchema(const std::string& path) {
  ARROW_ASSIGN_OR_RAISE(auto text, Slurp(path));
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded()) return lakesync::InvalidArgument("{} is not JSON", path);
  return lakesync::iceberg::SchemaFromJson(json);
}

Result<lakesync::parquet_io::ParquetReadOptions> ReadOptions(const Args& a) {
  lakesync::parquet_io::ParquetReadOptions options;
  options.batch_size = a.batch_size;
  options.row_groups = a.row_groups;
  if (!a.name_mapping.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto text, Slurp(a.name_mapping));
    ARROW_ASSIGN_OR_RAISE(auto mapping, lakesync::parquet_io::NameMapping::Parse(text));
    options.name_mapping = std::make_shared<lakesync::parquet_io::NameMapping>(std::move(mapping));
  }
  return options;
}

Status Write(const Args& a) {
  ARROW_ASSIGN_OR_RAISE(auto schema, LoadSchema(a.schema));
  ARROW_ASSIGN_OR_RAISE(auto read_options, ReadOptions(a));
  ARROW_ASSIGN_OR_RAISE(auto in, arrow::io::ReadableFile::Open(a.input));
  ARROW_ASSIGN_OR_RAISE(auto reader, lakesync::parquet_io::ParquetDataReader::Open(in, a.input, schema, read_options));
  lakesync::parquet_io::ParquetWriterOptions options;
  ARROW_ASSIGN_OR_RAISE(options.parquet, lakesync::parquet_io::ParquetWriteProperties::FromTableProperties(a.props));
  ARROW_ASSIGN_OR_RAISE(options.metrics, lakesync::parquet_io::MetricsConfig::Make(a.props, *schema));
  ARROW_ASSIGN_OR_RAISE(auto out, arrow::io::FileOutputStream::Open(a.output));
  ARROW_ASSIGN_OR_RAISE(auto writer, lakesync::parquet_io::ParquetFileWriter::Make(out, a.output, schema, options));
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto next, reader->Next());
    if (!next) break;
    ARROW_RETURN_NOT_OK(writer->Write(*next->batch));
  }
  ARROW_ASSIGN_OR_RAISE(auto m, writer->Close());
  nlohmann::json j;
  j["record_count"] = m.record_count;
  j["file_size_in_bytes"] = m.file_size_in_bytes;
  j["column_sizes"] = ById(m.column_sizes);
  j["value_counts"] = ById(m.value_counts);
  j["null_value_counts"] = ById(m.null_value_counts);
  j["nan_value_counts"] = ById(m.nan_value_counts);
  j["lower_bounds"] = ById(m.lower_bounds, true);
  j["upper_bounds"] = ById(m.upper_bounds, true);
  j["split_offsets"] = m.split_offsets;
  std::cout << j.dump() << "\n";
  return Status::OK();
}

Status Read(const Args& a) {
  ARROW_ASSIGN_OR_RAISE(auto schema, LoadSchema(a.schema));
  ARROW_ASSIGN_OR_RAISE(auto read_options, ReadOptions(a));
  ARROW_ASSIGN_OR_RAISE(auto in, arrow::io::ReadableFile::Open(a.input));
  ARROW_ASSIGN_OR_RAISE(auto reader, lakesync::parquet_io::ParquetDataReader::Open(in, a.input, schema, read_options));
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  auto out_schema = reader->schema()->AddField(reader->schema()->num_fields(), arrow::field("_pos", arrow::int64(), false))
                        .ValueOrDie();
  int64_t rows = 0;
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto next, reader->Next());
    if (!next) break;
    arrow::Int64Builder pos;
    for (int64_t k = 0; k < next->batch->num_rows(); ++k) ARROW_RETURN_NOT_OK(pos.Append(next->first_row_position + k));
    ARROW_ASSIGN_OR_RAISE(auto pos_array, pos.Finish());
    auto columns = next->batch->columns();
    columns.push_back(pos_array);
    batches.push_back(arrow::RecordBatch::Make(out_schema, next->batch->num_rows(), columns));
    rows += next->batch->num_rows();
  }
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(out_schema, batches));
  ARROW_ASSIGN_OR_RAISE(auto out, arrow::io::FileOutputStream::Open(a.output));
  ARROW_RETURN_NOT_OK(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out, 1 << 20));
  ARROW_RETURN_NOT_OK(out->Close());
  nlohmann::json j;
  j["rows"] = rows;
  j["matched_by_field_id"] = reader->matched_by_field_id();
  j["row_groups"] = reader->row_groups().size();
  std::cout << j.dump() << "\n";
  return Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage("need a command");
  Args a;
  a.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : std::string(); };
    if (arg == "--schema") {
      a.schema = value();
    } else if (arg == "--input") {
      a.input = value();
    } else if (arg == "--output") {
      a.output = value();
    } else if (arg == "--name-mapping") {
      a.name_mapping = value();
    } else if (arg == "--batch-size") {
      a.batch_size = std::stoll(value());
    } else if (arg == "--row-groups") {
      std::vector<int> groups;
      std::stringstream ss(value());
      for (std::string part; std::getline(ss, part, ',');) groups.push_back(std::stoi(part));
      a.row_groups = groups;
    } else if (arg == "--prop") {
      const std::string kv = value();
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) return Usage("--prop needs key=value, got " + kv);
      a.props[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else {
      return Usage("unknown argument " + arg);
    }
  }
  if (a.schema.empty() || a.input.empty() || a.output.empty()) return Usage("need --schema, --input and --output");
  Status st;
  if (a.command == "write") {
    st = Write(a);
  } else if (a.command == "read") {
    st = Read(a);
  } else {
    return Usage("unknown command " + a.command);
  }
  return st.ok() ? 0 : Fail(st);
}
