// A Doi-rate measurement for the validation suite: catalytic traps B among diffusing A,
// A + B -> C + B, reactions counted in a window of time (validation_reactions.cpp,
// validation_kon.cpp).
//
// Design (why the count has an exact two-body theory): traps sit on a cubic lattice of
// spacing s in a periodic box, A start uniform (the reaction balls too) at density c,
// both diffuse (D = D_A + D_B for the separation), A and B do not interact (repulsion
// 0). Each A meets at most one trap within the run (traps are s apart and the run is
// short: a separation travels ~sqrt(6 D T) ~ 3.5 < s - 2 sigma), so by linearity the
// expected number of reactions in the window [t1, T] is, per trap, c (K(T) - K(t1))
// with K the integrated time-dependent Doi rate of doi.h, EXACTLY: the start-up
// transient (k(0) = lambda V_sigma, decaying to Erban-Chapman as 1/sqrt(t)) is in K, not
// neglected. The measured rate is reported as an estimate of the steady rate,
//   k_meas = k_EC * counted / expected,
// against the theory k_EC (Erban-Chapman). Error: the run is R independent replicas
// (fresh simulations, their own seeds), so se = sqrt(R var(replica counts)): no
// assumption on the count's distribution (a moving trap's path makes it a little more
// variable than Poisson).
// A trap's catalysis is one event per step; with c V_sigma ~ 0.3 two A firing at one
// trap in the same step is rare (~p c V_sigma / 2 ~ 0.2% of events, and those retry).
#pragma once
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "doi.h"
#include "nestsim/sim/replicas.h"
#include "nestsim/sim/simulation.h"
#include "sim_helpers.h"
#include "stats.h"

namespace nestsim::validation {

struct DoiRun {
  double sigma = 1, DA = 0.5, DB = 0.5, lambda = 2.25;
  double density = 0.07;  // of A
  double spacing = 7.5;   // of the traps
  int side = 5;           // traps per axis of one replica
  int replicas = 40;      // independent simulations
  double dt = 0.005, t1 = 0.5, T = 2.0;
  uint64_t seed = 1;
  // Optional: the kinds, rule and units of a model (validation_kon.cpp: a rule given by
  // kon, converted by io): kinds "A", "B", "C" and the rule A + B -> C + B come from it;
  // the geometry and times above still apply, and lambda, D_A, D_B, sigma must match it.
  const nestsim::model::Setup* base = nullptr;

  struct Outcome {
    double counted = 0, expected = 0, se = 0;  // reactions in [t1, T], all replicas
  };

  Outcome run() const {
    const double box = side * spacing, volume = box * box * box;
    const auto n_a = std::size_t(std::llround(density * volume));
    const auto steps1 = uint64_t(std::llround(t1 / dt)), steps2 = uint64_t(std::llround(T / dt));
    const double D = DA + DB;
    const double per_trap = double(n_a) / volume *
                            (doi_integrated_rate(lambda, D, sigma, double(steps2) * dt) -
                             doi_integrated_rate(lambda, D, sigma, double(steps1) * dt));
    // The replicas side by side (nestsim/sim/replicas.h), summed in replica order.
    std::vector<double> counts(static_cast<std::size_t>(replicas));
    nestsim::sim::for_each_replica(replicas, [&](int rep) {
      const uint64_t rs = stream(seed, 1000 + uint64_t(rep));
      nestsim::sim::Simulation sim(setup(rs));
      sim.run(steps1);
      const uint64_t before = sim.frame().reaction_events.at(0);
      sim.run(steps2 - steps1);
      counts[std::size_t(rep)] = double(sim.frame().reaction_events.at(0) - before);
    });
    Mean per_replica;
    Outcome out;
    for (const double n : counts) {
      per_replica.add(n);
      out.counted += n;
    }
    out.expected = per_trap * side * side * side * replicas;
    out.se = std::sqrt(replicas * per_replica.var());
    return out;
  }

  nestsim::model::Setup setup(uint64_t rs) const {
    using namespace nestsim::sim;
    using namespace nestsim::model;
    const double box = side * spacing;
    nestsim::testing::SetupBuilder b(3, box, Boundary::periodic, dt, rs);
    if (base) {
      const auto kind = [&](const char* name) {
        for (std::size_t k = 0; k < base->kinds.size(); ++k)
          if (base->kinds[k].name == name) return uint32_t(k);
        throw std::invalid_argument(std::string("no kind ") + name);
      };
      const uint32_t a = kind("A"), trap = kind("B");
      b.s.kinds = base->kinds;
      b.s.reactions = base->reactions;
      b.s.repulsion = base->repulsion;
      b.s.length_unit = base->length_unit;
      b.s.time_unit = base->time_unit;
      add_bodies(b, a, trap, rs);
      return b.s;
    }
    b.s.repulsion = 0;
    const double r = 0.1 * sigma;
    const uint32_t a = b.kind("A", false, r, r, DA);
    const uint32_t c = b.kind("C", false, r, r, DA);
    const uint32_t trap = b.kind("B", false, r, r, DB);
    Reaction rule;
    rule.name = "catalysis";
    rule.rate = lambda;
    rule.radius = sigma;
    Term ta, tb, tc;
    ta.kind = a;
    tb.kind = trap;
    tc.kind = c;
    rule.reactants = {ta, tb};
    rule.products = {tc, tb};
    b.s.reactions.push_back(rule);
    add_bodies(b, a, trap, rs);
    return b.s;
  }

  // Traps on the lattice, A uniform in the box.
  void add_bodies(nestsim::testing::SetupBuilder& b, uint32_t a, uint32_t trap, uint64_t rs) const {
    const double box = side * spacing;
    const auto n_a = std::size_t(std::llround(density * box * box * box));
    for (int m = 0; m < side * side * side; ++m)
      b.add(trap, {spacing * (m % side + 0.5), spacing * (m / side % side + 0.5), spacing * (m / side / side + 0.5)});
    std::mt19937_64 rng(rs);
    std::uniform_real_distribution<double> u(0, box);
    for (std::size_t k = 0; k < n_a; ++k) b.add(a, {u(rng), u(rng), u(rng)});
  }
};

}  // namespace nestsim::validation
