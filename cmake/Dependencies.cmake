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
# pyarrow's libparquet exports the OpenSSL functions it bundles. In a process or library group where it
# is loaded before the system's libcrypto, it interposes libcrypto's calls to its own functions, and
# the next user of libcrypto (Python's hashlib, TLS in libpq or httplib) can crash. Binaries that load
# libparquet link this first, so that they need libcrypto before anything else
# (tests/python/test_import_order.py).
add_library(lakesync_libcrypto_first INTERFACE)
# One flag, not the OpenSSL::Crypto target: CMake keeps only the last mention of a library on the
# link line, which is after libparquet.
target_link_libraries(lakesync_libcrypto_first
                      INTERFACE "-Wl,--push-state,--no-as-needed,${OPENSSL_CRYPTO_LIBRARY},--pop-state")
find_package(GTest)

pkg_check_modules(AVRO REQUIRED IMPORTED_TARGET avro-c)
# libpq: the PostgreSQL SQL catalog (Debian's libpq-dev).
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
add_library(avro::avro ALIAS PkgConfig::AVRO)
find_package(roaring REQUIRED)
# cpp-httplib (HTTP server and client; the .pc file sets the OpenSSL/zlib/brotli feature macros the
# compiled library was built with, which the header must see too).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
