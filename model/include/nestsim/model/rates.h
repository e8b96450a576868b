// Bimolecular rate constants: the macroscopic kon of two diffusing reactants and the
// microscopic rate of the Doi model that nestsim simulates (models/README.md, "Rates").
//
// In the Doi model two reactants whose centres are within the reaction radius sigma
// react at rate lambda. With relative diffusion coefficient D = D_A + D_B and no force
// between them, the steady-state rate constant is (Erban and Chapman, Phys. Biol. 6,
// 046001, 2009)
//     k(lambda) = 4 pi D sigma [1 - tanh(kappa) / kappa],  kappa = sigma sqrt(lambda / D),
// which grows from lambda (4/3) pi sigma^3 (reaction-limited, lambda -> 0) to the
// diffusion limit 4 pi D sigma (lambda -> infinity). All values in one consistent set
// of units (the model's: length^3/time, 1/time, length^2/time, length).
#pragma once

namespace nestsim::model {

struct Units;

// k(lambda) above. lambda, D >= 0, sigma > 0 (else std::domain_error); lambda may be
// infinite (k = 4 pi D sigma). D = 0 gives 0: without diffusion no pair ever meets
// again once the pairs in reach have reacted.
double erban_chapman_rate(double doi_rate, double D, double sigma);

// The lambda with erban_chapman_rate(lambda, D, sigma) == kon, to a relative 1e-12.
// kon = 0 gives 0. Throws std::domain_error when kon >= 4 pi D sigma (no lambda reaches
// it; with D = 0 every kon > 0) or for kon < 0, D < 0, sigma <= 0 or non-finite values.
double doi_rate_from_kon(double kon, double D, double sigma);

// 1 M^-1 s^-1 (= 1e-3 m^3 / (N_A s), N_A = 6.02214076e23 / mol) in length^3/time of
// `units`: 1.66054e-6 nm^3/us.
double per_molar_second_in_model_units(const Units& units);

}  // namespace nestsim::model
