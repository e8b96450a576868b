// Host-side validation of bodies and options.
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <algorithm>

#include "nestsim/broadphase.h"

namespace nestsim {

const char* to_string(Method method) {
  switch (method) {
    case Method::hsx: return "hsx";
    case Method::brute: return "brute";
    case Method::brute_tiled: return "brute_tiled";
    case Method::brute_balanced: return "brute_balanced";
    case Method::brute_mapping: return "brute_mapping";
    case Method::grid_uniform: return "grid_uniform";
    case Method::grid_aabb: return "grid_aabb";
  }
  return "?";
}

std::vector<std::string> method_names() {
  return {"hsx",           "brute",        "brute_tiled", "brute_balanced",
          "brute_mapping", "grid_uniform", "grid_aabb"};
}

Method method_from_string(const std::string& name) {
  if (name == "hsx") return Method::hsx;
  if (name == "brute") return Method::brute;
  if (name == "brute_tiled") return Method::brute_tiled;
  if (name == "brute_balanced") return Method::brute_balanced;
  if (name == "brute_mapping") return Method::brute_mapping;
  if (name == "grid_uniform") return Method::grid_uniform;
  if (name == "grid_aabb") return Method::grid_aabb;
  std::string known;
  for (const auto& m : method_names()) known += (known.empty() ? "" : ", ") + m;
  throw std::invalid_argument("unknown method '" + name + "' (known: " + known + ")");
}

void BroadphaseOptions::validate() const {
  if (domain.dim != 2 && domain.dim != 3)
    throw std::invalid_argument("dimension must be 2 or 3, not " + std::to_string(domain.dim));
  if (!(std::isfinite(skin) && skin >= 0))
    throw std::invalid_argument("skin must be finite and >= 0");
  if (hsx_small_n < -1)
    throw std::invalid_argument("hsx_small_n must be -1 (the backend's default) or >= 0");
  for (int a = 0; a < domain.dim; ++a) {
    if (!std::isfinite(domain.lo[a]))
      throw std::invalid_argument("box origin must be finite");
    if (domain.periodic && !(std::isfinite(domain.size[a]) && domain.size[a] > 0))
      throw std::invalid_argument("a periodic box needs every edge finite and > 0");
  }
  tuning.validate();
}

template <class Real>
void SphereSet<Real>::resize(std::size_t n) {
  x.resize(n);
  y.resize(n);
  z.resize(n);
  radius.resize(n);
  thickness.resize(n);
}

template <class Real>
void SphereSet<Real>::push_back(Real px, Real py, Real pz, Real r, Real q) {
  x.push_back(px);
  y.push_back(py);
  z.push_back(pz);
  radius.push_back(r);
  thickness.push_back(q);
}

template <class Real>
void SphereSet<Real>::validate(int dim) const {
  const std::size_t n = radius.size();
  auto fail = [](std::size_t i, const char* field, const std::string& what) {
    throw BodyError(i, std::string(field) + " " + what);
  };
  if (thickness.size() != n || x.size() != n || y.size() != n || (dim == 3 && z.size() != n))
    throw std::invalid_argument("bodies: x, y, (z,) radius and thickness differ in length");
  const std::vector<Real>* coord[3] = {&x, &y, &z};
  const char* names[3] = {"x", "y", "z"};
  for (std::size_t i = 0; i < n; ++i) {
    for (int a = 0; a < dim; ++a)
      if (!std::isfinite((*coord[a])[i])) fail(i, names[a], "is not a finite number");
    const Real r = radius[i], q = thickness[i];
    if (!std::isfinite(r)) fail(i, "radius", "is not a finite number");
    if (r < 0) fail(i, "radius", "is negative");
    if (!std::isfinite(q)) fail(i, "thickness", "is not a finite number");
    if (q < 0) fail(i, "thickness", "is negative");
    if (q > r) fail(i, "thickness", "exceeds the radius");
  }
}

template struct SphereSet<float>;
template struct SphereSet<double>;

namespace {

std::string number(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

}  // namespace

template <class Real>
void check_supported(const SphereSet<Real>& bodies, const BroadphaseOptions& options) {
  const double limit = max_extent<Real>(), least = min_extent<Real>();
  const bool single = sizeof(Real) == sizeof(float);
  const std::string range =
      std::string("outside the supported range (|coordinates|, radius + skin and box edges "
                  "0 or from ") +
      number(least) + " to " + number(limit) + " in " + (single ? "float" : "double") +
      " precision, " + number(single ? min_extent<double>() : min_extent<float>()) + " to " +
      number(single ? max_extent<double>() : max_extent<float>()) + " in " +
      (single ? "double" : "float") + ")";
  const auto supported = [&](double v) {
    return v == 0 || (std::fabs(v) >= least && std::fabs(v) <= limit);
  };
  const Domain& dom = options.domain;
  const int dim = dom.dim;
  if (!(options.skin <= limit))
    throw std::invalid_argument("skin " + number(options.skin) + " is " + range);
  for (int a = 0; a < dim; ++a) {
    if (dom.periodic && !supported(dom.size[a]))
      throw std::invalid_argument("box edge " + number(dom.size[a]) + " is " + range);
    if (!supported(dom.lo[a]))
      throw std::invalid_argument("box origin " + number(dom.lo[a]) + " is " + range);
  }
  double reach = 0;  // the largest radius + skin
  std::size_t widest = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const double r = double(bodies.radius[i]) + options.skin;
    if (!supported(r)) throw BodyError(i, "radius + skin = " + number(r) + " is " + range);
    if (r > reach) {
      reach = r;
      widest = i;
    }
  }
  if (dom.periodic)
    for (int a = 0; a < dim; ++a)
      if (dom.size[a] < kMinEdgePerReach * reach)
        throw std::invalid_argument(
            "box edge " + number(dom.size[a]) + " is below 2^-30 of the largest radius + skin (" +
            number(reach) + ", body " + std::to_string(widest) +
            "): a periodic box's edges must be at least " + number(kMinEdgePerReach * reach));
  const std::vector<Real>* coord[3] = {&bodies.x, &bodies.y, &bodies.z};
  const char* names[3] = {"x", "y", "z"};
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    for (int a = 0; a < dim; ++a) {
      const double x = double((*coord[a])[i]);
      if (!supported(x))
        throw BodyError(i, std::string(names[a]) + " = " + number(x) + " is " + range);
      if (dom.periodic && !(std::fabs(x - dom.lo[a]) <= kMaxEdgesFromBox * dom.size[a]))
        throw BodyError(i, std::string(names[a]) + " = " + number(x) + " lies more than 2^30 " +
                               "box edges (" + number(dom.size[a]) + ") from the box: " +
                               "wrap it into the box");
    }
  }
}

template void check_supported(const SphereSet<float>&, const BroadphaseOptions&);
template void check_supported(const SphereSet<double>&, const BroadphaseOptions&);

double Timings::median() const {
  if (ms.empty()) return 0;
  std::vector<double> s = ms;
  std::sort(s.begin(), s.end());
  const std::size_t m = s.size() / 2;
  return s.size() % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}

double Timings::min() const { return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end()); }

}  // namespace nestsim
