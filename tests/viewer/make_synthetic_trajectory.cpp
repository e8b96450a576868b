// A synthetic trajectory of N bodies for the viewer's frame-rate benchmark
// (tests/viewer/fps_benchmark.cjs): cells (hollow spheres) on a grid filling the box,
// each holding two kinds of proteins, written by nestsim's own H5MD writer.
//
// usage: make_synthetic_trajectory OUT.h5 BODIES [FRAMES]
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include "nestsim/io/h5md.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: make_synthetic_trajectory OUT.h5 BODIES [FRAMES]\n";
    return 2;
  }
  const std::string path = argv[1];
  const uint64_t bodies = std::strtoull(argv[2], nullptr, 10);
  const int frames = argc > 3 ? std::atoi(argv[3]) : 3;
  // Proteins of radius 3 at a volume fraction of ~0.1 inside cells of radius 400,
  // about 2.4e5 proteins per cell.
  const double cell_radius = 400, protein_radius = 3;
  const uint64_t per_cell = 240000;
  const uint64_t cells = std::max<uint64_t>(1, (bodies + per_cell) / (per_cell + 1));
  const auto side = uint64_t(std::ceil(std::cbrt(double(cells))));
  const double pitch = 2.2 * cell_radius;

  nestsim::model::Setup setup;
  setup.box = {side * pitch, side * pitch, side * pitch};
  setup.dt = 0.001;
  setup.output_every = 1;
  setup.model_text = "# synthetic trajectory (make_synthetic_trajectory)\n";
  setup.model_path = "synthetic";
  setup.kinds = {{"cell", true, cell_radius, 8, 0, false},
                 {"protein_a", false, protein_radius, protein_radius, 1, false},
                 {"protein_b", false, protein_radius, protein_radius, 1, false}};
  std::mt19937_64 random(1);
  std::uniform_real_distribution<double> unit(-1, 1);
  setup.bodies.reserve(bodies);
  for (uint64_t c = 0; c < cells && setup.bodies.size() < bodies; ++c) {
    nestsim::model::Body cell;
    cell.kind = 0;
    cell.position = {(double(c % side) + 0.5) * pitch, (double(c / side % side) + 0.5) * pitch,
                     (double(c / side / side) + 0.5) * pitch};
    setup.bodies.push_back(cell);
  }
  const double reach = cell_radius - 8 - protein_radius;
  for (uint64_t i = 0; setup.bodies.size() < bodies; ++i) {
    const auto& cell = setup.bodies[i % cells];
    std::array<double, 3> d;
    do {
      d = {unit(random), unit(random), unit(random)};
    } while (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > 1);
    nestsim::model::Body p;
    p.kind = 1 + uint32_t(i % 2);
    p.parent = int64_t(i % cells);
    for (int k = 0; k < 3; ++k) p.position[k] = cell.position[k] + reach * d[k];
    setup.bodies.push_back(p);
  }
  setup.capacity = setup.bodies.size();
  nestsim::io::H5mdWriter writer(path, setup, "synthetic", true);
  nestsim::model::Frame frame = nestsim::io::frame_from_setup(setup);
  std::normal_distribution<double> jitter(0, 2);
  for (int f = 0; f < frames; ++f) {
    frame.step = uint64_t(f);
    frame.time = f * setup.dt;
    writer.write(frame);
    for (std::size_t s = cells; s < frame.position.size(); ++s)
      for (double& x : frame.position[s]) x += jitter(random);
  }
  writer.close();
  std::cout << path << ": " << setup.bodies.size() << " bodies (" << cells << " cells), "
            << frames << " frames\n";
  return 0;
}
