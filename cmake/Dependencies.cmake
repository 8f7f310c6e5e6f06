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

# OpenBLAS (pthread flavour) for the float64 dgemm of the conv2d reference. Debian's config file
# sets variables only; wrap them in a target.
find_package(OpenBLAS REQUIRED)
if(NOT TARGET OpenBLAS::OpenBLAS)
  add_library(OpenBLAS::OpenBLAS UNKNOWN IMPORTED)
  set_target_properties(OpenBLAS::OpenBLAS PROPERTIES
    IMPORTED_LOCATION "${OpenBLAS_LIBRARIES}"
    INTERFACE_INCLUDE_DIRECTORIES "${OpenBLAS_INCLUDE_DIRS}")
endif()
