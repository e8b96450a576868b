// The scene families every broad-phase method is checked on (issue 2's list and more):
// one list, shared by the suites.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "nestsim/broadphase.h"
#include "nestsim/testing/scenes.h"

namespace nestsim::testing {

struct SceneCase {
  std::string name;
  std::function<scenes::Scene()> make;
  double skin = 0;
};

inline BroadphaseOptions options_for(const scenes::Scene& s, Overlap overlap, Method method,
                                     double skin = 0) {
  BroadphaseOptions o;
  o.overlap = overlap;
  o.method = method;
  o.domain = s.domain;
  if (!o.domain.periodic) o.domain.size = {0, 0, 0};
  o.skin = skin;
  return o;
}

// Body counts above 300 times NESTSIM_TEST_SCENE_SCALE (default 1; at least 300): the
// sanitize preset runs the suites on smaller scenes (their brute-force references cost
// n^2 under the sanitizers), with the same families and the same code paths.
inline std::size_t scaled(std::size_t n) {
  static const double scale = [] {
    const char* v = std::getenv("NESTSIM_TEST_SCENE_SCALE");
    return v ? std::atof(v) : 1.0;
  }();
  if (n <= 300 || !(scale > 0) || scale >= 1) return n;
  return std::max<std::size_t>(300, std::size_t(double(n) * scale));
}

inline std::vector<SceneCase> scene_cases() {
  using namespace scenes;
  auto periodic = [](Scene s) {
    make_periodic(s);
    return s;
  };
  std::vector<SceneCase> v;
  v.push_back({"exponential 3D phi=0.1", [] { return exponential(scaled(3000), 0.1, 3, 1); }});
  v.push_back({"exponential 3D phi=0.3", [] { return exponential(scaled(3000), 0.3, 3, 2); }});
  v.push_back({"exponential 2D phi=0.3", [] { return exponential(scaled(3000), 0.3, 2, 3); }});
  v.push_back({"exponential 3D phi=0.3, Morton order", [] {
    scenes::Scene s = exponential(scaled(3000), 0.3, 3, 2);
    scenes::order_spatially(s);
    return s;
  }});
  v.push_back({"equal radii 3D", [] { return equal_radii(scaled(3000), 0.3, 3, 4); }});
  v.push_back({"equal radii 2D", [] { return equal_radii(scaled(2000), 0.4, 2, 5); }});
  v.push_back({"concentric 3D", [] { return concentric(150, 3); }});
  v.push_back({"concentric 2D", [] { return concentric(150, 2); }});
  v.push_back({"cell-like", [] { return cell_like(scaled(3000), 6); }});
  v.push_back({"contacts 3D", [] { return contacts(3); }});
  v.push_back({"contacts 2D", [] { return contacts(2); }});
  v.push_back({"radii 1e-3..1e3", [] { return log_uniform(scaled(2000), 0.2, 3, 7, 1e-3, 1e3); }});
  v.push_back({"radii 1e-3..1e3 2D", [] { return log_uniform(scaled(2000), 0.2, 2, 8, 1e-3, 1e3); }});
  v.push_back({"one giant among dust", [] {
                 // Mean diameter ~ 1e-2, one body of radius 1e3 (a grid of mean-diameter
                 // cells would give its box alone ~1e15 cells).
                 auto s = log_uniform(scaled(1500), 0.05, 3, 109, 1e-3, 1e-2);
                 s.bodies.push_back(s.bodies.x[0], s.bodies.y[0], s.bodies.z[0], 1e3, 10);
                 return s;
               }});
  v.push_back({"all solid (q = r)", [] { return exponential(scaled(2000), 0.3, 3, 9, 1, 20, 1.0); }});
  v.push_back({"all bare (q = 0)", [] { return exponential(scaled(2000), 0.3, 3, 10, 1, 20, 0.0, 0.0); }});
  v.push_back({"periodic 3D", [periodic] { return periodic(exponential(scaled(3000), 0.3, 3, 11)); }});
  v.push_back({"periodic 2D", [periodic] { return periodic(exponential(scaled(2000), 0.3, 2, 12)); }});
  v.push_back({"periodic equal radii 3D",
               [periodic] { return periodic(equal_radii(scaled(2000), 0.3, 3, 112)); }});
  v.push_back({"periodic radii 1e-3..1e3",
               [periodic] { return periodic(log_uniform(scaled(1500), 0.2, 3, 113, 1e-3, 1e3)); }});
  v.push_back({"periodic cell-like", [periodic] { return periodic(cell_like(scaled(1500), 14)); }});
  v.push_back({"periodic contacts 3D", [periodic] { return periodic(contacts(3)); }});
  v.push_back({"periodic, fewer than 3 cells per axis", [periodic] {
                 // Bodies as large as a third of the box: windows wrap, < 3 cells per axis.
                 return periodic(exponential(60, 0.5, 3, 13, 1.0, 4.0));
               }});
  v.push_back({"periodic 2D, fewer than 3 cells per axis",
               [periodic] { return periodic(exponential(40, 0.6, 2, 116, 1.0, 4.0)); }});
  v.push_back({"far from the origin", [] {
                 auto s = exponential(scaled(2000), 0.3, 3, 15);
                 for (std::size_t i = 0; i < s.bodies.size(); ++i) {
                   s.bodies.x[i] += 5000;
                   s.bodies.y[i] -= 3000;
                   s.bodies.z[i] += 1000;
                 }
                 return s;
               }});
  v.push_back({"sparse, far from the origin", [] {
                 auto s = exponential(400, 0.005, 3, 121);
                 for (std::size_t i = 0; i < s.bodies.size(); ++i) s.bodies.x[i] += 4000;
                 return s;
               }});
  v.push_back({"skin 0.25", [] { return exponential(scaled(2000), 0.3, 3, 16); }, 0.25});
  v.push_back({"skin 2 on a cell", [] { return cell_like(scaled(1000), 17); }, 2.0});
  v.push_back({"no body", [] { return exponential(0, 0.3, 3, 18); }});
  v.push_back({"one body", [] { return exponential(1, 0.3, 3, 19); }});
  v.push_back({"one body 2D periodic", [periodic] { return periodic(exponential(1, 0.3, 2, 119)); }});
  v.push_back({"two bodies", [] { return exponential(2, 0.9, 3, 20); }});
  v.push_back({"three hundred, sparse", [] { return exponential(300, 0.01, 3, 21); }});
  return v;
}

}  // namespace nestsim::testing
