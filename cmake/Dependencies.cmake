# Every third-party dependency, found once. Targets link only what they use.
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(xxHash REQUIRED)          # cmake/FindxxHash.cmake: Debian ships no CMake config
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)          # gzip-compressed profiler traces

# The fuzz build (PARITY_FUZZ) makes the parsers only: no tests, no LibTorch.
if(NOT PARITY_FUZZ)
  find_package(GTest REQUIRED)
  find_package(rapidcheck REQUIRED)

  # LibTorch serves the `aten` backend only; the parts that include ATen link it, nothing else.
  # Its CMake config is slow and noisy, so it is looked up once here.
  find_package(Torch REQUIRED)
  message(STATUS "LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")
endif()

# OpenBLAS (pthread flavour) for the float64 dgemm of the conv2d reference. It is not linked but
# loaded by that reference when first called (kernels/conv2d/conv2d_ref.cpp says why), so the
# target gives its headers and the path of the library file only. Debian's config file sets
# variables only.
find_package(OpenBLAS REQUIRED)
get_filename_component(PARITY_OPENBLAS_LIBRARY "${OpenBLAS_LIBRARIES}" REALPATH)
add_library(parity_openblas INTERFACE)
target_include_directories(parity_openblas INTERFACE "${OpenBLAS_INCLUDE_DIRS}")
target_compile_definitions(parity_openblas INTERFACE PARITY_OPENBLAS_LIBRARY="${PARITY_OPENBLAS_LIBRARY}")
