// A macroscopic kon held at the run's time step, for each contact model
// (models/README.md, "Rates"; docs/validation.md, "Large steps: reactions").
//
// contacts none | hard: the reactants meet as points (under hard they are exempt from
// each other's excluded volume). A pair whose separation ends a step within the binding
// radius sigma_b reacts (Andrews and Bray, "Stochastic simulation of chemical reactions
// with spatial resolution and single molecule detail", Phys. Biol. 2004, section 2 and
// its appendix). With s = sqrt(2 (D_A + D_B) dt) / sigma_b, the steady state of the pair
// distribution g(r) under "diffuse one step, then remove the pairs within sigma_b" gives
// the reactions per step, kon dt = F(s) sigma_b^3, with
//   F(s) -> 2 pi s^2 (1 - beta s)  (s -> 0: Smoluchowski's 4 pi D sigma_b, less the
//                                   overshoot of a Gaussian walk, beta = -zeta(1/2) /
//                                   sqrt(2 pi) = 0.5826),
//   F(s) -> 4 pi / 3               (s -> inf: the pairs are uniform after each step).
// F is computed here from the radial steady state (andrews_bray_step_volume_solved) and
// tabulated; sigma_b solves F(s) sigma_b^3 = kon dt for the run's dt.
//
// contacts soft: the Doi model (react at rate lambda while within the radius R), with
// the soft repulsion U(r) = repulsion / 2 (r_A + r_B - r)^2 (kT = 1) inside the contact
// distance. The steady radial Smoluchowski equation
//   d/dr [ r^2 D e^{-U} d/dr (e^{U} p) ] = lambda r^2 p [r < R],   p -> 1 as r -> inf
// has p = 1 - a / r beyond the reach of U and of the sink, and k = 4 pi D a (without
// U, Erban-Chapman). soft_doi_rate solves it by shooting; doi_rate_for_kon_soft finds
// the lambda that gives kon.
#pragma once
#include <cstdint>
#include <vector>

