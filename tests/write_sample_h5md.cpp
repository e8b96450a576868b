// Writes a small trajectory for tests/check_h5md.py: the model's initial state, then
// frames in which every body moves by +1.5 along x (wrapped into the box).
// Usage: write_sample_h5md MODEL.yaml OUT.h5 FRAMES
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "nestsim/io/h5md.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: write_sample_h5md MODEL.yaml OUT.h5 FRAMES\n";
    return 2;
  }
  try {
    const nestsim::model::Setup setup = nestsim::model::make_setup(nestsim::model::load_model(argv[1]));
    nestsim::io::H5mdWriter writer(argv[2], setup, "sample");
    nestsim::model::Frame frame = nestsim::io::frame_from_setup(setup);
    for (long k = 0; k < std::atol(argv[3]); ++k) {
      frame.step = uint64_t(k) * setup.output_every;
      frame.time = double(frame.step) * setup.dt;
      writer.write(frame);
      for (auto& x : frame.position) x[0] = std::fmod(x[0] + 1.5, setup.box[0]);
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return 0;
}
