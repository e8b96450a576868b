// Thrust's CPU systems side by side on the shape of one step of the default model: 30
// light loops over 2,073 items, one heavier loop over 30,000, 4 fills and 2 scans, each a
// parallel region (37 per step). Built apart from CMake, once per system (each command
// on one line; I=/usr/local/cuda/include/cccl):
//
//   g++ -O2 -std=c++17 -fopenmp -I$I -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP
//       bench/cpu_regions.cpp -o cpu_regions_omp
//   g++ -O2 -std=c++17 -I$I -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_TBB
//       bench/cpu_regions.cpp -o cpu_regions_tbb -ltbb        (Debian: libtbb-dev)
//
//   taskset -c 0,1 ./cpu_regions_omp STEPS [SERIAL_BELOW]
//
// prints the time per step; SERIAL_BELOW runs loops of fewer items with thrust::seq.
// docs/performance.md ("The CPU backend on shared cores") has the measurements.
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

struct Light {
  double* x;
  const double* y;
  void operator()(uint32_t i) const { x[i] = 0.5 * x[i] + y[i] * 1.0001; }
};
struct Heavy {
  double* x;
  const double* y;
  uint32_t n;
  void operator()(uint32_t i) const {
    double s = 0;
    for (uint32_t k = 0; k < 8; ++k) s += y[(i * 7 + k) % n] * 1e-3;
    x[i % n] += s * 1e-9;
  }
};

template <class F>
void loop(uint32_t n, F f, uint32_t serial_below) {
  const thrust::counting_iterator<uint32_t> first(0);
  if (n < serial_below)
    thrust::for_each_n(thrust::seq, first, n, f);
  else
    thrust::for_each_n(thrust::device, first, n, f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cpu_regions STEPS [SERIAL_BELOW]\n");
    return 2;
  }
  const int steps = std::atoi(argv[1]);
  const uint32_t serial_below = argc > 2 ? uint32_t(std::atoi(argv[2])) : 0;
  const uint32_t n = 2073, m = 30000;
  thrust::device_vector<double> x(m, 1.0), y(m, 2.0);
  thrust::device_vector<uint32_t> counts(n + 1, 1u), offsets(n + 1);
  double* px = thrust::raw_pointer_cast(x.data());
  const double* py = thrust::raw_pointer_cast(y.data());
  uint32_t* pc = thrust::raw_pointer_cast(counts.data());
  uint32_t* po = thrust::raw_pointer_cast(offsets.data());
  const bool serial = n < serial_below;
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    for (int k = 0; k < 30; ++k) loop(n, Light{px, py}, serial_below);
    loop(m, Heavy{px, py, n}, serial_below);
    for (int k = 0; k < 4; ++k) {
      if (serial)
        thrust::fill(thrust::seq, px, px + n, 0.0);
      else
        thrust::fill(thrust::device, px, px + n, 0.0);
    }
    for (int k = 0; k < 2; ++k) {
      if (serial)
        thrust::exclusive_scan(thrust::seq, pc, pc + n + 1, po);
      else
        thrust::exclusive_scan(thrust::device, pc, pc + n + 1, po);
    }
  }
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%.1f us/step (%d steps, %.3f s)\n", 1e6 * t / steps, steps, t);
  return 0;
}
