#!/usr/bin/env bash
# Every GPU check in one run, on any machine with a CUDA GPU (docs/performance.md,
# "bench/gpu_check.sh"). From the repository root:
#
#   bash bench/gpu_check.sh [BASELINE]        BASELINE: the benchmark gate's baseline commit
#
# In order, each part bounded by what is left of BUDGET seconds (default 540, 9 minutes,
# the build included):
#   build       the CUDA backend (Ninja where found, -j cores) with the Python module for
#               the machine's own python3 and its pybind11, in BUILD (default
#               /tmp/nestsim-cuda, outside the tree)
#   ctest       every test but validation and python (TEST_TIMEOUT seconds each, 240)
#   python      the Python tests (label python) with that python3, its pybind11 and numpy,
#               and `pip install .` of the module into a temporary directory (label pip)
#   gate        the HSX benchmark gate against BASELINE (bench/gate.sh --gpu), where the
#               tree has it; else bench_hsx's default scene, no baseline
#   ensemble    (2 or more GPUs) members/s: one GPU, every GPU in one process, mpirun -n
#               GPUS (tests/ensemble/gpu_throughput.sh), and the speed-up over one GPU
#   validation  the validation suite (bench/gpu_validation.sh), both seeds, in the time left
# Prints one summary line per part (also in $OUT/summary.txt); the logs go to
# $OUT/gpu_check.tgz. Exit status: 0 when every part that ran passed.
# Where the machine lacks the build's Debian libraries, .gpu/unpack-deps.sh brings them.
set -u
cd "$(dirname "$0")/.."
BASELINE=${1:-}
BUILD=${BUILD:-/tmp/nestsim-cuda}
BUDGET=${BUDGET:-540}
TEST_TIMEOUT=${TEST_TIMEOUT:-240}
# Tests at a time: a GPU test's small systems wait on launches, so several share the GPU.
CTEST_JOBS=${CTEST_JOBS:-8}
JOBS=${JOBS:-$(nproc)}
TOP=${OUT:-/tmp/gpu_check}
LOG=$TOP/gpu_check
mkdir -p "$LOG"
: > "$TOP/summary.txt"
[ -f .gpu/unpack-deps.sh ] && eval "$(bash .gpu/unpack-deps.sh)"
T0=$(date +%s)
failures=0

left() { echo $(( BUDGET - $(date +%s) + T0 )); }
# out_of_time PART: true (and a summary line) when less than 10 s of the budget is left.
out_of_time() {
  [ "$(left)" -ge 10 ] && return 1
  summary "$1" FAIL "not run: the budget ($BUDGET s) is spent"
}
# summary PART STATUS TEXT: one line, printed and kept.
summary() {
  local line
  line=$(printf "%-10s %-6s %5d s  %s" "$1" "$2" "$(( $(date +%s) - T0 ))" "$3")
  echo "$line" | tee -a "$TOP/summary.txt"
  [ "$2" = ok ] || [ "$2" = skip ] || failures=$((failures + 1))
}
finish() {
  tar -czf "$TOP/gpu_check.tgz" -C "$TOP" gpu_check summary.txt 2>/dev/null
  rm -rf "$LOG"
  echo "gpu_check: $failures part(s) failed; logs in $TOP/gpu_check.tgz"
  [ "$failures" -eq 0 ]
  exit $?
}
# ctest_line LOG: "N tests passed, M failed out of K" as ctest says it.
ctest_line() { grep -E "tests passed|tests failed" "$1" | tail -1; }

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c |
         awk '{$1=$1" x"; print}' | paste -sd, -)
python=$(command -v python3)
echo "gpu_check: ${ngpu} GPU(s): ${device:-none}; $($python --version 2>&1) at $python;" \
     "$JOBS cores; budget $BUDGET s" | tee -a "$TOP/summary.txt"
if [ "$ngpu" -lt 1 ]; then
  summary device FAIL "no GPU (nvidia-smi lists none)"
  finish
fi

# --- build -----------------------------------------------------------------------------
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cfg=(--preset cuda -B "$BUILD" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="${arch:-90}"
     -DNESTSIM_BUILD_VIEWER=OFF -DNESTSIM_BUILD_PYTHON=ON -DPython_EXECUTABLE="$python"
     -DNESTSIM_TEST_PYTHON="$python")  # the tests written in Python: this h5py and numpy
command -v ninja > /dev/null && cfg+=(-G Ninja)  # one graph of every target's jobs
if pybind11_dir=$($python -m pybind11 --cmakedir 2>/dev/null); then
  cfg+=(-Dpybind11_DIR="$pybind11_dir")
fi
# A tree configured with another generator cannot change it: start it afresh.
if [ -f "$BUILD/CMakeCache.txt" ] && command -v ninja > /dev/null &&
   ! grep -q "CMAKE_GENERATOR:INTERNAL=Ninja" "$BUILD/CMakeCache.txt"; then
  rm -rf "$BUILD"
fi
start=$(date +%s)
if ! cmake "${cfg[@]}" > "$LOG/configure.log" 2>&1; then
  summary build FAIL "configure failed: $(grep -m1 -A2 'CMake Error' "$LOG/configure.log" | tr '\n' ' ')"
  finish
fi
if ! timeout "$(left)" cmake --build "$BUILD" -j"$JOBS" > "$LOG/build.log" 2>&1; then
  grep -E "error" "$LOG/build.log" | head -20
  summary build FAIL "build failed or ran out of time (build.log)"
  finish
