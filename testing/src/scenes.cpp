#include "nestsim/testing/scenes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "nestsim/morton.h"

namespace nestsim::scenes {
namespace {

constexpr double kPi = 3.14159265358979323846;

double uniform01(std::mt19937_64& rng) {
  return double(rng() >> 11) * 0x1.0p-53;  // [0, 1), portable
}

double body_volume(double r, int dim) {
  return dim == 3 ? 4.0 / 3.0 * kPi * r * r * r : kPi * r * r;
}

// Places centres uniformly in a cube of the size that gives the volume fraction.
void place_uniform(Scene& s, double total_volume, double volume_fraction, std::mt19937_64& rng) {
  const int dim = s.domain.dim;
  const double side = std::pow(total_volume / volume_fraction, 1.0 / dim);
  for (int a = 0; a < 3; ++a) {
    s.domain.lo[a] = 0;
    s.domain.size[a] = a < dim ? side : 0;
  }
  for (std::size_t i = 0; i < s.bodies.size(); ++i) {
    s.bodies.x[i] = side * uniform01(rng);
    s.bodies.y[i] = side * uniform01(rng);
    s.bodies.z[i] = dim == 3 ? side * uniform01(rng) : 0.0;
  }
}

Scene empty(int dim, std::size_t n) {
  Scene s;
  s.domain.dim = dim;
  s.bodies.resize(n);
  return s;
}

}  // namespace

Scene exponential(std::size_t n, double volume_fraction, int dim, uint64_t seed, double mean,
                  double cut, double solid, double thickness_ratio) {
  std::mt19937_64 rng(seed);
  Scene s = empty(dim, n);
  double volume = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double r;
    do {
      r = -mean * std::log(1.0 - uniform01(rng));
    } while (r > cut);
    s.bodies.radius[i] = r;
    s.bodies.thickness[i] = uniform01(rng) < solid ? r : thickness_ratio * r;
    volume += body_volume(r, dim);
  }
  place_uniform(s, volume, volume_fraction, rng);
  return s;
}

Scene equal_radii(std::size_t n, double volume_fraction, int dim, uint64_t seed, double r,
                  double thickness_ratio) {
  std::mt19937_64 rng(seed);
  Scene s = empty(dim, n);
  for (std::size_t i = 0; i < n; ++i) {
    s.bodies.radius[i] = r;
    s.bodies.thickness[i] = thickness_ratio * r;
  }
  place_uniform(s, double(n) * body_volume(r, dim), volume_fraction, rng);
  return s;
}

Scene concentric(std::size_t n, int dim) {
  Scene s = empty(dim, n);
  const double side = 2.0 * double(n) + 2.0;
  for (int a = 0; a < 3; ++a) s.domain.size[a] = a < dim ? side : 0;
  for (std::size_t i = 0; i < n; ++i) {
    s.bodies.x[i] = s.bodies.y[i] = side / 2;
    s.bodies.z[i] = dim == 3 ? side / 2 : 0.0;
    s.bodies.radius[i] = double(i + 1);
    s.bodies.thickness[i] = 0.5;
  }
  return s;
}

Scene log_uniform(std::size_t n, double volume_fraction, int dim, uint64_t seed, double rmin,
                  double rmax) {
  std::mt19937_64 rng(seed);
  Scene s = empty(dim, n);
  double volume = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = rmin * std::pow(rmax / rmin, uniform01(rng));
    const double u = uniform01(rng);
    s.bodies.radius[i] = r;
    s.bodies.thickness[i] = u < 0.1 ? 0.0 : (u < 0.2 ? r : r * uniform01(rng));
    volume += body_volume(r, dim);
  }
  place_uniform(s, volume, volume_fraction, rng);
  return s;
}

