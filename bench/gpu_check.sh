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
#               /tmp/nestsim-cuda, outside the tree): the program and the benchmarks
#               first, timed alone, then the rest beside the gate's baseline bench_hsx
#   gate        the GPU benchmark gate (bench/gpu_gate.py): HEAD's bench_hsx against
#               BASELINE's (default bench/baseline/commit), interleaved, a ratio per
#               scene, alone on the first GPU
#   speed       steps/s of bench_scenario (untimed phases) for the default model, tiled
#               to 1e5 bodies, and models/large_step.yaml in simulated s per hour; the
#               physiological receptor cycle (bench_scenario --model physiological), as it
#               is and tiled to 1e5 bodies, in simulated s per hour
#   then side by side, under a private MPS daemon (MPS=0: without), stopping
#   ENSEMBLE_TIME (60 s on one GPU, 120 s on more) before the budget ends:
#     ctest       every test but validation, python and those that need the viewer's
#                 page (label page: the build here has no node), on the first GPU
#                 (TEST_TIMEOUT seconds each, 240; CTEST_JOBS_MPS at a time, cores / 4;
#                 CTEST_JOBS, 4, without MPS)
#     python      the Python tests (label python) with that python3, its pybind11 and
#                 numpy, and `pip install .` of the module (label pip), on the first GPU
#     replicas    then 4 processes of tests/python/test_replicas.py side by side on the
#                 first GPU, 60 s each
#     validation  the validation suite (bench/gpu_validation.sh), both seeds, on the
#                 GPUs but the first (on the first where it is alone), PER_GPU
#                 processes at a time on each (the cores left over)
#   ensemble    members/s of `nestsim ensemble` (tests/ensemble/gpu_throughput.sh), 32
#               members of models/receptor_recycling.yaml (ENSEMBLE_MEMBERS), without
#               MPS: one GPU with one member at a time and with 8 side by side; with 2
#               or more GPUs also every GPU in one process and mpirun -n GPUS, and the
#               speed-ups
# Prints one summary line per part (also in $OUT/summary.txt); the logs go to
# $OUT/gpu_check.tgz. Exit status: 0 when every part that ran passed.
# Where the machine lacks the build's Debian libraries, .gpu/unpack-deps.sh brings them.
set -u
cd "$(dirname "$0")/.."
BASELINE=${1:-}
BUILD=${BUILD:-/tmp/nestsim-cuda}
BUDGET=${BUDGET:-540}
TEST_TIMEOUT=${TEST_TIMEOUT:-240}
# Tests at a time without MPS: processes on one GPU then do not overlap their kernels
# (the device time-slices between them), so more than a few only wait on each other.
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
device=$(nvidia-smi -i "$gpus" --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c |
         awk '{$1=$1" x"; print}' | paste -sd, -)
python=$(command -v python3)
echo "gpu_check: ${ngpu} GPU(s): ${device:-none}; $($python --version 2>&1) at $python;" \
     "$JOBS cores; budget $BUDGET s" | tee -a "$TOP/summary.txt"
if [ "$ngpu" -lt 1 ]; then
  summary device FAIL "no GPU (nvidia-smi lists none)"
  finish
fi

