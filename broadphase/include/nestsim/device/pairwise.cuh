// All-pairs evaluation of any symmetric pairwise predicate, for counting and for
// listing, over an exchangeable schedule (which work item tests which pairs). Needs
// Thrust; compiled by nvcc (CUDA backend) or as C++ (CPU backend).
//
// A Schedule is a small POD with
//   uint64_t items() const;                                  // work items
//   template <class Visit> NESTSIM_HD void visit(uint64_t item, Visit& v) const;
//       // calls v(a, b) for every pair {a, b} of the item: every unordered pair of
//       // bodies belongs to exactly one item, exactly once
//   static constexpr bool sorted;  // items in order, pairs within an item in order,
//                                  // yield ascending pair_key()s (no sort needed)
// A Predicate is a POD with NESTSIM_HD bool operator()(uint32_t a, uint32_t b) const,
// symmetric in (a, b).
//
// Listing is count -> exclusive scan -> write (docs/design.md); pairs come out as
// pair_key()s, sorted ascending. The mapping schedule also lists through a one-bit
// mask per pair index (gpu-mapping-function seed, section 3.4), see pairwise_mask().
#pragma once
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <cstdint>

#include "nestsim/device/pair_finder.cuh"
#include "nestsim/hd.h"
#include "nestsim/pair_mapping.h"

namespace nestsim::device {

// ---------------------------------------------------------------------------------
// Schedules over n bodies.

// The straightforward parallelisation (pairwise seed, Algorithm 3 and section V): item
// i tests i against every later body j. Rows come in segments of kSegment bodies, one
// CUDA block each in the seed's code, and a row walks its columns in segments of the
// same size; row i does n - 1 - i tests, so the early segments carry most of the work.
struct RowSchedule {
  static constexpr bool sorted = true;
  static constexpr uint32_t kSegment = 1024;
  uint32_t n = 0;

  uint64_t items() const { return n; }
  template <class Visit>
  NESTSIM_HD void visit(uint64_t item, Visit& v) const {
    const uint32_t i = uint32_t(item);
    for (uint32_t first = i + 1; first < n; first = (first / kSegment + 1) * kSegment) {
      const uint32_t segment_end = (first / kSegment + 1) * kSegment;
      const uint32_t last = segment_end < n ? segment_end : n;
      for (uint32_t j = first; j < last; ++j) v(i, j);
    }
  }
};

// The balanced circular schedule (pairwise seed, section IV, Algorithm 4): item i tests
// i against (i + s) mod n for s = 1 .. steps(i). Odd n: steps = (n - 1) / 2 for every
// item (Propositions 1 and 2). Even n: steps = n / 2 - 1, and the first half of the
// items take one more step (s = n / 2), which would otherwise pair i and i + n / 2 from
// both sides. Every item does the same work, give or take one test.
struct CircularSchedule {
  static constexpr bool sorted = false;
  uint32_t n = 0;

  NESTSIM_HD static uint32_t steps(uint32_t i, uint32_t n) {
    if (n % 2 == 1) return (n - 1) / 2;
    return n / 2 - 1 + (i < n / 2 ? 1 : 0);
  }
  uint64_t items() const { return n; }
  template <class Visit>
  NESTSIM_HD void visit(uint64_t item, Visit& v) const {
    const uint32_t i = uint32_t(item);
    const uint32_t s_end = steps(i, n);
    // (i + s) mod n without a division: count up to n, then wrap once.
    uint32_t j = i + 1;
    for (uint32_t s = 1; s <= s_end; ++s, ++j) {
      if (j == n) j = 0;
      v(i, j);
    }
  }
};

// Index -> pair mappings of the gpu-mapping-function seed (pair_mapping.h): `indices`
// indices, of which those that name a pair give (a, b), a < b.
struct SqrtMapping {  // section 3.2.1, with the section 3.3 corrections
  uint32_t n = 0;
  NESTSIM_HD uint64_t indices() const { return pair_index_count(n); }
  NESTSIM_HD bool pair(uint64_t k, uint32_t& a, uint32_t& b) const {
    pair_from_index(k, n, a, b);
    return true;
  }
};
struct LazyMapping {  // section 3.2.2: k / n, k % n, half the indices thrown away
  uint32_t n = 0;
  NESTSIM_HD uint64_t indices() const { return lazy_index_count(n); }
  NESTSIM_HD bool pair(uint64_t k, uint32_t& a, uint32_t& b) const {
    return pair_from_index_lazy(k, n, a, b);
  }
};

// One item per mask word: the kMaskWordBits consecutive indices of the word, each
// mapped to its pair by arithmetic only (no memory read). Both mappings number pairs
// row by row, so index order is key order.
template <class Mapping>
struct MappingSchedule {
  static constexpr bool sorted = true;
  Mapping mapping;

