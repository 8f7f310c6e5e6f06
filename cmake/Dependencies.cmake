# Every third-party dependency, found once. Targets link only what they use.
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(xxHash REQUIRED)          # cmake/FindxxHash.cmake: Debian ships no CMake config
find_package(Threads REQUIRED)

find_package(GTest REQUIRED)
find_package(rapidcheck REQUIRED)

# LibTorch serves the `aten` backend only; the parts that include ATen link it, nothing else.
# Its CMake config is slow and noisy, so it is looked up once here.
find_package(Torch REQUIRED)
message(STATUS "LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")
