# Apache Arrow C++ and Parquet from the pyarrow wheel installed in the project's .venv.
# The wheel ships headers and shared libraries; create_library_symlinks() adds the unversioned
# names the linker needs. CMake puts the wheel's directory in the build tree's RUNPATH (binaries run
# without LD_LIBRARY_PATH); `cmake --install` replaces it with the install tree's own lib/ (tools/lakesync).
set(LAKESYNC_PYTHON "${CMAKE_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH "Python with pyarrow installed")
execute_process(
  COMMAND "${LAKESYNC_PYTHON}" -c
    "import pyarrow as pa; pa.create_library_symlinks(); print(pa.get_include()); print(pa.get_library_dirs()[0]); print(pa.__version__)"
  OUTPUT_VARIABLE _pa_out RESULT_VARIABLE _pa_rc ERROR_VARIABLE _pa_err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _pa_rc EQUAL 0)
  message(FATAL_ERROR "Cannot import pyarrow with ${LAKESYNC_PYTHON}: ${_pa_err}\n"
                      "Run scripts/setup.sh first, or pass -DLAKESYNC_PYTHON=/path/to/python.")
endif()
string(REPLACE "\n" ";" _pa_lines "${_pa_out}")
list(GET _pa_lines 0 ARROW_INCLUDE_DIR)
list(GET _pa_lines 1 ARROW_LIB_DIR)
list(GET _pa_lines 2 ARROW_VERSION)
message(STATUS "Arrow ${ARROW_VERSION} from ${ARROW_LIB_DIR}")

function(_lakesync_arrow_lib target libname)
  add_library(${target} SHARED IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${ARROW_LIB_DIR}/lib${libname}.so"
    INTERFACE_INCLUDE_DIRECTORIES "${ARROW_INCLUDE_DIR}")
endfunction()
_lakesync_arrow_lib(arrow_core arrow)
_lakesync_arrow_lib(arrow_compute_lib arrow_compute)
_lakesync_arrow_lib(parquet_lib parquet)
# arrow_shared: the core plus compute (kernels we call) and the S3 filesystem (registers s3://).
# pyarrow 26 ships S3 as its own library; in pyarrow 25 it is inside libarrow.
add_library(arrow_shared INTERFACE)
target_link_libraries(arrow_shared INTERFACE arrow_core arrow_compute_lib)
if(EXISTS "${ARROW_LIB_DIR}/libarrow_s3.so")
  _lakesync_arrow_lib(arrow_s3_lib arrow_s3)
  target_link_libraries(arrow_shared INTERFACE arrow_s3_lib)
endif()
add_library(parquet_shared INTERFACE)
target_link_libraries(parquet_shared INTERFACE parquet_lib arrow_shared)