Scene cell_like(std::size_t proteins, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Scene s;
  s.domain.dim = 3;
  const double side = 2000, c = 1000;
  for (int a = 0; a < 3; ++a) s.domain.size[a] = side;
  auto add = [&](double x, double y, double z, double r, double q) {
    s.bodies.push_back(x, y, z, r, q);
  };
  auto direction = [&](double* u) {
    double n2;
    do {
      for (int a = 0; a < 3; ++a) u[a] = 2 * uniform01(rng) - 1;
      n2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    } while (n2 > 1 || n2 < 1e-6);
    const double inv = 1 / std::sqrt(n2);
    for (int a = 0; a < 3; ++a) u[a] *= inv;
  };
  struct Shell {
    double x[3], r, q;
  };
  std::vector<Shell> shells;
  const Shell cell{{c, c, c}, 900, 8};
  shells.push_back(cell);
  add(c, c, c, 900, 8);
  // Lysosomes on a ring inside the cell, each with vesicles inside.
  for (int k = 0; k < 8; ++k) {
    const double phi = 2 * kPi * k / 8;
    Shell l{{c + 500 * std::cos(phi), c + 500 * std::sin(phi), c + 100 * (k % 3 - 1)}, 150, 6};
    shells.push_back(l);
    add(l.x[0], l.x[1], l.x[2], l.r, l.q);
    for (int v = 0; v < 3; ++v) {
      double u[3];
      direction(u);
      add(l.x[0] + 60 * u[0], l.x[1] + 60 * u[1], l.x[2] + 60 * u[2], 40, 4);
    }
  }
  // Free vesicles in the cytosol, some touching the cell membrane from inside.
  for (int k = 0; k < 40; ++k) {
    double u[3];
    direction(u);
    const double d = k % 4 == 0 ? 900 - 8 - 40 : 200 + 150 * uniform01(rng);
    Shell v{{c + d * u[0], c + d * u[1], c + d * u[2]}, 40, 4};
    shells.push_back(v);
    add(v.x[0], v.x[1], v.x[2], v.r, v.q);
  }
  for (std::size_t p = 0; p < proteins; ++p) {
    const double r = 2 + uniform01(rng);
    const double kind = uniform01(rng);
    double u[3];
    direction(u);
    if (kind < 0.33) {
      // Touching a membrane: inner wall from inside, or outer wall from outside, at the
      // contact distance or a hair beyond it.
      const Shell& sh = shells[std::size_t(uniform01(rng) * double(shells.size()))];
      const int where = int(uniform01(rng) * 4);
      double d;
      switch (where) {
        case 0: d = sh.r - sh.q - r; break;          // just inside the lumen (contained)
        case 1: d = sh.r - sh.q - r + 0.5 * r; break;  // poking into the wall
        case 2: d = sh.r + r; break;                   // touching from outside
        default: d = sh.r + r * (1 + 1e-9); break;     // just apart
      }
      add(sh.x[0] + d * u[0], sh.x[1] + d * u[1], sh.x[2] + d * u[2], r, r);
    } else if (kind < 0.8) {
      const double d = 880 * std::cbrt(uniform01(rng));
      add(c + d * u[0], c + d * u[1], c + d * u[2], r, r);
    } else {
      double x[3];
      for (int a = 0; a < 3; ++a) x[a] = side * uniform01(rng);
      add(x[0], x[1], x[2], r, r);
    }
  }
  return s;
}

namespace {

// A point uniform in the ball (dim 3) or disc (dim 2) of radius `radius` around `c`.
void point_in_ball(std::mt19937_64& rng, int dim, const double* c, double radius, double* out) {
  double u[3] = {0, 0, 0}, n2;
  do {
    for (int a = 0; a < dim; ++a) u[a] = 2 * uniform01(rng) - 1;
    n2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
  } while (n2 > 1);
  for (int a = 0; a < 3; ++a) out[a] = a < dim ? c[a] + radius * u[a] : 0.0;
}

// A stack of m near-concentric shells around c: radii spacing, 2 spacing, ...; walls
// `thin` thick, one in 20 `thick` (at random); centres offset from c by up to `offset`.
void add_stack(Scene& s, std::mt19937_64& rng, const double* c, std::size_t m, double spacing,
               double thin, double thick, double offset) {
  const int dim = s.domain.dim;
  for (std::size_t i = 1; i <= m; ++i) {
    double x[3];
    point_in_ball(rng, dim, c, offset, x);
    const double q = uniform01(rng) < 0.05 ? thick : thin;
    s.bodies.push_back(x[0], x[1], x[2], spacing * double(i), q);
  }
}

}  // namespace

