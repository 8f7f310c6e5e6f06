# Decides whether the CUDA backend is built. AUTO enables it when nvcc is found on PATH, through
# CUDACXX / CMAKE_CUDA_COMPILER, or at the toolkit's usual place (/usr/local/cuda), which is not on
# PATH on a stock Debian machine.
include(CheckLanguage)

set(PARITY_HAVE_CUDA OFF)
if(NOT PARITY_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    find_program(_parity_nvcc_on_path nvcc)
    if(NOT _parity_nvcc_on_path)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
    endif()
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # H100 unless the caller asks for another architecture.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures")
    endif()
    # conv2d's bfloat16 kernel runs on tensor cores through WMMA, which has bfloat16 from sm_80.
    foreach(_parity_arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
      string(REGEX MATCH "^[0-9]+" _parity_arch_number "${_parity_arch}")
      if(_parity_arch_number AND _parity_arch_number LESS 80)
        message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}: parity's CUDA kernels need sm_80 or newer "
                            "(bfloat16 tensor cores); build for 80, 86, 89, 90 or newer, or with PARITY_CUDA=OFF")
      endif()
    endforeach()
    # The shared runtime lets LibTorch (which brings its own) and parity share one CUDA context.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(PARITY_HAVE_CUDA ON)
  elseif(PARITY_CUDA STREQUAL "ON")
    message(FATAL_ERROR "PARITY_CUDA=ON but no CUDA compiler (nvcc) was found; "
                        "set CMAKE_CUDA_COMPILER or use PARITY_CUDA=AUTO|OFF")
  endif()
endif()

if(PARITY_HAVE_CUDA)
  set(PARITY_HAVE_CUDA_TEXT "ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, arch ${CMAKE_CUDA_ARCHITECTURES})")
else()
  set(PARITY_HAVE_CUDA_TEXT "OFF")
endif()
