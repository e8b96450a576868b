#!/usr/bin/env bash
# nestsim from a fresh clone on Debian 12:
#   ./build.sh run    install what building and running needs, build the nestsim program
#                     and the Python module (CPU backend), run the default job
#   ./build.sh test   install that and what testing needs, build everything (CPU backend:
#                     tests, benchmarks, examples, the viewer's page), run the test suite
#   ./build.sh cuda   build the CUDA backend (needs the CUDA toolkit in /usr/local/cuda)
#   ./build.sh sanitize  install what is missing, build the CPU backend under ASan and
#                     UBSan (build/sanitize), run the suite but its slow and validation
#                     tests
#   ./build.sh deps   only install what is missing
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
jobs=$(nproc 2>/dev/null || echo 2)

# What building and running nestsim needs (the program, the Python module, `nestsim
# analyze --plot`): ./build.sh run installs only these.
packages=(cmake g++ make ninja-build libhdf5-dev libyaml-cpp-dev doctest-dev libcpp-httplib-dev
          python3-dev pybind11-dev python3-pybind11 python3-numpy python3-h5py
          python3-matplotlib)
# Thrust (CCCL) comes with the CUDA toolkit; without one, Debian's Thrust serves the
# CPU backend.
if [ ! -f /usr/local/cuda/include/cccl/thrust/version.h ] && [ ! -f /usr/local/cuda/include/thrust/version.h ]; then
  packages+=(libthrust-dev libcub-dev)
fi
# What the test suite adds: MPI ensembles, the Python tests' readers, and `nestsim
# view`'s page (built with Debian's node and npm) in Debian's chromium.
test_packages=(hdf5-tools python3-pytest python3-pandas python3-tqdm python3-mdanalysis
               libopenmpi-dev openmpi-bin nodejs npm chromium)
case "$mode" in
  test|sanitize|deps) packages+=("${test_packages[@]}") ;;
esac

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "nestsim: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# configure PRESET [ARGS]: cmake --preset PRESET. The presets build with Ninja; a build
# tree that another generator (make) configured keeps it, since CMake cannot switch a
# tree's generator, and without ninja make builds.
configure() {
  local old="" gen=()
  [ -f "build/$1/CMakeCache.txt" ] &&
    old=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "build/$1/CMakeCache.txt")
  if [ -n "$old" ]; then
    gen=(-G "$old")
  elif ! command -v ninja >/dev/null; then
    gen=(-G "Unix Makefiles")
  fi
  cmake --preset "$@" "${gen[@]}"
}

# build_cpu [--target T]: configure and build the CPU backend (everything, or only T).
build_cpu() {
  configure cpu -DNESTSIM_BUILD_PYTHON=ON  # the Python module is part of the build here
  cmake --build --preset cpu -j"$jobs" "$@"
}

case "$mode" in
  deps) install_missing ;;
  run)
    install_missing
    # The program, the Python module (build_cpu asks for it) and, where node, npm and the
    # npm registry are at hand, `nestsim view`'s page (else one line says how to build it
    # later); no tests or benchmarks.
    build_cpu --target nestsim nestsim_python nestsim_viewer
    shift || true
    if [ $# -gt 0 ]; then
      ./build/cpu/nestsim "$@"
    else
      # The main job: the default model (models/default.yaml) into out.h5, then its summary.
      ./build/cpu/nestsim run -o out.h5 --force
      ./build/cpu/nestsim analyze out.h5
      echo "nestsim: built in build/cpu; to type \`nestsim\` and import nestsim:"
      echo "  export PATH=\"$PWD/build/cpu:\$PATH\" PYTHONPATH=\"$PWD/build/cpu/python\""
    fi
    ;;
  test)
    install_missing
    build_cpu
    # Tests run side by side, each with OpenMP threads: idle threads must sleep, not spin.
    export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
    ctest --preset cpu -j"$jobs"
    ;;
  sanitize)
    install_missing
    configure sanitize
    cmake --build --preset sanitize -j"$jobs"
    export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
    # slow: minutes each in Release; validation: physics statistics, ~2 minutes each in
    # Release (their code runs in test_simulation and test_scenario here too).
    ctest --preset sanitize -j"$jobs" -LE 'slow|validation'
    ;;
  cuda)
    install_missing
    configure cuda -DNESTSIM_BUILD_PYTHON=ON
    cmake --build --preset cuda -j"$jobs"
    ;;
  *)
    echo "usage: ./build.sh run|test|sanitize|cuda|deps" >&2
    exit 2
    ;;
esac
