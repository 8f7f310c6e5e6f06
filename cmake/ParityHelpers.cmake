# Flags shared by every parity target, and parity_add_test().

# No fused multiply-add contraction: the reference and the seeded inputs must give the same bits
# with every compiler and -march, so a*b+c is always two roundings.
add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>)

if(PARITY_SANITIZE)
  # = -fsanitize=address,undefined, spelled as separate flags because nvcc's -Xcompiler splits
  # its argument at commas.
  set(_parity_san -fsanitize=address -fsanitize=undefined -fno-omit-frame-pointer
                  -fno-sanitize-recover=undefined)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_parity_san}>")
  # GCC 12's flow analysis under ASan reports std::regex and std::function internals as maybe
  # uninitialised; those reports are false positives and would bury real warnings.
  add_compile_options($<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
  foreach(flag IN LISTS _parity_san)
    add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${flag}>")
  endforeach()
  add_link_options(${_parity_san})
endif()

if(PARITY_FUZZ)
  # Coverage for libFuzzer in every parity library, address and undefined-behaviour checks on;
  # the fuzz executables add the libFuzzer runtime (fuzz/CMakeLists.txt).
  set(_parity_fuzz -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_compile_options(${_parity_fuzz})
  add_link_options(-fsanitize=address,undefined)
endif()

function(parity_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
endfunction()

# parity_gpu_test(NAME): the test takes one GPU from CTest's `gpus` resource (used only when
# ctest runs with --resource-spec-file, see scripts/ctest-gpu-resources) and runs on it through
# scripts/with-assigned-gpu. Its COMMAND must start with that script.
set(PARITY_WITH_GPU ${CMAKE_CURRENT_LIST_DIR}/../scripts/with-assigned-gpu)
function(parity_gpu_test name)
  set_property(TEST ${name} PROPERTY RESOURCE_GROUPS "gpus:1")
endfunction()

# parity_add_test(NAME SOURCES src... [LIBS lib...] [LABELS label...] [ENV VAR=value...])
# One test binary is one ctest test: each process start costs (LibTorch loads in 0.4 s), so tests
# are grouped into few, meaty binaries and ctest -j runs the binaries side by side.
function(parity_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS;ENV" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  parity_warnings(${name})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  if("gpu" IN_LIST T_LABELS)
    add_test(NAME ${name} COMMAND ${PARITY_WITH_GPU} $<TARGET_FILE:${name}> --gtest_brief=1)
    parity_gpu_test(${name})
  else()
    add_test(NAME ${name} COMMAND ${name} --gtest_brief=1)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT 600)
  if(T_ENV)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENV}")
  endif()
endfunction()
