// The grid's column arithmetic (broadphase/src/common/grid.cuh) against enumeration:
// rows_before, the prefix of a window's columns that the sorted-order rule skips whole,
// must equal the columns that row_before skips one by one wherever it claims the
// columns after it need no check (and claim no prefix, and ask for the check on each
// column, where the window wraps a periodic box).
#include <doctest/doctest.h>

#include <cstdint>
#include <random>

#include "common/grid.cuh"

using nestsim::detail::ColumnCursor;
using nestsim::detail::GridSpec;
using nestsim::detail::LargePlan;
using nestsim::detail::row_before;
using nestsim::detail::rows_before;
using nestsim::detail::RowSkip;

namespace {
template <int Dim>
void check_random_windows(uint64_t seed, bool periodic, int trials) {
  std::mt19937_64 rng(seed);
  auto pick = [&](long long lo, long long hi) {
    return std::uniform_int_distribution<long long>(lo, hi)(rng);
  };
  int prefixes = 0, skipped = 0, wrapping = 0;
  for (int t = 0; t < trials; ++t) {
    GridSpec g;
    g.dim = Dim;
    g.periodic = periodic;
    g.dense = true;
    for (int a = 0; a < 3; ++a) g.n[a] = a < Dim ? pick(1, 12) : 1;
    g.table_size = uint64_t(g.n[0] * g.n[1] * g.n[2]);
    // A window as plan_large makes it: around a cell of the grid, clamped on an open
    // grid, unwrapped (and possibly past the box's edge) on a periodic one.
    LargePlan p;
    long long own_c[3] = {0, 0, 0};
    for (int a = 0; a < Dim; ++a) {
      own_c[a] = pick(0, g.n[a] - 1);
      p.lo[a] = own_c[a] - pick(0, 3);
      p.hi[a] = own_c[a] + pick(0, 3);
      if (!periodic) {
        p.lo[a] = p.lo[a] < 0 ? 0 : p.lo[a];
        p.hi[a] = p.hi[a] > g.n[a] - 1 ? g.n[a] - 1 : p.hi[a];
      }
    }
    // Sometimes an owner cell outside the window's rows (the count must still hold).
    if (pick(0, 3) == 0)
      for (int a = 1; a < Dim; ++a) own_c[a] = pick(0, g.n[a] - 1);
    const uint64_t own = g.linear(own_c);
    uint64_t columns = 1;
    for (int a = 1; a < Dim; ++a) columns *= uint64_t(p.hi[a] - p.lo[a] + 1);
    p.columns = columns;
    // Enumeration: the columns row_before skips, and whether they form a prefix.
    uint64_t before = 0, prefix = 0;
    bool in_prefix = true;
    ColumnCursor<Dim> col(p);
    for (uint64_t c = 0; c < columns; ++c, col.next(p)) {
      const bool skip = row_before<Dim>(g, col.c, own);
      before += skip ? 1 : 0;
      if (skip && in_prefix) ++prefix;
      if (!skip) in_prefix = false;
    }
    bool wraps = false;
    for (int a = 1; a < Dim; ++a) wraps = wraps || p.lo[a] < 0 || p.hi[a] >= g.n[a];
    const RowSkip skip = rows_before<Dim>(g, p, own);
    const uint64_t got = skip.columns;
    INFO("trial " << t << " n " << g.n[0] << "x" << g.n[1] << "x" << g.n[2] << " own " << own);
    if (wraps) {
      CHECK(got == 0);
      CHECK(skip.per_column);  // the walk checks each column itself
      ++wrapping;
    } else {
      CHECK_FALSE(skip.per_column);  // no check after the prefix, so:
      CHECK(got == before);  // every skipped column ...
      CHECK(got == prefix);  // ... and they come first
      ++prefixes;
      skipped += int(got);
    }
    // Starting the cursor there gives the column the loop would reach.
    if (got > 0 && got < columns) {
      ColumnCursor<Dim> a(p), b(p, got);
      for (uint64_t c = 0; c < got; ++c) a.next(p);
      for (int k = 1; k < Dim; ++k) CHECK(a.c[k] == b.c[k]);
    }
  }
  CHECK(prefixes > (periodic ? trials / 10 : trials - 1));  // an open grid never wraps
  CHECK(skipped > 0);
  if (periodic) CHECK(wrapping > 0);
}
}  // namespace

TEST_CASE("rows_before counts the columns row_before skips, as a prefix") {
  check_random_windows<3>(1, false, 4000);
  check_random_windows<3>(2, true, 4000);
  check_random_windows<2>(3, false, 4000);
  check_random_windows<2>(4, true, 4000);
}

TEST_CASE("rows_before: hashed grids claim no prefix and ask no check") {
  GridSpec g;
  g.dense = false;
  g.n[0] = g.n[1] = g.n[2] = 8;
  LargePlan p;
  for (int a = 0; a < 3; ++a) {
    p.lo[a] = 2;
    p.hi[a] = 5;
  }
  p.columns = 16;
  const RowSkip skip = rows_before<3>(g, p, 4 + 8 * (4 + 8 * 4));
  CHECK(skip.columns == 0);
  CHECK_FALSE(skip.per_column);
}
