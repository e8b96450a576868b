# Finds the project's dependencies; a missing one stops the configure step with the
# Debian package that provides it.
function(nestsim_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "nestsim: ${what} not found. On Debian 12 install it with:\n"
                        "    sudo apt-get install ${package}\n")
  endif()
endfunction()

# Thrust/CUB/libcu++ (CCCL). The CUDA toolkit ships them under include/cccl (CUDA 13)
# or include (CUDA 12); Debian's libthrust-dev is the fallback for CPU-only machines.
find_path(NESTSIM_CCCL_INCLUDE_DIR thrust/version.h
  HINTS ENV CUDA_HOME ENV CUDA_PATH
  PATHS /usr/local/cuda/include/cccl /usr/local/cuda/include /usr/include
  PATH_SUFFIXES include/cccl include
  NO_DEFAULT_PATH)
nestsim_require(NESTSIM_CCCL_INCLUDE_DIR "Thrust (CCCL, from the CUDA toolkit)"
                "libthrust-dev libcub-dev   (or the CUDA toolkit in /usr/local/cuda)")

find_package(OpenMP)
nestsim_require(OpenMP_CXX_FOUND "OpenMP for C++" "libomp-dev (or g++ with libgomp)")

# MPI (Open MPI from Debian: libopenmpi-dev, openmpi-bin) spreads `nestsim ensemble` over
# the ranks of mpirun. Optional: without it (NESTSIM_HAVE_MPI off) an ensemble runs in
# one process.
find_package(MPI COMPONENTS CXX)

find_package(HDF5 COMPONENTS C)
nestsim_require(HDF5_FOUND "HDF5 (C library)" "libhdf5-dev")

find_package(yaml-cpp CONFIG QUIET)
if(NOT yaml-cpp_FOUND)
  find_path(NESTSIM_YAML_INCLUDE yaml-cpp/yaml.h)
  find_library(NESTSIM_YAML_LIB yaml-cpp)
  if(NESTSIM_YAML_INCLUDE AND NESTSIM_YAML_LIB)
    set(yaml-cpp_FOUND TRUE)
    add_library(yaml-cpp UNKNOWN IMPORTED)
    set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION ${NESTSIM_YAML_LIB}
                          INTERFACE_INCLUDE_DIRECTORIES ${NESTSIM_YAML_INCLUDE})
  endif()
endif()
nestsim_require(yaml-cpp_FOUND "yaml-cpp" "libyaml-cpp-dev")
if(NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp INTERFACE IMPORTED)
  target_link_libraries(yaml-cpp::yaml-cpp INTERFACE yaml-cpp)
endif()

if(NESTSIM_BUILD_TESTS)
  find_path(NESTSIM_DOCTEST_INCLUDE doctest/doctest.h PATHS /usr/include)
  nestsim_require(NESTSIM_DOCTEST_INCLUDE "doctest" "doctest-dev")
endif()

# cpp-httplib, the HTTP server of `nestsim view`. Debian's package is a compiled library
# built with TLS, zlib and Brotli support: its header must see the same switches.
find_path(NESTSIM_HTTPLIB_INCLUDE httplib.h)
find_library(NESTSIM_HTTPLIB_LIB cpp-httplib)
nestsim_require(NESTSIM_HTTPLIB_LIB "cpp-httplib" "libcpp-httplib-dev")
nestsim_require(NESTSIM_HTTPLIB_INCLUDE "cpp-httplib's header" "libcpp-httplib-dev")
find_package(Threads REQUIRED)
add_library(nestsim::httplib INTERFACE IMPORTED)
target_include_directories(nestsim::httplib SYSTEM INTERFACE ${NESTSIM_HTTPLIB_INCLUDE})
target_link_libraries(nestsim::httplib INTERFACE ${NESTSIM_HTTPLIB_LIB} Threads::Threads)
target_compile_definitions(nestsim::httplib INTERFACE CPPHTTPLIB_OPENSSL_SUPPORT
                           CPPHTTPLIB_ZLIB_SUPPORT CPPHTTPLIB_BROTLI_SUPPORT)
