#!/bin/bash
# One device call that checks this tree against a baseline commit on the same machine:
# both built side by side; this tree's CUDA tests (but the validation label, which
# bench/gpu_validation.sh runs); pairs and trajectories compared bit for bit with the
# baseline's; the benchmarks of both interleaved on one GPU; compute-sanitizer; the
# Python module where the machine's python3 can build it. Meant for a host with 4 GPUs
# (one job per GPU), and works on fewer. From the repository root:
#
#   bash dev/gpu_verify.sh BASE.tar        (BASE.tar: `git archive BASE_COMMIT`)
#
# DEADLINE (seconds from the start, default 540) bounds every part. Logs in $OUT/logs
# (or /tmp/gpu_verify), a summary on stdout.
set -u
BASE_TAR=${1:?usage: gpu_verify.sh BASE.tar}
TOP=${OUT:-/tmp/gpu_verify}
LOG=$TOP/logs
mkdir -p "$LOG"
[ -f .gpu/unpack-deps.sh ] && eval "$(bash .gpu/unpack-deps.sh)"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
T0=$(date +%s)
DEADLINE=${DEADLINE:-540}
elapsed() { echo "$(( $(date +%s) - T0 )) s"; }
left() { echo $(( DEADLINE - $(date +%s) + T0 )); }
ngpu=$(nvidia-smi -L | wc -l)
gpu() { echo $(( $1 % ngpu )); }
nvidia-smi -L | tee "$LOG/device.txt"

# 1. The baseline (only what the comparisons need) beside this tree's full build.
rm -rf build/base-src && mkdir -p build/base-src && tar -xf "$BASE_TAR" -C build/base-src
(
  cmake -S build/base-src -B build/base-cuda -DCMAKE_BUILD_TYPE=Release -DNESTSIM_BACKEND=CUDA \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
    > "$LOG/base-configure.log" 2>&1 &&
  cmake --build build/base-cuda -j24 --target nestsim bench_hsx bench_simulator bench_scenario make_scene \
    > "$LOG/base-build.log" 2>&1
  echo "base build rc=$? at $(elapsed)" > "$LOG/base-build.status"
) &
base_pid=$!
# The Python module in a build of its own (the machine's python3 may not build it, and
# that must not stop the rest).
py=$(command -v python3)
(
  cmake --preset cuda -B build/cuda-py -DNESTSIM_BUILD_PYTHON=ON ${py:+-DPython_EXECUTABLE=$py} \
    > "$LOG/py-configure.log" 2>&1 &&
  cmake --build build/cuda-py -j16 --target nestsim_python > "$LOG/py-build.log" 2>&1
  echo "python module build rc=$? at $(elapsed)" > "$LOG/py-build.status"
) &
cmake --preset cuda -DNESTSIM_BUILD_PYTHON=OFF > "$LOG/configure.log" 2>&1
if ! cmake --build --preset cuda -j40 > "$LOG/build.log" 2>&1; then
  grep -E "error" "$LOG/build.log" | head -40
  tar -czf "$TOP/logs.tgz" -C "$TOP" logs
  exit 1
fi
echo "build $(elapsed); warnings: $(grep -c 'warning' "$LOG/build.log")"

# 2. The tests (GPU 0), compute-sanitizer (GPU 3), the Python module (GPU 1), side by side.
( CUDA_VISIBLE_DEVICES=$(gpu 0) timeout $(( $(left) - 20 )) ctest --preset cuda -LE validation -j6 \
    --timeout 400 > "$LOG/ctest.log" 2>&1; echo "ctest rc=$? at $(elapsed)" >> "$LOG/ctest.log" ) &
( CUDA_VISIBLE_DEVICES=$(gpu 3) OUT=$LOG TESTS="${SANITIZE_TESTS:-test_broadphase_paths test_reactions test_simulation}" \
    TOOLS="initcheck racecheck" bash dev/gpu_sanitize.sh $(( $(left) / 2 - 30 )) > "$LOG/sanitize.txt" 2>&1 ) &
( while [ ! -f "$LOG/py-build.status" ] && [ "$(left)" -gt 60 ]; do sleep 2; done
  cat "$LOG/py-build.status" 2>/dev/null; grep -E "error" "$LOG/py-build.log" | head -5
  if ls build/cuda-py/python/nestsim/_core*.so > /dev/null 2>&1; then
    export PYTHONPATH=$PWD/build/cuda-py/python:/opt/deps/usr/lib/python3/dist-packages CUDA_VISIBLE_DEVICES=$(gpu 1)
    timeout 120 "$py" -c "import nestsim, sys; print('nestsim', nestsim.__version__ if hasattr(nestsim, '__version__') else '', 'backend', getattr(nestsim, 'backend', '?'))"
    timeout 120 "$py" python/bench/run_overhead.py
    build/cuda/examples/make_scene cell 1000000 > "$TOP/cell1e6.csv" 2>/dev/null
    timeout 120 "$py" python/bench/pairs_vs_cli.py build/cuda/nestsim "$TOP/cell1e6.csv" 10
    NESTSIM_BINARY=$PWD/build/cuda/nestsim timeout 200 "$py" -m pytest -q tests/python 2>&1 | tail -25
  fi > "$LOG/python.log" 2>&1 ) &