fi
summary build ok "$(( $(date +%s) - start )) s at -j$JOBS, $(grep -c 'warning' "$LOG/build.log") warning lines, sm_${arch:-90}"

# --- python: the machine's own python3 --------------------------------------------------
if ! out_of_time python; then
start=$(date +%s)
versions=$($python -c "import numpy, pybind11; print('numpy', numpy.__version__, 'pybind11', pybind11.__version__)" 2>&1 | tail -1)
timeout "$(left)" ctest --test-dir "$BUILD" -L "python|pip" -j4 --timeout "$TEST_TIMEOUT" \
  --output-on-failure > "$LOG/python.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
  summary python ok "$(ctest_line "$LOG/python.log") ($versions) in $(( $(date +%s) - start )) s"
else
  summary python FAIL "rc=$rc: $(ctest_line "$LOG/python.log") ($versions); $(
    grep -m3 -E 'Segmentation|Fatal Python|Error' "$LOG/python.log" | tr '\n' ' ' | cut -c1-200)"
fi
fi

# --- ctest: every CUDA test but validation and python -----------------------------------
if ! out_of_time ctest; then
start=$(date +%s)
timeout "$(left)" ctest --test-dir "$BUILD" -LE "validation|python|pip" -j"$CTEST_JOBS" \
  --timeout "$TEST_TIMEOUT" --output-on-failure > "$LOG/ctest.log" 2>&1
rc=$?
timeouts=$(grep -c "\*\*\*Timeout" "$LOG/ctest.log")
if [ $rc -eq 0 ]; then
  summary ctest ok "$(ctest_line "$LOG/ctest.log") in $(( $(date +%s) - start )) s"
else
  summary ctest FAIL "rc=$rc, $timeouts timed out: $(ctest_line "$LOG/ctest.log"); $(
    grep -E '^\s+[0-9]+ - ' "$LOG/ctest.log" | awk '{print $3}' | head -8 | paste -sd' ')"
fi
fi

# --- the benchmark gate -----------------------------------------------------------------
if out_of_time gate; then
  :
elif [ -f bench/gate.sh ]; then
  timeout "$(left)" bash bench/gate.sh --gpu ${BASELINE:+--baseline "$BASELINE"} \
    > "$LOG/gate.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] && st=ok || st=FAIL
  summary gate "$st" "rc=$rc vs ${BASELINE:-its default baseline}: $(tail -1 "$LOG/gate.log")"
else
  timeout "$(left)" "$BUILD/bench/bench_hsx" > "$LOG/gate.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] && st=ok || st=FAIL
  summary gate "$st" "no bench/gate.sh in this tree: bench_hsx's default scene only, no baseline ($(
    grep -iE 'hsx' "$LOG/gate.log" | tail -1 | tr -s ' ' | cut -c1-120))"
fi

# --- ensemble throughput (2 or more GPUs) -----------------------------------------------
if [ "$ngpu" -ge 2 ] && ! out_of_time ensemble; then
  JOBS=1 timeout "$(left)" bash tests/ensemble/gpu_throughput.sh "$BUILD/nestsim" \
    > "$LOG/ensemble.log" 2>&1
  rc=$?
  one=$(grep -m1 "^1 GPU, 1 member" "$LOG/ensemble.log" | sed -n 's/.*: *\([0-9.]*\) members\/s/\1/p')
  many=$(grep -m1 "GPUs, one process" "$LOG/ensemble.log" | sed -n 's/.*: *\([0-9.]*\) members\/s/\1/p')
  mpi=$(grep -m1 "GPUs, mpirun" "$LOG/ensemble.log" | sed -n 's/.*: *\([0-9.]*\) members\/s/\1/p')
  ratio=$(awk -v a="${one:-0}" -v b="${many:-0}" -v c="${mpi:-0}" 'BEGIN {
    if (a > 0) printf "one process %.2fx, mpirun %.2fx one GPU", b / a, c / a; else print "no one-GPU rate" }')
  [ $rc -eq 0 ] && [ -n "$mpi" ] && st=ok || st=FAIL
  summary ensemble "$st" "members/s: 1 GPU ${one:-?}, $ngpu GPUs in one process ${many:-?}, mpirun -n $ngpu ${mpi:-?}: $ratio"
elif [ "$ngpu" -lt 2 ]; then
  summary ensemble skip "one GPU: the 2-GPU rows need a 2-GPU host"
fi

# --- the validation suite, in the time left ---------------------------------------------
budget=$(( $(left) - 15 ))  # a margin for the logs' tarball
if [ "$budget" -lt 30 ]; then
  summary validation FAIL "not run: $budget s left of the budget"
else
  OUT=$LOG timeout "$budget" bash bench/gpu_validation.sh "$BUILD" > "$LOG/validation.log" 2>&1
  rc=$?
  if [ $rc -eq 124 ]; then
    summary validation FAIL "stopped after $budget s (the time left): $(
      grep -l 'VALIDATION|' "$LOG"/validation/*.log 2>/dev/null | wc -l) processes had finished a check"
  else
    [ $rc -eq 0 ] && st=ok || st=FAIL
    summary validation "$st" "$(grep -E 'processes on|failed' "$LOG/validation.log" | tr '\n' ' ' | cut -c1-200)"
  fi
fi
finish
