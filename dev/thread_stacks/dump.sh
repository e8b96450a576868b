#!/bin/bash
# Every thread's stack of a running process that was started with
# LD_PRELOAD=/tmp/stackdump.so (where gdb is missing or cannot attach): each thread gets
# SIGUSR2 and writes its backtrace to /tmp/stk_PID.txt; the frames are then named with
# addr2line (this tree's libraries built with -g) and nm (libc).
#   gcc -O1 -g -shared -fPIC -o /tmp/stackdump.so dev/thread_stacks/stackdump.c
#   gcc -o /tmp/tgkill dev/thread_stacks/tgkill.c
#   LD_PRELOAD=/tmp/stackdump.so python3 ... &      then: bash dev/thread_stacks/dump.sh PID
set -u
p=${1:?usage: dump.sh PID}
cp "/proc/$p/maps" "/tmp/maps_$p"
for t in /proc/"$p"/task/*; do
  echo "$(basename "$t") $(awk '{print $3, $14}' "$t/stat") $(cat "$t/wchan") $(cat "$t/comm")"
done
for t in /proc/"$p"/task/*; do /tmp/tgkill "$p" "$(basename "$t")" 12; sleep 0.05; done
sleep 0.5
python3 "$(dirname "$0")/resolve.py" "$p"
