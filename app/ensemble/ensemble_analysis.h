// `nestsim analyze DIR` for an ensemble directory: per scan point, the mean over its
// done replicas of each observable over time with a 95% confidence interval of the
// mean (Student's t, n - 1 degrees of freedom), as a table, CSV files and plots.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace nestsim::app {

// Mean and 95% confidence interval of the mean of `values` (half-width 0 for n < 2).
struct MeanInterval {
  std::size_t n = 0;
  double mean = 0, low = 0, high = 0;
};
MeanInterval mean_interval(const std::vector<double>& values);

// The 97.5% quantile of Student's t with `dof` degrees of freedom (dof >= 1).
double student_t975(std::size_t dof);

// Prints the analysis of DIR/ensemble.h5; with csv_dir writes ensemble_means.csv and
// ensemble_members.csv there, with plot_dir also a plot per observable
// (tools/plot_ensemble.py). Returns the exit code (2: not an ensemble directory).
int analyze_ensemble(const std::string& dir, const std::string& csv_dir,
                     const std::string& plot_dir);

}  // namespace nestsim::app
