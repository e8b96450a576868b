#!/usr/bin/env bash
# Every GPU check in one run, on any machine with a CUDA GPU (docs/performance.md,
# "bench/gpu_check.sh"). From the repository root:
#
#   bash bench/gpu_check.sh [BASELINE]        BASELINE: the benchmark gate's baseline commit
#
# BASE_ARCHIVE=FILE: a tarball of the baseline's tree, for a checkout without git history.
# GATE_ARGS: more arguments of bench/gpu_gate.py (e.g. --sizes 1e6 --rounds 1).
#
# In order, each part bounded by what is left of BUDGET seconds (default 540, 9 minutes,
# the build included):
#   build       the CUDA backend (Ninja where found, -j cores) with the Python module for
#               the machine's own python3 and its pybind11, in BUILD (default
#               /tmp/nestsim-cuda, outside the tree)
#   python      the Python tests (label python) with that python3, its pybind11 and numpy,
#               and `pip install .` of the module into a temporary directory (label pip)
#   gate        the GPU benchmark gate (bench/gpu_gate.py): HEAD's bench_hsx against
#               BASELINE's (default bench/baseline/commit), interleaved, a ratio per
#               scene; the baseline's bench_hsx builds beside HEAD's build; before the
#               tests, so that nothing else runs on its GPU
#   ctest       every test but validation and python (TEST_TIMEOUT seconds each, 240;
#               CTEST_JOBS at a time, 4; on 2 or more GPUs ENSEMBLE_TIME, 150 s,
#               kept for the ensemble rows)
#   ensemble    members/s of `nestsim ensemble` (tests/ensemble/gpu_throughput.sh): one
#               GPU with one member at a time and with 8 side by side; with 2 or more
#               GPUs also every GPU in one process and mpirun -n GPUS, and the speed-ups
#   validation  the validation suite (bench/gpu_validation.sh), both seeds: on one GPU in
#               the time left at the end; on 2 or more, on the GPUs but the first from the
#               build's end (the tests, python and the gate use the first), stopping 150 s
#               before the budget ends so that the ensemble rows have every GPU
# Prints one summary line per part (also in $OUT/summary.txt); the logs go to
# $OUT/gpu_check.tgz. Exit status: 0 when every part that ran passed.
# Where the machine lacks the build's Debian libraries, .gpu/unpack-deps.sh brings them.
set -u
cd "$(dirname "$0")/.."
BASELINE=${1:-}
BUILD=${BUILD:-/tmp/nestsim-cuda}
BUDGET=${BUDGET:-540}
TEST_TIMEOUT=${TEST_TIMEOUT:-240}
# Tests at a time: processes on one GPU do not overlap their kernels (the device
# time-slices between them), so more than a few only wait on each other.
CTEST_JOBS=${CTEST_JOBS:-4}
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
# A subset of the host's GPUs (CUDA_VISIBLE_DEVICES=0: the one-GPU check on a larger host).
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  gpus=$CUDA_VISIBLE_DEVICES
else
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | paste -sd, -)
fi
ngpu=$(echo "$gpus" | tr ',' '\n' | grep -c .)
first=${gpus%%,*}
# On 2 or more GPUs the validation suite runs on the others while the tests use the first.
others=${gpus#*,}
[ "$ngpu" -ge 2 ] || others=""
export CUDA_VISIBLE_DEVICES=$first
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
# The gate's baseline bench_hsx, built once outside the tree, beside HEAD's build.
python3 bench/gpu_gate.py --build-only ${BASELINE:+--baseline "$BASELINE"} --jobs "$JOBS" \
  ${BASE_ARCHIVE:+--base-archive "$BASE_ARCHIVE"} \
  > "$LOG/gate_build.log" 2>&1 &
gate_build=$!
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

# --- validation beside the tests, on the other GPUs ------------------------------------
# validation_result: the summary line of a finished gpu_validation.sh run.
validation_result() {
  local rc=$1 budget=$2
  if [ "$rc" -eq 124 ]; then
    summary validation FAIL "stopped after $budget s (the time left): $(
      grep -l 'VALIDATION|' "$LOG"/validation/*.log 2>/dev/null | wc -l) processes had finished a check"
  else
    [ "$rc" -eq 0 ] && st=ok || st=FAIL
    summary validation "$st" "$(grep -E 'processes on|failed' "$LOG/validation.log" | tr '\n' ' ' | cut -c1-200)"
  fi
}
if [ -n "$others" ]; then
  # The ensemble rows need every GPU at the end: the suite stops 150 s before the budget.
  vbudget=$(( $(left) - 150 ))
  CUDA_VISIBLE_DEVICES=$others OUT=$LOG timeout "$vbudget" bash bench/gpu_validation.sh "$BUILD" \
    > "$LOG/validation.log" 2>&1 &
  validation_pid=$!
fi

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

# --- the benchmark gate -----------------------------------------------------------------
if out_of_time gate; then
  :
elif ! wait "$gate_build"; then
  summary gate FAIL "the baseline's bench_hsx did not build: $(tail -1 "$LOG/gate_build.log")"
else
  timeout "$(left)" python3 bench/gpu_gate.py \
    --head-bin "$BUILD/bench/bench_hsx" ${BASELINE:+--baseline "$BASELINE"} ${GATE_ARGS:-} \
    > "$LOG/gate.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] && st=ok || st=FAIL
  summary gate "$st" "$(tail -1 "$LOG/gate.log")"
fi

# --- ctest: every CUDA test but validation and python -----------------------------------
if ! out_of_time ctest; then
start=$(date +%s)
# On 2 or more GPUs the ensemble rows come after the tests: they keep ENSEMBLE_TIME (150 s).
reserve=0
[ -n "$others" ] && reserve=${ENSEMBLE_TIME:-150}
timeout "$(( $(left) - reserve ))" ctest --test-dir "$BUILD" -LE "validation|python|pip" -j"$CTEST_JOBS" \
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

if [ -n "$others" ]; then
  wait "$validation_pid"
  validation_result $? "$vbudget"
fi

# --- ensemble throughput ---------------------------------------------------------------
if ! out_of_time ensemble; then
  JOBS="1 8" CUDA_VISIBLE_DEVICES=$gpus timeout "$(left)" bash tests/ensemble/gpu_throughput.sh "$BUILD/nestsim" \
    > "$LOG/ensemble.log" 2>&1
  rc=$?
  rate() { grep -m1 "$1" "$LOG/ensemble.log" | sed -n 's/.*: *\([0-9.]*\) members\/s/\1/p'; }
  one=$(rate "^1 GPU, 1 member"); eight=$(rate "^1 GPU, 8 member")
  many=$(rate "GPUs, one process"); mpi=$(rate "GPUs, mpirun")
  line=$(awk -v a="${one:-0}" -v e="${eight:-0}" -v b="${many:-0}" -v c="${mpi:-0}" -v g="$ngpu" 'BEGIN {
    if (a <= 0) { print "no one-GPU rate"; exit }
    printf "members/s: 1 GPU %.3f, 8 at a time on it %.3f (%.2fx)", a, e, e / a
    if (g >= 2) printf "; %d GPUs one process %.3f (%.2fx), mpirun -n %d %.3f (%.2fx)", g, b, b / a, g, c, c / a }')
  st=ok
  [ $rc -eq 0 ] && [ -n "$one" ] && [ -n "$eight" ] || st=FAIL
  if [ "$ngpu" -ge 2 ] && { [ -z "$many" ] || [ -z "$mpi" ]; }; then st=FAIL; fi
  summary ensemble "$st" "$line"
fi

# --- the validation suite, in the time left (one GPU) -----------------------------------
if [ -z "$others" ]; then
  budget=$(( $(left) - 15 ))  # a margin for the logs' tarball
  if [ "$budget" -lt 30 ]; then
    summary validation FAIL "not run: $budget s left of the budget"
  else
    OUT=$LOG timeout "$budget" bash bench/gpu_validation.sh "$BUILD" > "$LOG/validation.log" 2>&1
    validation_result $? "$budget"
  fi
fi
finish
