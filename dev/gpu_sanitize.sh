#!/bin/bash
# compute-sanitizer's four tools (memcheck, racecheck, initcheck, synccheck) over the CUDA
# build's tests, one tool per GPU side by side where the machine has several. Run from
# the repository root after the CUDA build:
#
#   bash dev/gpu_sanitize.sh [SECONDS_PER_TOOL]      (default 300)
#
# TESTS (default: the simulator's, the reactions', the broad phase's one-process path
# comparison and the pair mapping's) names the test executables under build/cuda/tests;
# each tool runs them one after the other until its time is up. Logs in $OUT/sanitize/;
# prints, per tool and test, the errors found and whether the run completed.
set -u
LIMIT=${1:-300}
BUILD=${BUILD:-build/cuda}
TOP=${OUT:-/tmp/gpu_sanitize}/sanitize
mkdir -p "$TOP"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$ngpu" -ge 1 ] || ngpu=1
TESTS=${TESTS:-test_simulation test_reactions test_broadphase_paths test_pair_mapping}
run_tool() {
  local tool=$1 gpu=$2 end=$(( $(date +%s) + LIMIT ))
  for t in $TESTS; do
    local exe="$BUILD/tests/$t" left=$(( end - $(date +%s) ))
    [ -x "$exe" ] || { echo "$tool $t: no such test" > "$TOP/${tool}_$t.summary"; continue; }
    if [ "$left" -le 5 ]; then echo "$tool $t: not run (time)" > "$TOP/${tool}_$t.summary"; continue; fi
    CUDA_VISIBLE_DEVICES=$gpu timeout "$left" "$cs" --tool "$tool" --error-exitcode 99 \
      "$exe" --duration=true > "$TOP/${tool}_$t.log" 2>&1
    local rc=$? errors
    errors=$(grep -cE '^========= (Invalid|Uninitialized|Race|Barrier|Program hit|Error|Host API|Warp|Cuda)' "$TOP/${tool}_$t.log")
    local done="completed"
    [ "$rc" -eq 124 ] && done="stopped at the time limit"
    echo "$tool $t: rc=$rc, $done, error reports: $errors; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$TOP/${tool}_$t.log" | tail -1); test cases done: $(grep -c 's: ' "$TOP/${tool}_$t.log")" \
      > "$TOP/${tool}_$t.summary"
  done
}
i=0
for tool in ${TOOLS:-memcheck racecheck initcheck synccheck}; do
  run_tool "$tool" $((i % ngpu)) &
  i=$((i + 1))
done
wait
cat "$TOP"/*.summary
