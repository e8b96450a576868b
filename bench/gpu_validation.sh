#!/bin/bash
# The validation suite (tests/validation/, label `validation`) on a GPU machine, one
# process per check and seed, spread over the GPUs the machine has. Its small systems are
# latency-bound on a GPU (a step costs launches, not arithmetic), so one process runs a
# check several times slower than a CPU core does; side by side over many processes and
# GPUs the whole suite fits one device call. Run from the repository root after the CUDA
# build (dev/gpu_suite.sh build):
#
#   bash bench/gpu_validation.sh [BUILD_DIR]     (default build/cuda)
#
# Each process runs one test case at one seed (NESTSIM_VALIDATION_SEEDS=1); the joined
# output goes through tools/validation_table.py, which applies the suite's two-seed rule.
# Logs in $OUT/validation/ (or /tmp/gpu_validation); exit 1 when any check fails.
set -u
BUILD=${1:-build/cuda}
TOP=${OUT:-/tmp/gpu_validation}/validation
mkdir -p "$TOP"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$ngpu" -ge 1 ] || ngpu=1
seed=${NESTSIM_VALIDATION_SEED:-1}
T0=$(date +%s)
i=0
pids=()
for exe in "$BUILD"/tests/validation/validation_*; do
  [ -x "$exe" ] || continue
  name=$(basename "$exe")
  while IFS= read -r tc; do
    for s in "$seed" $((seed + 1)); do
      log="$TOP/${name}_$(echo "$tc" | tr -c 'A-Za-z0-9' '_' | cut -c13-40)_$s.log"
      # doctest's filters split at commas; '?' matches the comma instead.
      filter=${tc//,/?}
      if [ -n "${DRY:-}" ]; then echo "$name --test-case=$filter -> $log"; continue; fi
      CUDA_VISIBLE_DEVICES=$((i % ngpu)) OMP_NUM_THREADS=1 NESTSIM_VALIDATION_SEEDS=1 \
        NESTSIM_VALIDATION_SEED=$s "$exe" --test-case="$filter" > "$log" 2>&1 &
      pids+=($!)
      i=$((i + 1))
    done
  done < <("$exe" --list-test-cases --no-version 2>/dev/null | grep '^validation:')
done
echo "gpu_validation: $i processes on $ngpu GPU(s)"
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
echo "gpu_validation: $(( $(date +%s) - T0 )) s, $failed process(es) failed"
grep -l "FAILED\|ERROR" "$TOP"/*.log 2>/dev/null | sed 's/^/  failed: /'
if command -v python3 > /dev/null; then
  python3 tools/validation_table.py "$TOP"/*.log > "$TOP/table.md" 2>&1
  grep -E "fail" "$TOP/table.md" | head -20
fi
[ "$failed" -eq 0 ]
