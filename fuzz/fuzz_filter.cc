// The filter parser (iceberg/expr): parse and bind against a schema with a column of every
// primitive type, a nested struct and a quoted name.
#include <cstdint>
#include <string_view>

#include "lakesync/iceberg/expr/binder.h"
#include "lakesync/iceberg/model/schema.h"

namespace {

const lakesync::iceberg::Schema& FuzzSchema() {
  using namespace lakesync::iceberg;
  static const Schema* schema = [] {
    std::vector<NestedField> fields;
    int id = 1;
    for (const char* type : {"boolean", "int", "long", "float", "double", "decimal(10, 2)", "date", "time",
                             "timestamp", "timestamptz", "timestamp_ns", "string", "uuid", "fixed[4]", "binary"}) {
      NestedField f;
      f.id = id;
      f.name = std::string("c_") + std::to_string(id);
      f.required = id % 2 == 0;
      f.type = *Type::ParsePrimitive(type);
      fields.push_back(f);
      ++id;
    }
    NestedField city{100, "city", false, *Type::ParsePrimitive("string")};
    NestedField address{99, "address", false, Type::Struct({city})};
    fields.push_back(address);
    NestedField odd{98, "odd name", false, *Type::ParsePrimitive("string")};
    fields.push_back(odd);
    return new Schema(0, fields);
  }();
  return *schema;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)lakesync::iceberg::ParseAndBind(text, FuzzSchema(), /*case_sensitive=*/(size % 2) == 0);
  return 0;
}