Scene near_concentric(std::size_t n, int dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Scene s;
  s.domain.dim = dim;
  const double side = 2.0 * double(n) + 4.0, c[3] = {side / 2, side / 2, dim == 3 ? side / 2 : 0};
  for (int a = 0; a < 3; ++a) s.domain.size[a] = a < dim ? side : 0;
  add_stack(s, rng, c, n, 1.0, 0.5, 0.9, 0.2);
  return s;
}

Scene nested(std::size_t n, int dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Scene s;
  s.domain.dim = dim;
  n = std::max<std::size_t>(n, 16);
  // Stacks: about half the bodies; the rest lysosomes and their ILVs, and the cell.
  const std::size_t stacks = std::max<std::size_t>(2, std::size_t(std::sqrt(double(n)) / 16));
  const std::size_t m = std::max<std::size_t>(1, n / 2 / stacks);
  const std::size_t rest = n - 1 - stacks * m;
  const std::size_t per_lysosome = std::clamp<std::size_t>(rest / 8, 4, 1000);
  const std::size_t lysosomes = std::max<std::size_t>(1, rest / (per_lysosome + 1));
  const std::size_t ilvs = rest - lysosomes;
  const double stack_radius = 2.0 * double(m) + 1.0;
  // ILVs (radius <= 1) fill 20 % of a lysosome's lumen (wall 1).
  const double ilv_volume = body_volume(1.0, dim) * double(ilvs / lysosomes + 1) / 0.2;
  const double lysosome_radius =
      (dim == 3 ? std::cbrt(ilv_volume * 3.0 / (4.0 * kPi)) : std::sqrt(ilv_volume / kPi)) + 1.0;
  // The stacks on a lattice with room between them; the lysosomes where no stack is.
  const std::size_t per_axis = std::size_t(std::ceil(std::pow(double(stacks), 1.0 / dim) - 1e-9));
  const double pitch = 2.2 * stack_radius, cube = double(per_axis) * pitch;
  std::vector<std::array<double, 3>> centres;
  for (std::size_t k = 0; k < stacks; ++k) {
    std::size_t rem = k;
    std::array<double, 3> c{0, 0, 0};
    for (int a = 0; a < dim; ++a) {
      c[std::size_t(a)] = (double(rem % per_axis) + 0.5) * pitch;
      rem /= per_axis;
    }
    centres.push_back(c);
    add_stack(s, rng, c.data(), m, 2.0, 0.5, 1.8, 0.3);
  }
  const double lo[3] = {0, 0, 0};
  for (std::size_t l = 0; l < lysosomes; ++l) {
    double c[3];
    for (int attempt = 0;; ++attempt) {  // uniform in the cube, off the stacks
      for (int a = 0; a < 3; ++a) c[a] = a < dim ? lo[a] + cube * uniform01(rng) : 0.0;
      bool clear = true;
      for (const auto& sc : centres) {
        double d2 = 0;
        for (int a = 0; a < 3; ++a) d2 += (c[a] - sc[std::size_t(a)]) * (c[a] - sc[std::size_t(a)]);
        clear = clear && d2 > (stack_radius + lysosome_radius) * (stack_radius + lysosome_radius);
      }
      if (clear || attempt > 1000) break;
    }
    s.bodies.push_back(c[0], c[1], c[2], lysosome_radius, 1.0);
    const std::size_t count = ilvs / lysosomes + (l < ilvs % lysosomes ? 1 : 0);
    for (std::size_t i = 0; i < count; ++i) {
      double x[3];
      point_in_ball(rng, dim, c, lysosome_radius - 1.0, x);
      const double r = 0.5 + 0.5 * uniform01(rng);
      s.bodies.push_back(x[0], x[1], x[2], r, 0.3 * r);
    }
  }
  // The cell around everything, and the box around the cell.
  const double half = cube / 2, cell_r = half * std::sqrt(double(dim)) + lysosome_radius + 2.0;
  s.bodies.push_back(half, half, dim == 3 ? half : 0.0, cell_r, 8.0);
  for (int a = 0; a < 3; ++a) {
    s.domain.lo[a] = a < dim ? half - cell_r - 1.0 : 0;
    s.domain.size[a] = a < dim ? 2.0 * (cell_r + 1.0) : 0;
  }
  return s;
}

