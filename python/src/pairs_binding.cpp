// nestsim._core.pairs: the broad phase on numpy arrays, the same pairs as `nestsim pairs`
// (app/commands/pairs_command.cpp): the bodies validated as a scene file is, a box
// applied as --box does (wrapped when periodic, centres inside it otherwise), then one
// search.
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <type_traits>

#include "bindings.h"
#include "host_array.h"
#include "nestsim/broadphase.h"

namespace nestsim::python {
namespace {

// The bodies as the search takes them (one copy, into structure of arrays).
SphereSet<double> sphere_set(const DoubleArray& c, const DoubleArray& r,
                             const DoubleArray& q, int& dim) {
  if (c.ndim() != 2 || (c.shape(1) != 2 && c.shape(1) != 3))
    throw std::invalid_argument("centres must have the shape (N, 3) or (N, 2), not " +
                                c.shape_text());
  const py::ssize_t n = c.shape(0);
  dim = int(c.shape(1));
  for (const auto& [array, name] : {std::pair{&r, "radii"}, {&q, "thickness"}})
    if (array->ndim() != 1 || array->shape(0) != n)
      throw std::invalid_argument(std::string(name) + " must have the shape (" +
                                  std::to_string(n) + ",), one per centre, not " +
                                  array->shape_text());
  SphereSet<double> bodies;
  bodies.resize(std::size_t(n));
  for (py::ssize_t i = 0; i < n; ++i) {
    bodies.x[i] = c(i, 0);
    bodies.y[i] = c(i, 1);
    bodies.z[i] = dim == 3 ? c(i, 2) : 0.0;
    bodies.radius[i] = r(i);
    bodies.thickness[i] = q(i);
  }
  if (dim == 2) bodies.z.clear();
  bodies.validate(dim);  // BodyError: "body I: radius is negative", ...
  return bodies;
}

// io::apply_box's rules, naming the body by its index.
void apply_box(SphereSet<double>& bodies, const Domain& domain) {
  std::vector<double>* coord[3] = {&bodies.x, &bodies.y, &bodies.z};
  const char* names[3] = {"x", "y", "z"};
  for (std::size_t i = 0; i < bodies.size(); ++i)
    for (int a = 0; a < domain.dim; ++a) {
      double& x = (*coord[a])[i];
      const double L = domain.size[a];
      if (domain.periodic) {
        x = std::fmod(x, L);
        if (x < 0) x += L;
        if (x >= L) x = 0;
      } else if (x < 0 || x > L) {
        std::ostringstream msg;
        msg.precision(17);
        msg << names[a] << " " << x << " lies outside the box [0, " << L << "]";
        throw BodyError(i, msg.str());
      }
    }
}

// The bodies in the search's arithmetic: the validated set itself in double, a copy in
// float (thickness clamped to the rounded radius, as `nestsim pairs` does).
template <class Real>
SphereSet<Real> in_precision(const SphereSet<double>& scene) {
  SphereSet<Real> bodies;
  bodies.resize(scene.size());
  for (std::size_t i = 0; i < scene.size(); ++i) {
    bodies.x[i] = Real(scene.x[i]);
    bodies.y[i] = Real(scene.y[i]);
    if (!scene.z.empty()) bodies.z[i] = Real(scene.z[i]);
    bodies.radius[i] = Real(scene.radius[i]);
    bodies.thickness[i] = std::min(Real(scene.thickness[i]), bodies.radius[i]);
  }
  if (scene.z.empty()) bodies.z.clear();
  return bodies;
}

bool same_options(const BroadphaseOptions& a, const BroadphaseOptions& b) {
  return a.overlap == b.overlap && a.method == b.method && a.domain.dim == b.domain.dim &&
         a.domain.periodic == b.domain.periodic && a.domain.lo == b.domain.lo &&
         a.domain.size == b.domain.size && a.skin == b.skin &&
         a.mapping_lazy == b.mapping_lazy && a.mapping_byte_mask == b.mapping_byte_mask &&
         a.hsx_small_n == b.hsx_small_n && a.grid_sort == b.grid_sort &&
         a.sort_pairs == b.sort_pairs;
}

// The finder of the last call, per precision: a search with the same options reuses
// its device buffers (the first search on new buffers pays for their allocation, which
// `nestsim pairs --bench` leaves out with its warm-up call). One search at a time.
template <class Real>
struct CachedFinder {
  std::mutex busy;
  std::unique_ptr<Broadphase<Real>> finder;
};

template <class Real>
CachedFinder<Real>& cached_finder() {
  static auto* cache = new CachedFinder<Real>();  // never destroyed: no device call at exit
  return *cache;
}

template <class Real>
void release_finder() {
  CachedFinder<Real>& cache = cached_finder<Real>();
  const std::lock_guard<std::mutex> lock(cache.busy);
  cache.finder.reset();
}

template <class Real>
py::object search(const SphereSet<double>& scene, const BroadphaseOptions& options,
                  bool count_only) {
  std::optional<SphereSet<Real>> converted;
  if constexpr (!std::is_same_v<Real, double>) converted = in_precision<Real>(scene);
  const SphereSet<Real>& bodies = [&]() -> const SphereSet<Real>& {
    if constexpr (std::is_same_v<Real, double>) return scene;
    else return *converted;
  }();
  PairList pairs;
  uint64_t count = 0;
  {
    py::gil_scoped_release released;
    CachedFinder<Real>& cache = cached_finder<Real>();
    const std::lock_guard<std::mutex> lock(cache.busy);
    if (!cache.finder || !same_options(cache.finder->options(), options))
      cache.finder = std::make_unique<Broadphase<Real>>(options);
    cache.finder->upload(bodies);
    if (count_only) {
      count = cache.finder->count();
    } else {
      cache.finder->find();
      pairs = cache.finder->pairs();
    }
  }
  if (count_only) return py::int_(count);
  HostArray out = HostArray::of<int64_t>({static_cast<py::ssize_t>(pairs.size()), 2});
  int64_t* o = out.data<int64_t>();
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    o[2 * k] = pairs.i[k];
    o[2 * k + 1] = pairs.j[k];
  }
  return to_numpy(std::move(out));
}

py::object pairs(const py::object& centres, const py::object& radii, const py::object& thickness,
                 std::optional<std::vector<double>> box, bool periodic, bool solid,
                 const std::string& precision, double skin, const std::string& method,
                 bool count_only) {
  int dim = 3;
  SphereSet<double> bodies = sphere_set(DoubleArray(centres, "centres"), DoubleArray(radii, "radii"),
                                        DoubleArray(thickness, "thickness"), dim);
  if (precision != "float" && precision != "double")
    throw std::invalid_argument("precision must be 'float' or 'double', not '" + precision + "'");
  if (!std::isfinite(skin) || skin < 0)
    throw std::invalid_argument("skin must be a finite number >= 0");
  if (periodic && !box) throw std::invalid_argument("periodic=True needs a box");
  BroadphaseOptions options;
  options.overlap = solid ? Overlap::solid : Overlap::hollow;
  options.method = method_from_string(method);
  options.skin = skin;
  options.domain.dim = dim;
  options.domain.periodic = periodic;
  if (box) {
    if (int(box->size()) != dim)
      throw std::invalid_argument("the centres are " + std::to_string(dim) + "D but box gives " +
                                  std::to_string(box->size()) + " edges");
    for (int a = 0; a < dim; ++a) {
      if (!(std::isfinite((*box)[a]) && (*box)[a] > 0))
        throw std::invalid_argument("box: every edge must be a finite number > 0");
      options.domain.size[a] = (*box)[a];
    }
    apply_box(bodies, options.domain);
  }
  return precision == "float" ? search<float>(bodies, options, count_only)
                              : search<double>(bodies, options, count_only);
}

}  // namespace

void bind_pairs(py::module_& m) {
  m.def("pairs", &pairs, py::arg("centres"), py::arg("radii"), py::arg("thickness"),
        py::arg("box") = py::none(), py::arg("periodic") = false, py::arg("solid") = false,
        py::arg("precision") = "double", py::arg("skin") = 0.0, py::arg("method") = "hsx",
        py::arg("count_only") = false);
  m.def("methods", &method_names);
  m.def("release_pairs_memory", []() {
    release_finder<float>();
    release_finder<double>();
  });
}

}  // namespace nestsim::python
