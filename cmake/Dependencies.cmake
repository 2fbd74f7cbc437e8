# Debian packages (installed by scripts/setup.sh).
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(ZLIB REQUIRED)
# OpenSSL's libcrypto: HMAC-SHA256 for the sharing server's signed URLs and tokens, SHA-256/MD5 ids.
find_package(OpenSSL REQUIRED)
find_package(GTest)

pkg_check_modules(AVRO REQUIRED IMPORTED_TARGET avro-c)
# libpq: the PostgreSQL SQL catalog (Debian's libpq-dev).
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
add_library(avro::avro ALIAS PkgConfig::AVRO)
find_package(roaring REQUIRED)
# cpp-httplib (HTTP server and client; the .pc file sets the OpenSSL/zlib/brotli feature macros the
# compiled library was built with, which the header must see too).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
