#!/bin/bash
# The stall of python_test_replicas on one GPU (H200, driver 580.159, 2026-11-28): 4 pytest
# processes of tests/python/test_replicas.py side by side, with and without
# OMP_NUM_THREADS=1 and a private MPS daemon; a process still running after 25 s (one alone
# takes ~8 s) is listed with its threads' states (R: spinning; S + wchan: sleeping).
# At 1f8a423, 3-4 of 4 stalled in every trial: the main thread in Replicas::run's join, a
# worker in the driver's thread-exit clean-up (libcuda under __nptl_deallocate_tsd, on a
# lock) and a driver thread in a sched_yield loop. With each worker's per-thread stream
# synchronised before it ends (sim::finish_thread_work), 0 of 8 stalled; so did a pool of
# threads that never end. bench/gpu_check.sh runs the 4 side by side as its replicas part.
# Usage, from the repository root: bash dev/gpu_replicas_hang.sh BUILD_DIR  (a CUDA build
# with the Python module, e.g. the tree bench/gpu_check.sh leaves in /tmp/nestsim-cuda).
set -u
B=${1:?usage: dev/gpu_replicas_hang.sh BUILD_DIR}
py=$(command -v python3)
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} PYTHONPATH=$B/python NESTSIM_BINARY=$B/nestsim \
       NESTSIM_SOURCE_DIR=$PWD PYTHONDONTWRITEBYTECODE=1
trial() {  # NAME ENV...
  local name=$1; shift; local pids=() w hung=0
  for k in 1 2 3 4; do
    env "$@" "$py" -m pytest -q -x -p no:cacheprovider tests/python/test_replicas.py \
      > "/tmp/replicas_$name$k.log" 2>&1 & pids+=($!)
  done
  for w in $(seq 1 25); do
    sleep 1; local a=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && a=1; done
    [ $a = 0 ] && break
  done
  for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null || continue
    hung=$((hung + 1))
    if [ $hung = 1 ]; then
      echo "--- $name: pid $p, threads (count, state, utime, wchan, name):"
      for t in /proc/"$p"/task/*; do
        echo "$(awk '{print $3, $14}' "$t/stat") $(cat "$t/wchan") $(cat "$t/comm")"
      done | sort | uniq -c
    fi
    kill -9 "$p"
  done
  echo "=== $name: $hung of 4 still running after $w s"
}
trial plain
trial omp1 OMP_NUM_THREADS=1
if command -v nvidia-cuda-mps-control > /dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/replicas-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/replicas-mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && trial mps && trial mps_omp1 OMP_NUM_THREADS=1
  echo quit | nvidia-cuda-mps-control
fi