# --- build -----------------------------------------------------------------------------
arch=$(nvidia-smi -i "$first" --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
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
# The program and the benchmarks first (what a user or a benchmark run needs), timed on
# their own, then the rest (tests, examples, the module).
first_targets=(nestsim bench_hsx bench_simulator bench_scenario bench_output bench_brute bench_memory)
built=0
if timeout "$(left)" cmake --build "$BUILD" -j"$JOBS" --target "${first_targets[@]}" \
     > "$LOG/build.log" 2>&1; then
  program=$(( $(date +%s) - start ))
  # The gate's baseline bench_hsx, built once outside the tree, beside the rest.
  python3 bench/gpu_gate.py --build-only ${BASELINE:+--baseline "$BASELINE"} --jobs "$JOBS" \
    ${BASE_ARCHIVE:+--base-archive "$BASE_ARCHIVE"} \
    > "$LOG/gate_build.log" 2>&1 &
  gate_build=$!
  timeout "$(left)" cmake --build "$BUILD" -j"$JOBS" >> "$LOG/build.log" 2>&1 && built=1
fi
if [ "$built" = 0 ]; then
  grep -E "error" "$LOG/build.log" | head -20
  summary build FAIL "build failed or ran out of time (build.log)"
  finish
fi
summary build ok "$(( $(date +%s) - start )) s at -j$JOBS (the program and benchmarks alone first: $program s), $(grep -c 'warning' "$LOG/build.log") warning lines, sm_${arch:-90}"

# --- the benchmark gate, first, on a quiet GPU ------------------------------------------
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

# --- the speed of a step, on the quiet GPU ----------------------------------------------
# bench_scenario untimed (--phase-times 0, as `nestsim run` steps): the default model,
# the same tiled to 1e5 bodies, and the large-step model as simulated seconds per
# wall-clock hour (steps/s x dt). Reported, not judged: the goals are in
# docs/performance.md.
if ! out_of_time speed; then
  : > "$LOG/speed.log"
  speed_rate() {  # MODEL ARGS...: "steps/s dt simulated-s-per-hour"
    local out
    out=$(timeout 120 "$BUILD/bench/bench_scenario" --model "$@" --phase-times 0 2>&1)
    echo "$out" >> "$LOG/speed.log"
    echo "$out" | awk '/^steps  /{for (i = 1; i <= NF; ++i) if ($i == "dt") dt = $(i + 1)}
                       /^steps\/s/{r = $2} /^simulated s\/h/{h = $3} END {print r, dt, h}'
  }
  read -r small _ < <(speed_rate models/default.yaml --steps 5000 --warmup 200)
  read -r large _ < <(speed_rate models/default.yaml --bodies 100000 --steps 500 --warmup 20)
  line="default model ${small:-?} steps/s; tiled to 1e5 bodies ${large:-?} steps/s"
  if [ -f models/large_step.yaml ]; then
    read -r ls_rate ls_dt < <(speed_rate models/large_step.yaml --steps 2000 --warmup 100)
    line+="; models/large_step.yaml ${ls_rate:-?} steps/s at dt ${ls_dt:-?}: $(awk -v r="${ls_rate:-0}" -v d="${ls_dt%,*}" \
      'BEGIN {printf "%.0f", r * d * 1e-6 * 3600}') simulated s per hour"
  fi
  if [ -f models/receptor_cycle_physiological.yaml ]; then
    read -r ph_rate _ ph_h < <(speed_rate physiological --steps 2000 --warmup 100)
    read -r ph1e5_rate _ ph1e5_h < <(speed_rate physiological --bodies 100000 --steps 100 --warmup 10)
    line+="; the physiological receptor cycle ${ph_rate:-?} steps/s, ${ph_h:-?} simulated s per hour (at 1e5 bodies ${ph1e5_rate:-?} steps/s, ${ph1e5_h:-?} s per hour)"
  fi
  [ -n "$small" ] && [ -n "$large" ] && st=ok || st=FAIL
  summary speed "$st" "$line"
fi

# --- the tests, Python's and the validation suite side by side, under MPS ---------------
# Each test is a process of short launches. Processes on one GPU without MPS take turns
# on it (time slices), so a few at a time already wait on each other; under MPS (NVIDIA's
# Multi-Process Service) their kernels run side by side, and the host's cores set the
# pace. A private MPS daemon (pipe and log under $TOP) serves these parts and is quit
# before the ensemble rows, which measure what a user gets. MPS=0: without it.
mps=off
start_mps() {
  [ "${MPS:-1}" = 0 ] && return
  command -v nvidia-cuda-mps-control > /dev/null || return
  export CUDA_MPS_PIPE_DIRECTORY=$TOP/mps-pipe CUDA_MPS_LOG_DIRECTORY=$TOP/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if CUDA_VISIBLE_DEVICES=$gpus nvidia-cuda-mps-control -d; then
    mps=on
    trap stop_mps EXIT
  else
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  fi
}
stop_mps() {
  [ "$mps" = on ] || return 0
  echo quit | nvidia-cuda-mps-control > /dev/null 2>&1
  sleep 1
  mps=off
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  return 0
}
# device_ids IDS: the GPUs IDS as a client names them: under MPS, their places in the
# daemon's list ($gpus); without it, the ids themselves.
device_ids() {
  [ "$mps" = on ] || { echo "$1"; return; }
  local out=() i g want
  IFS=, read -r -a all <<< "$gpus"
  IFS=, read -r -a want_list <<< "$1"
  for want in "${want_list[@]}"; do
    i=0
    for g in "${all[@]}"; do [ "$g" = "$want" ] && out+=("$i"); i=$((i + 1)); done
  done
  (IFS=,; echo "${out[*]}")
}
# validation_result RC BUDGET: the summary line of a finished gpu_validation.sh run.
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
# The ensemble rows come last, with every GPU: the parts below stop ENSEMBLE_TIME before
# the budget ends (its two rows on one GPU took ~30 s on an H200, its five on two GPUs
# ~70 s).
reserve=${ENSEMBLE_TIME:-$([ "$ngpu" -ge 2 ] && echo 120 || echo 60)}
if ! out_of_time tests; then
  start_mps
  echo "gpu_check: MPS $mps" | tee -a "$TOP/summary.txt"
  # The validation suite on the GPUs but the first where there are 2 or more, else on it.
  vgpus=${others:-$first}
  nv=$(echo "$vgpus" | tr ',' '\n' | grep -c .)
  if [ "$mps" = on ]; then
    ctest_jobs=${CTEST_JOBS_MPS:-$(( JOBS / 4 > 4 ? JOBS / 4 : 4 ))}
    per_gpu=${PER_GPU:-$(( (JOBS - ctest_jobs - 2) / nv > 4 ? (JOBS - ctest_jobs - 2) / nv : 4 ))}
  else
    ctest_jobs=$CTEST_JOBS
    per_gpu=${PER_GPU:-4}
  fi
  budget=$(( $(left) - reserve ))
  start=$(date +%s)
  CUDA_VISIBLE_DEVICES=$(device_ids "$vgpus") PER_GPU=$per_gpu OUT=$LOG timeout "$budget" \
    bash bench/gpu_validation.sh "$BUILD" > "$LOG/validation.log" 2>&1 &
  validation_pid=$!
  python_versions=$($python -c "import numpy, pybind11; print('numpy', numpy.__version__, 'pybind11', pybind11.__version__)" 2>&1 | tail -1)
  CUDA_VISIBLE_DEVICES=$(device_ids "$first") timeout "$budget" ctest --test-dir "$BUILD" \
    -L "python|pip" -j2 --timeout "$TEST_TIMEOUT" --output-on-failure > "$LOG/python.log" 2>&1 &
  python_pid=$!
  CUDA_VISIBLE_DEVICES=$(device_ids "$first") timeout "$budget" ctest --test-dir "$BUILD" \
    -LE "validation|python|pip|page" -j"$ctest_jobs" --timeout "$TEST_TIMEOUT" --output-on-failure \
    > "$LOG/ctest.log" 2>&1
  rc=$?
  pages=$(ctest --test-dir "$BUILD" -N -L page | grep -c "Test *#")
  timeouts=$(grep -c "\*\*\*Timeout" "$LOG/ctest.log")
  if [ $rc -eq 0 ]; then
    summary ctest ok "$(ctest_line "$LOG/ctest.log") in $(( $(date +%s) - start )) s, $ctest_jobs at a time; $pages needing the viewer's page (node) not run"
  else
    summary ctest FAIL "rc=$rc, $timeouts timed out: $(ctest_line "$LOG/ctest.log"); $(
      grep -E '^\s+[0-9]+ - ' "$LOG/ctest.log" | grep -v '(Skipped)' | awk '{print $3}' | head -8 | paste -sd' ')"
  fi
  wait "$python_pid"
  rc=$?
  if [ $rc -eq 0 ]; then
    summary python ok "$(ctest_line "$LOG/python.log") ($python_versions)"
  else
    summary python FAIL "rc=$rc: $(ctest_line "$LOG/python.log") ($python_versions); $(
      grep -m3 -E 'Segmentation|Fatal Python|Error' "$LOG/python.log" | tr '\n' ' ' | cut -c1-200)"
  fi
  # Replicas in several processes on one GPU: 4 copies of the replicas test side by side
  # (a worker thread ending with queued work stalled here; sim::finish_thread_work).
  if [ "$(left)" -gt 70 ]; then
    start=$(date +%s); pids=()
    for k in 1 2 3 4; do
      CUDA_VISIBLE_DEVICES=$(device_ids "$first") PYTHONPATH="$BUILD/python" NESTSIM_BINARY="$BUILD/nestsim" \
        NESTSIM_SOURCE_DIR="$PWD" timeout 60 "$python" -m pytest -q -p no:cacheprovider \
        tests/python/test_replicas.py > "$LOG/replicas_$k.log" 2>&1 & pids+=($!)
    done
    ended=0
    for p in "${pids[@]}"; do wait "$p" && ended=$((ended + 1)); done
    if [ $ended -eq 4 ]; then
      summary replicas ok "4 processes of tests/python/test_replicas.py side by side on one GPU: all passed in $(( $(date +%s) - start )) s"
    else
      summary replicas FAIL "$((4 - ended)) of 4 processes of tests/python/test_replicas.py failed or stalled (60 s); $LOG/replicas_*.log"
    fi
  fi
  wait "$validation_pid"
  validation_result $? "$budget"
  stop_mps
