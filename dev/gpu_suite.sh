#!/bin/bash
# One device call that builds this tree for CUDA and runs, within the call's 10 minutes:
# the whole test suite (ctest --preset cuda, validation included), compute-sanitizer over
# the simulator's and the broad phase's tests, and the simulator and scenario
# benchmarks. Run it on the GPU machine from the repository root; where that machine
# lacks the build's Debian packages, carry them under .gpu/ with an unpack-deps.sh that
# the script sources (as dev/h100_ab.sh does):
#
#   bash dev/gpu_suite.sh [PARTS]
#
# PARTS: any of build,test,sanitize,bench (default: all of them, in that order);
# "test:REGEX" runs only the ctest entries matching REGEX. CTEST_BUDGET (seconds from
# the start, default 570) bounds the tests; SANITIZE_TOOLS and SANITIZE_TESTS narrow
# compute-sanitizer's runs.
# Logs go to $OUT/logs, packed into $OUT/logs.tgz (the device tool brings back only a
# few files per call); a summary is printed.
set -u
PARTS=${1:-build,test,sanitize,bench}
TOP=${OUT:-/tmp/gpu_suite}
LOG=$TOP/logs
mkdir -p "$LOG"
[ -f .gpu/unpack-deps.sh ] && eval "$(bash .gpu/unpack-deps.sh)"
T0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - T0 )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$LOG/device.txt" 2>&1
echo "device: $(cat "$LOG/device.txt")"
has() { [[ ",$PARTS," == *",$1"* ]]; }

if has build; then
  cmake --preset cuda > "$LOG/configure.log" 2>&1
  if ! cmake --build --preset cuda -j16 > "$LOG/build.log" 2>&1; then
    grep -E "error" "$LOG/build.log" | head -40
    tar -czf "$TOP/logs.tgz" -C "$TOP" logs
    exit 1
  fi
  echo "build $(elapsed); warnings: $(grep -c 'warning' "$LOG/build.log")"
fi

if has test; then
  regex=$(echo ",$PARTS," | sed -n 's/.*,test:\([^,]*\),.*/\1/p')
  # shellcheck disable=SC2086
  # What is left of the call's 10 minutes (less a margin for the logs' tarball).
  left=$(( ${CTEST_BUDGET:-570} - $(date +%s) + T0 ))
  timeout "$left" ctest --preset cuda -j"${CTEST_JOBS:-4}" --timeout "$left" ${regex:+-R "$regex"} \
    > "$LOG/ctest.log" 2>&1
  echo "ctest rc=$? $(elapsed): $(grep -E 'tests passed|tests failed' "$LOG/ctest.log")"
  grep -E "Failed|\*\*\*|Not Run|Timeout" "$LOG/ctest.log" | head -20
  grep -h "^VALIDATION|" build/cuda/Testing/Temporary/LastTest.log > "$LOG/validation.txt" 2>/dev/null
  echo "validation lines: $(wc -l < "$LOG/validation.txt")"
fi

if has sanitize; then
  # compute-sanitizer's four tools over the simulator's fast tests (the slow statistical
  # suites would take far longer under it).
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}; do
    for t in ${SANITIZE_TESTS:-test_simulation test_broadphase}; do
      args=""
      [ "$t" = test_broadphase ] && args="--test-case=*every*method*"
      timeout 120 "$cs" --tool "$tool" --error-exitcode 99 "build/cuda/tests/$t" $args \
        > "$LOG/cs_${tool}_$t.log" 2>&1
      rc=$?
      echo "compute-sanitizer $tool $t rc=$rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/cs_${tool}_$t.log" | tail -1)"
    done
  done
  echo "sanitize $(elapsed)"
fi

if has bench; then
  timeout 120 build/cuda/bench/bench_simulator --proteins 10000000 --steps 100 --output-every 0 \
    > "$LOG/bench_simulator_1e7.log" 2>&1
  echo "bench_simulator 1e7: $(grep -E 'body-steps' "$LOG/bench_simulator_1e7.log" | head -3 | tr '\n' ' ')"
  timeout 120 build/cuda/bench/bench_scenario --bodies 1000000 --steps 200 \
    > "$LOG/bench_scenario_1e6.log" 2>&1
  echo "bench_scenario 1e6: $(grep -E 'steps/s|body-steps' "$LOG/bench_scenario_1e6.log" | head -3 | tr '\n' ' ')"
  echo "bench $(elapsed)"
fi
tar -czf "$TOP/logs.tgz" -C "$TOP" logs
