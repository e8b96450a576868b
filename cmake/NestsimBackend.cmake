# nestsim_backend_sources(<target> <file.cu>...): adds data-parallel sources to a
# target, compiled by nvcc (CUDA backend) or as C++ with Thrust on OpenMP (CPU).
# nestsim_device_target(<target>): backend definitions, include dirs and libraries.

set(NESTSIM_WARNINGS -Wall -Wextra)

if(NESTSIM_BACKEND STREQUAL "CUDA")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "nestsim: the CUDA backend needs nvcc (the CUDA toolkit, e.g. /usr/local/cuda/bin/nvcc). "
                        "Set CMAKE_CUDA_COMPILER or use the CPU backend (cmake --preset cpu).")
  endif()
  enable_language(CUDA)
  # nvcc --split-compile=N: a file's device code optimised (cicc) and assembled (ptxas) in
  # up to N threads (0: one per core), so the few long files of the broad phase do not
  # leave the machine's other cores idle at the end of a build. OFF: one thread per file.
  set(NESTSIM_CUDA_SPLIT_COMPILE 0 CACHE STRING
      "nvcc --split-compile threads per CUDA file (0: as many as cores; OFF: not split)")
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
elseif(NOT NESTSIM_BACKEND STREQUAL "CPU")
  message(FATAL_ERROR "nestsim: NESTSIM_BACKEND must be CPU or CUDA, not '${NESTSIM_BACKEND}'")
endif()

function(nestsim_backend_sources target)
  target_sources(${target} PRIVATE ${ARGN})
  if(NESTSIM_BACKEND STREQUAL "CPU")
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX)
    foreach(src ${ARGN})
      set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS -x c++)
    endforeach()
  endif()
endfunction()

function(nestsim_device_target target visibility)
  target_include_directories(${target} SYSTEM ${visibility} ${NESTSIM_CCCL_INCLUDE_DIR})
  target_link_libraries(${target} ${visibility} OpenMP::OpenMP_CXX)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${NESTSIM_WARNINGS}>)
  if(NESTSIM_BACKEND STREQUAL "CUDA")
    target_compile_definitions(${target} ${visibility} NESTSIM_BACKEND_CUDA=1
                               THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CUDA)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-extended-lambda --expt-relaxed-constexpr
        -Xcompiler=-Wall,-Wextra,-fopenmp>)
    # Stream 0 is each host thread's own stream, so that replicas and ensemble members
    # on threads of one process overlap on the device (nestsim/sim/replicas.h).
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--default-stream=per-thread>)
    if(NOT NESTSIM_CUDA_SPLIT_COMPILE STREQUAL "OFF")
      target_compile_options(${target} PRIVATE
        $<$<COMPILE_LANGUAGE:CUDA>:--split-compile=${NESTSIM_CUDA_SPLIT_COMPILE}>)
    endif()
    target_link_libraries(${target} ${visibility} CUDA::cudart)
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
  else()
    target_compile_definitions(${target} ${visibility} NESTSIM_BACKEND_CPU=1
                               THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP)
  endif()
endfunction()
