#!/usr/bin/env bash
# nestsim from a fresh clone on Debian 12:
#   ./build.sh run    install what is missing, build the nestsim program (CPU backend),
#                     run the default job
#   ./build.sh test   install what is missing, build everything (CPU backend: tests,
#                     benchmarks, examples), run the test suite
#   ./build.sh cuda   build the CUDA backend (needs the CUDA toolkit in /usr/local/cuda)
#   ./build.sh sanitize  install what is missing, build the CPU backend under ASan and
#                     UBSan (build/sanitize), run the suite but its slow and validation
#                     tests
#   ./build.sh deps   only install what is missing
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
jobs=$(nproc 2>/dev/null || echo 2)

packages=(cmake g++ make libhdf5-dev libyaml-cpp-dev doctest-dev hdf5-tools
          python3-h5py python3-numpy python3-matplotlib python3-mdanalysis
          python3-dev pybind11-dev python3-pybind11 python3-pytest python3-pandas python3-tqdm
          libcpp-httplib-dev chromium libopenmpi-dev openmpi-bin)
# `nestsim view`'s page is built with npm (viewer/); a node and npm already on the
# machine (e.g. node 20 from NodeSource) are used as they are.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
# Thrust (CCCL) comes with the CUDA toolkit; without one, Debian's Thrust serves the
# CPU backend.
if [ ! -f /usr/local/cuda/include/cccl/thrust/version.h ] && [ ! -f /usr/local/cuda/include/thrust/version.h ]; then
  packages+=(libthrust-dev libcub-dev)
fi

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

# build_cpu [--target T]: configure and build the CPU backend (everything, or only T).
build_cpu() {
  cmake --preset cpu -DNESTSIM_BUILD_PYTHON=ON  # the Python module is part of the build here
  cmake --build --preset cpu -j"$jobs" "$@"
}

case "$mode" in
  deps) install_missing ;;
  run)
    install_missing
    build_cpu --target nestsim  # only what the job runs: no tests or benchmarks
    shift || true
    if [ $# -gt 0 ]; then
      ./build/cpu/nestsim "$@"
    else
      # The main job: the default model (models/default.yaml) into out.h5, then its summary.
      ./build/cpu/nestsim run -o out.h5 --force
      ./build/cpu/nestsim analyze out.h5
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
    cmake --preset sanitize
    cmake --build --preset sanitize -j"$jobs"
    export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
    # slow: minutes each in Release; validation: physics statistics, ~2 minutes each in
    # Release (their code runs in test_simulation and test_scenario here too).
    ctest --preset sanitize -j"$jobs" -LE 'slow|validation'
    ;;
  cuda)
    install_missing
    cmake --preset cuda -DNESTSIM_BUILD_PYTHON=ON
    cmake --build --preset cuda -j"$jobs"
    ;;
  *)
    echo "usage: ./build.sh run|test|sanitize|cuda|deps" >&2
    exit 2
    ;;
esac
