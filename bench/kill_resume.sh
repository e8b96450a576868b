#!/bin/bash
# kill -9 of `nestsim run` at a random moment, then `nestsim run --resume` of its file:
# counts the resumes that fail. A kill while HDF5 flushes can leave a chunk of a small
# series unreadable; a nestsim that repairs the file on resume (nestsim/io/repair.h)
# fails only where not even frame 0 reads (then it says so and exits 2).
#
#   bench/kill_resume.sh [N] [NESTSIM]     N rounds (default 40), the binary to test
#                                          (default build/cpu/nestsim)
#   KEEP=1 bench/kill_resume.sh ...        keeps every round's files, not only failures
#   FROM=0.3 TO=1.5 bench/kill_resume.sh   the kill's window in seconds (0.05-0.4)
#
# Each round runs tests/ensemble/decay.yaml (200 bodies, a frame every 40 steps) for
# 200,000 steps with one thread, kills it FROM-TO s after its file appears (a kill
# during the set-up leaves no frame to resume, whatever the reader), copies the file as
# the kill left it (kN.h5), and resumes it for 1 s (timeout: exit 124 means the resume
# was running, a success). Work files go to a temporary folder, printed at the end.
set -u
N=${1:-40}
here=$(cd "$(dirname "$0")/.." && pwd)
B=$(realpath "${2:-$here/build/cpu/nestsim}")
M=$here/tests/ensemble/decay.yaml
work=$(mktemp -d /tmp/kill_resume.XXXXXX)
cd "$work" || exit 1
FROM=${FROM:-0.05} TO=${TO:-0.4}
fail=0 repaired=0 lost=0
for i in $(seq "$N"); do
  OMP_NUM_THREADS=1 "$B" run "$M" --steps 200000 --set reactions.decay.rate=0.01 \
    -o "t$i.h5" >/dev/null 2>&1 &
  p=$!
  for _ in $(seq 1000); do [ -s "t$i.h5" ] && break; sleep 0.01; done  # created: frames come
  sleep "$(awk -v s="$RANDOM" -v a="$FROM" -v b="$TO" \
    'BEGIN { srand(s); printf "%.3f", a + (b - a) * rand() }')"
  kill -9 "$p"
  wait "$p" 2>/dev/null
  cp "t$i.h5" "k$i.h5"
  OMP_NUM_THREADS=1 timeout 1 "$B" run --resume "t$i.h5" --steps 200000 >"r$i.log" 2>&1
  rc=$?
  grep -q "was damaged" "r$i.log" && repaired=$((repaired + 1))
  grep -q "unreadable from frame 0" "r$i.log" && lost=$((lost + 1))
  if [ "$rc" != 124 ]; then
    fail=$((fail + 1))
    echo "FAIL $i rc=$rc: $(grep -v '^step' "r$i.log" | tail -2)"
  elif grep -q "was damaged" "r$i.log"; then
    echo "repaired $i: $(grep 'was damaged' "r$i.log")"
  fi
  if [ "$rc" = 124 ] && [ -z "${KEEP:-}" ] && ! grep -q "was damaged" "r$i.log"; then
    rm -f "t$i.h5" "k$i.h5" "r$i.log"
  fi
done
echo "failures $fail / $N ($lost of them: unreadable from frame 0), repaired $repaired" \
  "($B; kills $FROM-$TO s; files in $work)"
[ "$fail" = 0 ]
