// Device buffers: raw pointers, growing buffers, count -> scan, radix widths.
#pragma once
#include <thrust/device_vector.h>
#include <thrust/scan.h>

#include <cstdint>

#include "nestsim/device/exec.cuh"

namespace nestsim::detail {

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}
template <class T>
const T* raw(const thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

// Grows a buffer (never shrinks it, so repeated calls do not reallocate); its contents
// are not kept (exec.cuh, release).
template <class T>
void ensure_size(thrust::device_vector<T>& v, std::size_t n) {
  if (v.size() < n) {
    release(v);
    v.resize(n);
  }
}

// Exclusive scan of counts[0..n) into offsets[0..n], left on the device (offsets[n]
// is the total); offsets[0] is written only when the buffer is new (it stays 0).
template <class Policy>
void scan_counts_async(const Policy& exec, const thrust::device_vector<uint64_t>& counts,
                       thrust::device_vector<uint64_t>& offsets, std::size_t n) {
  ensure_size(offsets, n + 1);  // a new buffer is zero-filled
  thrust::inclusive_scan(exec, counts.begin(), counts.begin() + n, offsets.begin() + 1);
}

// The same, returning the total to the host (which waits for it).
template <class Policy>
uint64_t scan_counts(const Policy& exec, const thrust::device_vector<uint64_t>& counts,
                     thrust::device_vector<uint64_t>& offsets, std::size_t n) {
  scan_counts_async(exec, counts, offsets, n);
  return offsets[n];
}


// The bits a radix sort needs for values below `count` (at least 1, at most 32): the
// keys of the sort into cells, the packed pair keys, and fit_radix_passes' plan of the
// former's passes.
inline int radix_bits(uint64_t count) {
  int bits = 1;
  while (bits < 32 && (uint64_t(1) << bits) < count) ++bits;
  return bits;
}

}  // namespace nestsim::detail