# 3. Bit for bit against the baseline, then the benchmarks interleaved (GPU 2).
wait "$base_pid"
cat "$LOG/base-build.status"
export CUDA_VISIBLE_DEVICES=$(gpu 2)
B=build/base-cuda N=build/cuda
cmp_dir=$TOP/cmp
mkdir -p "$cmp_dir"
$B/examples/make_scene exponential 100000 0.1 7 > "$cmp_dir/exp.csv" 2>/dev/null
$B/examples/make_scene concentric 3000 > "$cmp_dir/conc.csv" 2>/dev/null
for scene in examples/scenes/cell.csv examples/scenes/concentric.csv "$cmp_dir/exp.csv" "$cmp_dir/conc.csv"; do
  for args in "" "--precision float" "--solid" "--skin 0.5"; do
    $B/nestsim pairs "$scene" $args -o "$cmp_dir/base.csv" 2>/dev/null
    $N/nestsim pairs "$scene" $args -o "$cmp_dir/new.csv" 2>/dev/null
    if cmp -s "$cmp_dir/base.csv" "$cmp_dir/new.csv"; then r=same; else r=DIFFERENT; fi
    echo "pairs $(basename "$scene") $args: $r ($(wc -l < "$cmp_dir/new.csv") lines)"
  done
done | tee "$LOG/bitwise.txt"
for m in models/default.yaml models/receptor_recycling.yaml; do
  $B/nestsim run "$m" --steps 3000 -o "$cmp_dir/base.h5" --force > /dev/null 2>&1
  $N/nestsim run "$m" --steps 3000 -o "$cmp_dir/new.h5" --force > /dev/null 2>&1
  # /observables/broadphase_pairs changed meaning on purpose (a function of the frame).
  d=$(h5diff -r "$cmp_dir/base.h5" "$cmp_dir/new.h5" 2>&1 | grep -E "^dataset|differences found" | grep -v broadphase_pairs | head -5)
  echo "trajectory $(basename "$m") 3000 steps: ${d:-same in every dataset but broadphase_pairs}"
done | tee -a "$LOG/bitwise.txt"
{
  for round in 1 2; do
    for v in base new; do
      [ "$v" = base ] && d=$B || d=$N
      echo "== $v round $round"
      timeout 100 $d/bench/bench_hsx --sizes 1e6,1e7 --repeats 10 --brute-max-n 0 2>&1 | grep -vE '^#' | tail -6
      timeout 60 $d/bench/bench_simulator --proteins 10000000 --steps 100 --output-every 0 2>&1 | grep -E 'body-steps' | head -2
      timeout 60 $d/bench/bench_scenario --bodies 1000000 --steps 200 2>&1 | grep -E 'steps/s|body-steps' | head -2
    done
  done
} > "$LOG/bench.txt" 2>&1
echo "bench done at $(elapsed)"

# 4. Ensembles: members per second of the receptor-recycling model on one GPU (one
# member at a time, and several side by side), on two GPUs from one process, and under
# mpirun over two ranks where this build has MPI (GPUs 1 and 2).
ens() {  # ens LABEL GPUS ARGS...: the time of one ensemble of 16 members, 3000 steps each
  local label=$1 gpus=$2; shift 2
  rm -rf "$TOP/ens"
  local t0; t0=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=$gpus timeout 120 "$@" > "$LOG/ens_$label.log" 2>&1
  local rc=$?
  awk -v a="$t0" -v b="$(date +%s.%N)" -v l="$label" -v rc=$rc \
    'BEGIN { printf "ensemble %s: rc=%d, %.1f s, %.2f members/s\n", l, rc, b - a, 16 / (b - a) }'

}
E="$N/nestsim ensemble models/receptor_recycling.yaml -o $TOP/ens --replicas 16 --steps 3000"
if [ "$(left)" -gt 90 ]; then
  {
    ens one_gpu_jobs1 "$(gpu 1)" $E --jobs 1
    ens one_gpu_jobs4 "$(gpu 1)" $E --jobs 4
    ens two_gpus "$(gpu 1),$(gpu 2)" $E --jobs 2
    if command -v mpirun > /dev/null && ldd "$N/nestsim" | grep -q libmpi; then
      ens mpirun_two_gpus "$(gpu 1),$(gpu 2)" mpirun --allow-run-as-root --oversubscribe -n 2 $E
    else
      echo "ensemble under mpirun: not measured (no MPI in this build or no mpirun)"
    fi
  } 2>&1 | tee "$LOG/ensemble.txt"
fi
wait
echo "== ctest"; grep -E "tests passed|tests failed|Failed|\*\*\*|Timeout|ctest rc" "$LOG/ctest.log" | head -20
echo "== sanitize"; cat "$LOG/sanitize.txt"
echo "== python"; tail -25 "$LOG/python.log"
echo "== bench"; cat "$LOG/bench.txt"
tar -czf "$TOP/logs.tgz" -C "$TOP" logs