fi

# --- ensemble throughput, without MPS ---------------------------------------------------
if ! out_of_time ensemble; then
  # 32 members of 2,000 steps: a process's start (a context per GPU, the model, the
  # store; about a second) is small beside each GPU's share of the members.
  JOBS="1 8" CUDA_VISIBLE_DEVICES=$gpus timeout "$(left)" bash tests/ensemble/gpu_throughput.sh "$BUILD/nestsim" \
    models/receptor_recycling.yaml "${ENSEMBLE_MEMBERS:-32}" > "$LOG/ensemble.log" 2>&1
  rc=$?
  rate() { grep -m1 "$1" "$LOG/ensemble.log" | sed -n 's/.*: *\([0-9.]*\) members\/s/\1/p'; }
  one=$(rate "^1 GPU, 1 member"); eight=$(rate "^1 GPU, 8 member")
  many=$(rate "GPUs, one process  "); mpi=$(rate "GPUs, mpirun"); many8=$(rate "GPUs, one process, 8")
  line=$(awk -v a="${one:-0}" -v e="${eight:-0}" -v b="${many:-0}" -v c="${mpi:-0}" -v d="${many8:-0}" \
             -v g="$ngpu" 'BEGIN {
    if (a <= 0) { print "no one-GPU rate"; exit }
    printf "members/s: 1 GPU %.3f, 8 at a time on it %.3f (%.2fx)", a, e, e / a
    if (g >= 2) printf "; %d GPUs one process %.3f (%.2fx), mpirun -n %d %.3f (%.2fx); 8 at a time on each %.3f (%.2fx the 8 on one)",
                       g, b, b / a, g, c, c / a, d, (e > 0 ? d / e : 0) }')
  st=ok
  [ $rc -eq 0 ] && [ -n "$one" ] && [ -n "$eight" ] || st=FAIL
  if [ "$ngpu" -ge 2 ] && { [ -z "$many" ] || [ -z "$mpi" ]; }; then st=FAIL; fi
  summary ensemble "$st" "$line"
fi
finish