  uint64_t items() const { return mask_word_count(mapping.indices()); }
  template <class Visit>
  NESTSIM_HD void visit(uint64_t item, Visit& v) const {
    const uint64_t first = item * kMaskWordBits;
    const uint64_t end = mapping.indices();
    const uint64_t last = first + kMaskWordBits < end ? first + kMaskWordBits : end;
    uint32_t a = 0, b = 0;
    for (uint64_t k = first; k < last; ++k)
      if (mapping.pair(k, a, b)) v(a, b);
  }
};

// ---------------------------------------------------------------------------------
// Counting and listing.

namespace pairwise_detail {

template <class Predicate>
struct CountVisit {
  const Predicate& predicate;
  uint64_t count;
  NESTSIM_HD void operator()(uint32_t a, uint32_t b) {
    if (predicate(a, b)) ++count;
  }
};

template <class Predicate>
struct WriteVisit {
  const Predicate& predicate;
  uint64_t* out;
  NESTSIM_HD void operator()(uint32_t a, uint32_t b) {
    if (predicate(a, b)) *out++ = pair_key(a, b);
  }
};

template <class Schedule, class Predicate>
struct CountItem {
  Schedule schedule;
  Predicate predicate;
  NESTSIM_HD uint64_t operator()(uint64_t item) const {
    CountVisit<Predicate> v{predicate, 0};
    schedule.visit(item, v);
    return v.count;
  }
};

template <class Schedule, class Predicate>
struct StoreCount {
  CountItem<Schedule, Predicate> count;
  uint64_t* counts;
  NESTSIM_HD void operator()(uint64_t item) const { counts[item] = count(item); }
};

template <class Schedule, class Predicate>
struct WriteItem {
  Schedule schedule;
  Predicate predicate;
  const uint64_t* offsets;
  uint64_t* keys;
  NESTSIM_HD void operator()(uint64_t item) const {
    WriteVisit<Predicate> v{predicate, keys + offsets[item]};
    schedule.visit(item, v);
  }
};

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

template <class T>
void grow(thrust::device_vector<T>& v, std::size_t n) {
  if (v.size() < n) {
    v.clear();
    v.shrink_to_fit();
    v.resize(n);
  }
}

template <class F>
void for_each_item(uint64_t n, F f) {
  if (n == 0) return;
  thrust::for_each_n(thrust::device, thrust::counting_iterator<uint64_t>(0), n, f);
}

}  // namespace pairwise_detail

// Work space of pairwise_list(), kept between calls.
struct PairwiseBuffers {
  thrust::device_vector<uint64_t> counts, offsets;
  thrust::device_vector<uint32_t> mask;  // pairwise_mask(): one bit per index
  thrust::device_vector<uint8_t> bytes;  // pairwise_mask(): one byte per index
};

// The number of pairs {a, b} with predicate(a, b): one reduction, nothing stored.
template <class Schedule, class Predicate>
uint64_t pairwise_count(const Schedule& schedule, const Predicate& predicate) {
  const uint64_t items = schedule.items();
  if (items == 0) return 0;
  return thrust::transform_reduce(thrust::device, thrust::counting_iterator<uint64_t>(0),
                                 thrust::counting_iterator<uint64_t>(items),
                                 pairwise_detail::CountItem<Schedule, Predicate>{schedule, predicate},
                                 uint64_t(0), thrust::plus<uint64_t>());
}

// Lists the pairs with predicate(a, b) as pair_key()s at keys[0 .. count), sorted
// ascending (keys grows when needed; entries past count are unspecified). Returns count.
template <class Schedule, class Predicate>
uint64_t pairwise_list(const Schedule& schedule, const Predicate& predicate,
                       thrust::device_vector<uint64_t>& keys, PairwiseBuffers& buffers) {
  using namespace pairwise_detail;
  const uint64_t items = schedule.items();
  if (items == 0) return 0;
  grow(buffers.counts, items + 1);
  grow(buffers.offsets, items + 1);
  const CountItem<Schedule, Predicate> count{schedule, predicate};
  for_each_item(items, StoreCount<Schedule, Predicate>{count, raw(buffers.counts)});
  buffers.counts[items] = 0;
  thrust::exclusive_scan(thrust::device, buffers.counts.begin(),
                         buffers.counts.begin() + items + 1, buffers.offsets.begin(),
                         uint64_t(0));
  const uint64_t total = buffers.offsets[items];
  if (total == 0) return 0;
  grow(keys, total);
  for_each_item(items, WriteItem<Schedule, Predicate>{schedule, predicate,
                                                      raw(buffers.offsets), raw(keys)});
  if (!Schedule::sorted) thrust::sort(thrust::device, keys.begin(), keys.begin() + total);
  return total;
}

// ---------------------------------------------------------------------------------
// Result masks (gpu-mapping-function seed, section 3.4): the predicate of every index
// of a mapping, stored one bit per index (Bits = 1) or one byte per index (Bits = 8,
// the seed's comparison), then compacted into pair keys in index order. Indices are
// taken in batches of `batch` so that the mask of a large n fits in memory.

namespace pairwise_detail {

// One mask word: each thread tests kMaskWordBits indices and writes the word once, so
// no two threads share a word (the seed's threads OR into a shared byte instead).
template <class Mapping, class Predicate>
struct FillBits {
  Mapping mapping;
  Predicate predicate;
  uint64_t first, last;  // the batch's indices
  uint32_t* words;
  NESTSIM_HD void operator()(uint64_t w) const {
    const uint64_t k0 = first + w * kMaskWordBits;
    const uint64_t k1 = k0 + kMaskWordBits < last ? k0 + kMaskWordBits : last;
    uint32_t word = 0, a = 0, b = 0;
    for (uint64_t k = k0; k < k1; ++k)
      if (mapping.pair(k, a, b) && predicate(a, b)) word |= mask_bit(k - first);
    words[w] = word;
  }
};

template <class Mapping, class Predicate>
struct FillBytes {
  Mapping mapping;
  Predicate predicate;
  uint64_t first;
  uint8_t* bytes;
  NESTSIM_HD void operator()(uint64_t k) const {
    uint32_t a = 0, b = 0;
    bytes[k] = (mapping.pair(first + k, a, b) && predicate(a, b)) ? 1 : 0;
  }
};

// The word w of a mask: stored (bits) or gathered from kMaskWordBits bytes.
struct BitWords {
  const uint32_t* words;
  NESTSIM_HD uint32_t operator()(uint64_t w) const { return words[w]; }
};
struct ByteWords {
  const uint8_t* bytes;
  uint64_t size;
  NESTSIM_HD uint32_t operator()(uint64_t w) const {
    uint32_t word = 0;
    const uint64_t k0 = w * kMaskWordBits;
    for (uint32_t bit = 0; bit < kMaskWordBits && k0 + bit < size; ++bit)
      if (bytes[k0 + bit]) word |= uint32_t(1) << bit;
    return word;
  }
};

template <class Words>
struct WordCount {
  Words words;
  NESTSIM_HD uint64_t operator()(uint64_t w) const { return uint64_t(popcount32(words(w))); }
};

template <class Words>
struct StoreWordCount {
  Words words;
  uint64_t* counts;
  NESTSIM_HD void operator()(uint64_t w) const { counts[w] = uint64_t(popcount32(words(w))); }
};

template <class Mapping, class Words>
struct CompactWord {
  Mapping mapping;
  Words words;
  uint64_t first;
  const uint64_t* offsets;
  uint64_t* keys;
  NESTSIM_HD void operator()(uint64_t w) const {
    uint64_t* out = keys + offsets[w];
    uint32_t a = 0, b = 0;
    for (uint32_t word = words(w); word != 0; word &= word - 1) {
      mapping.pair(first + w * kMaskWordBits + uint64_t(lowest_bit32(word)), a, b);
      *out++ = pair_key(a, b);
    }
  }
};

}  // namespace pairwise_detail

// Fills the mask of indices [first, last) of `mapping`: Bits = 1 into buffers.mask
// (bit k - first), Bits = 8 into buffers.bytes (byte k - first).
template <int Bits, class Mapping, class Predicate>
void pairwise_mask(const Mapping& mapping, const Predicate& predicate, uint64_t first,
                   uint64_t last, PairwiseBuffers& buffers) {
  static_assert(Bits == 1 || Bits == 8, "one bit or one byte per pair");
  using namespace pairwise_detail;
  if (Bits == 1) {
    const uint64_t words = mask_word_count(last - first);
    grow(buffers.mask, words);
    for_each_item(words, FillBits<Mapping, Predicate>{mapping, predicate, first, last,
                                                     raw(buffers.mask)});
  } else {
    grow(buffers.bytes, last - first);
    for_each_item(last - first,
                  FillBytes<Mapping, Predicate>{mapping, predicate, first, raw(buffers.bytes)});
  }
}

// Counts (keys == nullptr) or lists the pairs of a mapping through its mask, `batch`
// indices at a time (a multiple of kMaskWordBits). Listed keys come out sorted.
template <int Bits, class Mapping, class Predicate>
uint64_t pairwise_through_mask(const Mapping& mapping, const Predicate& predicate,
                               thrust::device_vector<uint64_t>* keys, PairwiseBuffers& buffers,
                               uint64_t batch = uint64_t(1) << 28) {
  using namespace pairwise_detail;
  batch = std::max<uint64_t>(kMaskWordBits, batch / kMaskWordBits * kMaskWordBits);
  const uint64_t indices = mapping.indices();
  uint64_t total = 0;
  for (uint64_t first = 0; first < indices; first += batch) {
    const uint64_t last = std::min(indices, first + batch);
    const uint64_t words = mask_word_count(last - first);
    pairwise_mask<Bits>(mapping, predicate, first, last, buffers);
    auto compact = [&](auto word_of) {
      using Words = decltype(word_of);
      if (!keys) {
        total += thrust::transform_reduce(thrust::device, thrust::counting_iterator<uint64_t>(0),
                                          thrust::counting_iterator<uint64_t>(words),
                                          WordCount<Words>{word_of}, uint64_t(0),
                                          thrust::plus<uint64_t>());
        return;
      }
      grow(buffers.counts, words + 1);
      grow(buffers.offsets, words + 1);
      for_each_item(words, StoreWordCount<Words>{word_of, raw(buffers.counts)});
      buffers.counts[words] = 0;
      thrust::exclusive_scan(thrust::device, buffers.counts.begin(),
                             buffers.counts.begin() + words + 1, buffers.offsets.begin(),
                             uint64_t(0));
      const uint64_t found = buffers.offsets[words];
      if (found == 0) return;
      if (keys->size() < total + found) {
        thrust::device_vector<uint64_t> bigger(std::max<uint64_t>(total + found, keys->size() * 3 / 2));
        thrust::copy_n(thrust::device, keys->begin(), total, bigger.begin());
        keys->swap(bigger);
      }
      for_each_item(words, CompactWord<Mapping, Words>{mapping, word_of, first,
                                                        raw(buffers.offsets), raw(*keys) + total});
      total += found;
    };
    if (Bits == 1)
      compact(BitWords{raw(buffers.mask)});
    else
      compact(ByteWords{raw(buffers.bytes), last - first});
  }
  return total;
}

}  // namespace nestsim::device
