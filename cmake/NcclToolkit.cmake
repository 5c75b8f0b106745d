# Finds CUDA (with nvcc, for the kernels) and NCCL for the NCCL backend
# (executor/backends/nccl): by default in the prefix that
# scripts/install-deps.sh lays out from NVIDIA's pinned wheels. Sets
# RESHARD_HAVE_NCCL, NCCL_LIBRARY and NCCL_INCLUDE_DIR; the CUDA:: targets
# are global. Without them the backend is a stub that says so, and
# reshardctl reports it.
option(RESHARD_NCCL "Build the NCCL backend when CUDA and NCCL are found" ON)
set(RESHARD_HAVE_NCCL OFF)
if(RESHARD_NCCL)
  set(CUDAToolkit_ROOT ${RESHARD_TOOLS}/cuda CACHE PATH
      "The CUDA toolkit (with NCCL) that the NCCL backend builds against")
  # check_language looks for nvcc on PATH only: point it at the prefix's.
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS ${CUDAToolkit_ROOT}/bin/nvcc)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_ROOT}/bin/nvcc CACHE FILEPATH "")
  endif()
  # CUDA 13 has no nvToolsExt library, and CMake 3.25's FindCUDAToolkit
  # then fails setting a property on the target it did not make, but only
  # for projects requiring 3.25+: it searches as a 3.24 project would.
  set(CMAKE_MINIMUM_REQUIRED_VERSION 3.24)
  find_package(CUDAToolkit QUIET GLOBAL)
  set(CMAKE_MINIMUM_REQUIRED_VERSION 3.25)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  include(CheckLanguage)
  check_language(CUDA)
  if(CUDAToolkit_FOUND AND NCCL_LIBRARY AND NCCL_INCLUDE_DIR
     AND CMAKE_CUDA_COMPILER)
    set(RESHARD_HAVE_NCCL ON)
  else()
    message(WARNING
      "RESHARD_NCCL is ON but CUDA with nvcc and NCCL were not found in "
      "CUDAToolkit_ROOT=${CUDAToolkit_ROOT} (nvcc: ${CMAKE_CUDA_COMPILER}, "
      "nccl.h: ${NCCL_INCLUDE_DIR}, libnccl: ${NCCL_LIBRARY}): the NCCL "
      "backend, its tests and the GPU bundle are NOT built. Run "
      "scripts/install-deps.sh, or configure with -DRESHARD_NCCL=OFF to "
      "build without NCCL on purpose.")
  endif()
endif()