Scene contacts(int dim) {
  Scene s;
  s.domain.dim = dim;
  // A lattice of pairs at distance exactly r_i + r_j (all values dyadic, so exact in
  // float and double), along each axis and diagonally (3-4-5 triangles).
  double x0 = 0;
  for (int k = 0; k < 8; ++k, x0 += 64) {
    const double ri = 1 + 0.5 * k, rj = 2.5;  // dyadic radii
    const double qi = k % 2 ? ri : 0.25, qj = k % 3 ? 0.5 : rj;
    s.bodies.push_back(x0, 0, 0, ri, qi);
    s.bodies.push_back(x0 + ri + rj, 0, 0, rj, qj);                       // touching on x
    s.bodies.push_back(x0, ri + rj, 0, rj, qj);                           // touching on y
    s.bodies.push_back(x0 + 3 * (ri + rj) / 5 * 2, 4 * (ri + rj) / 5 * 2 + 40, 0, ri, qi);
    s.bodies.push_back(x0 + 3 * (ri + rj) / 5 * 2 + 3 * (ri + ri) / 5,
                       4 * (ri + rj) / 5 * 2 + 40 + 4 * (ri + ri) / 5, 0, ri, qi);  // 3-4-5
  }
  // Coincident centres: equal shells (intersect), a solid ball inside a shell (no pair),
  // a point-like body (r = 0) on a zero-thickness shell's surface, and inside.
  s.bodies.push_back(-100, -100, 0, 4, 0);
  s.bodies.push_back(-100, -100, 0, 4, 0);
  s.bodies.push_back(-100, -100, 0, 2, 2);
  s.bodies.push_back(-100, -96, 0, 0, 0);
  s.bodies.push_back(-100, -99, 0, 0, 0);
  // A body touching the inner wall from inside exactly: |x| = r - q - r_in (contained? no:
  // containment is strict, so they intersect).
  s.bodies.push_back(-200, -200, 0, 8, 2);
  s.bodies.push_back(-200 + 4, -200, 0, 2, 2);
  if (dim == 2)
    for (auto& z : s.bodies.z) z = 0;
  for (int a = 0; a < 3; ++a) s.domain.size[a] = a < dim ? 1024 : 0;
  return s;
}

void make_periodic(Scene& s) {
  s.domain.periodic = true;
  std::vector<double>* coord[3] = {&s.bodies.x, &s.bodies.y, &s.bodies.z};
  for (int a = 0; a < s.domain.dim; ++a) {
    const double lo = s.domain.lo[a], L = s.domain.size[a];
    for (double& x : *coord[a]) {
      x = lo + (x - lo) - L * std::floor((x - lo) / L);
      if (x >= lo + L) x = lo;
    }
  }
}

void order_spatially(Scene& s) {
  const std::size_t n = s.bodies.size();
  std::vector<uint64_t> key(n);
  const std::vector<double>* coord[3] = {&s.bodies.x, &s.bodies.y, &s.bodies.z};
  for (std::size_t i = 0; i < n; ++i) {
    double f[3] = {0, 0, 0};
    for (int a = 0; a < s.domain.dim; ++a) {
      const double edge = s.domain.size[a];
      f[a] = edge > 0 ? ((*coord[a])[i] - s.domain.lo[a]) / edge : 0.0;
    }
    key[i] = morton_key(f, s.domain.dim);
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
  SphereSet<double> out;
  out.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t i = order[r];
    out.x[r] = s.bodies.x[i];
    out.y[r] = s.bodies.y[i];
    out.z[r] = s.bodies.z[i];
    out.radius[r] = s.bodies.radius[i];
    out.thickness[r] = s.bodies.thickness[i];
  }
  s.bodies = std::move(out);
}

}  // namespace nestsim::scenes