namespace nestsim::model {

struct Model;
struct ReactionSpec;

// Under soft contacts the Doi rate is calibrated in continuous time; the step's
// probability lambda dt stays below this (its discretisation error is then ~ 1%,
// docs/validation.md "Large steps: reactions").
inline constexpr double kMaxDoiStepProbability = 0.05;

// F(s) = kon dt / sigma_b^3 of Andrews-Bray's irreversible rule, from the radial steady
// state on a grid (slow: 0.1-2 s). s > 0.
double andrews_bray_step_volume_solved(double s);
// The same from a table of the solved values (ln s from -4.6 to 3 by 0.1; cubic in
// ln s) and the two limits beyond it: relative 1e-5 of the solved value.
double andrews_bray_step_volume(double s);
// sigma_b with F(s) sigma_b^3 = kon dt, s = sqrt(2 D dt) / sigma_b (kon > 0, D >= 0,
// dt > 0; D = 0: sigma_b = (3 kon dt / (4 pi))^(1/3)). Throws std::domain_error for
// values out of range.
double andrews_bray_binding_radius(double kon, double D, double dt);

// k(lambda) of the Doi model with the soft repulsion of stiffness `repulsion` (kT per
// length^2) inside `contact`, sink radius R, relative diffusion D (volume / time).
double soft_doi_rate(double lambda, double D, double R, double contact, double repulsion);
// The lambda with soft_doi_rate(lambda, ...) == kon to a relative 1e-10. Throws
// std::domain_error when kon >= 4 pi D R (the diffusion limit, reached as lambda ->
// inf whatever U).
double doi_rate_for_kon_soft(double kon, double D, double R, double contact, double repulsion);

// --- binding onto a membrane: "S + K -> S2 on K" with kon -------------------------
//
// S (a free species, radius r_S) binds to the membrane of compartment K (outer radius
// r_K) with probability p per step when the gap between its ball and the wall that
// faces it is at most h (the rule's radius) at the end of a step; a move into the wall
// is rejected (membranes are hard walls under every contact model). kon is the binding
// rate constant of S onto one K from outside, d[S2]/dt = kon [S][K]: the Collins-Kimball
// rate of a sphere of contact radius R = r_K + r_S,
//   kon = 4 pi R^2 kappa 4 pi D R / (4 pi R^2 kappa + 4 pi D R),   D = D_S + D_K,
// kappa the membrane's reactivity (length/time). The engine's p is calibrated so that
// its scheme's steady rate onto one K equals kon at the run's dt (the radial steady state
// of the scheme itself, kon_calibration.cpp: diffusion, rejection and reaction per
// step; continuous time, the Doi shell, when the step is far below h). Below the
// diffusion limit 4 pi D R; above the rate at p = 1 (binding at every step in reach,
// which falls as the step outgrows the shell) no p holds it.

// The steady binding rate (volume/time) onto one immobile sphere of the scheme above:
// probability p, relative D, step dt, contact radius R, shell h.
double membrane_binding_rate(double p, double D, double dt, double R, double h);
// The p in (0, 1] with membrane_binding_rate(p, ...) = kon to a relative 1e-10. Throws
// std::domain_error when kon >= 4 pi D R or kon > membrane_binding_rate(1, ...).
double membrane_binding_probability(double kon, double D, double dt, double R, double h);
// The largest dt at which some p holds kon (0 when none; +inf when every dt).
double largest_dt_for_binding(double kon, double D, double R, double h);

// Is rule x of model m a binding "S + K -> S2 on K" (a species and a compartment kind)?
// Then R = r_K + r_S (its contact radius).
bool is_membrane_binding(const ReactionSpec& x, const Model& m, double* contact = nullptr);

// What the engine runs for a rule: a Doi rate at the rule's radius, or (every_pair) an
// Andrews-Bray binding radius where every pair within it reacts; for a binding onto a
// membrane given by kon, the rate whose probability per step 1 - e^{-rate dt} is the
// calibrated p (above; +inf for p = 1) at the rule's radius.
struct KonRule {
  double rate = 0;    // per time unit (Doi); +inf for every_pair
  double radius = 0;  // length
  bool every_pair = false;
};
// The engine's form of rule x of model m (a rule given by rate: as written; by kon:
// calibrated for m.contacts and m.dt as above; the reverse of a reversible rule: the
// rate of its q, below). Throws std::domain_error (kon out of
// reach) or std::invalid_argument (a reactant missing).
KonRule calibrate_rule(const ReactionSpec& x, const Model& m);

// Under hard contacts, the reactants of a rule given by kon meet as points (Andrews-Bray's
// binding radius assumes it): the kinds x kinds table of Setup::contact_exempt with
// those pairs 1 (symmetric). Empty under soft and none.
std::vector<uint8_t> kon_contact_exempt(const Model& m);

// --- reversible rules: "A + B <-> C" with kon and koff --------------------------------
//
// The reverse C -> A + B places A at C's place and B at a separation r from it drawn
// from the pair's equilibrium density within the forward rule's reach: uniform in the
// binding ball (none, hard: sigma_b; the reactants meet as points) or e^{-U(r)} in the
// reaction ball (soft: U the soft repulsion, radius R). Then each step's reactions obey
// detailed balance exactly: the pairs that bind from the ball (probability p each: 1
// under Andrews-Bray, 1 - e^{-lambda dt} under Doi) are replaced, at every r, by the
// unbinding C's (probability q each, K [A][B] of them), so the uniform pair density and
// K = [C] / ([A][B]) are stationary with
//   K = p V / q,   V = the ball's volume weighted by e^{-U} (4/3 pi sigma_b^3 when U = 0),
// at any dt, as long as the diffusion step keeps the pair's equilibrium (exact for
// none; hard and soft within their step rules). K = kon / koff gives the unbinding
// probability per step q = p V koff / kon; the engine runs it as the rate
// -ln(1 - q) / dt. The forward rule keeps its irreversible calibration, so pairs that
// meet bind at kon, and a C's dissociations that escape rebinding come at koff.

// V_eff = int_0^R 4 pi r^2 e^{-U(r)} dr, U(r) = repulsion / 2 (contact - r)^2 for r <
// contact (kT = 1).
double boltzmann_ball_volume(double R, double contact, double repulsion);
// q of the reverse rule x (x.forward >= 0) of model m, at m.dt: above. May be >= 1
// (then no rate holds K: largest_dt_for_koff).
double unbinding_step_probability(const ReactionSpec& x, const Model& m);
// The largest dt below which q < 1 (q grows with dt); 0 when none, +inf when every dt.
double largest_dt_for_koff(const ReactionSpec& x, const Model& m);

// The largest dt at which rule x's kon holds (the checks of model_reactions.cpp): a
// binding onto a membrane, largest_dt_for_binding (any contact model); else under soft
// contacts lambda dt <= kMaxDoiStepProbability; under none and hard, a binding radius
// whose ball fits the box (2 sigma_b < min_box). +inf when no dt limits it.
double largest_dt_for_kon(const ReactionSpec& x, const Model& m, double min_box);

}  // namespace nestsim::model
