#include <CLI/CLI.hpp>

#include <iostream>

#include "lakesync/common/version.h"

int main(int argc, char** argv) {
  CLI::App app{"lakesync: keep Apache Iceberg tables in sync with Delta Lake and Iceberg sources"};
  app.set_version_flag("--version", std::string("lakesync ") + LAKESYNC_VERSION);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
