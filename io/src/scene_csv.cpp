#include "nestsim/io/scene_csv.h"
#include "nestsim/io/regular_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace nestsim::io {
namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(trim(field));
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

}  // namespace

Scene read_scene_csv(const std::string& path) {
  require_regular_file(path, "a scene file");
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw InputError(path, 0, "is a directory, not a scene file");
  Scene scene;
  std::string line;
  long number = 0;
  bool have_header = false;
  std::vector<std::string> columns;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 BOM
    if (trim(line).empty()) continue;
    const std::vector<std::string> fields = split(line);
    if (!have_header) {
      const std::string h = trim(line);
      if (h == "x,y,z,radius,thickness" || split(h) == std::vector<std::string>{"x", "y", "z", "radius", "thickness"}) {
        scene.dim = 3;
      } else if (h == "x,y,radius,thickness" || split(h) == std::vector<std::string>{"x", "y", "radius", "thickness"}) {
        scene.dim = 2;
      } else {
        throw InputError(path, number,
                         "expected the header 'x,y,z,radius,thickness' (3D) or "
                         "'x,y,radius,thickness' (2D), got '" + excerpt(h) + "'");
      }
      columns = split(h);
      have_header = true;
      continue;
    }
    if (fields.size() != columns.size()) {
      throw InputError(path, number,
                       "expected " + std::to_string(columns.size()) + " columns, got " +
                           std::to_string(fields.size()));
    }
    double v[5] = {0, 0, 0, 0, 0};
    for (std::size_t c = 0; c < fields.size(); ++c) {
      const std::string& f = fields[c];
      char* end = nullptr;
      errno = 0;
      const double value = f.empty() ? 0.0 : std::strtod(f.c_str(), &end);
      if (f.empty() || end != f.c_str() + f.size())
        throw InputError(path, number,
                         "column '" + columns[c] + "': '" + excerpt(f) + "' is not a number");
      if (!std::isfinite(value))
        throw InputError(path, number, "column '" + columns[c] + "': '" + excerpt(f) +
                                           "' is not a finite number");
      v[c] = value;
    }
    const double r = v[scene.dim], q = v[scene.dim + 1];
    if (r < 0)
      throw InputError(path, number, "column 'radius': negative radius " +
                                         excerpt(fields[scene.dim]));
    if (q < 0)
      throw InputError(path, number, "column 'thickness': negative thickness " +
                                         excerpt(fields[scene.dim + 1]));
    if (q > r)
      throw InputError(path, number, "column 'thickness': thickness " +
                                         excerpt(fields[scene.dim + 1]) + " exceeds radius " +
                                         excerpt(fields[scene.dim]));
    scene.bodies.push_back(v[0], v[1], scene.dim == 3 ? v[2] : 0.0, r, q);
    scene.lines.push_back(number);
  }
  if (!have_header)
    throw InputError(path, number == 0 ? 1 : number,
                     "empty file: expected the header 'x,y,z,radius,thickness' or 'x,y,radius,thickness'");
  return scene;
}

void write_scene_csv(const std::string& path, const Scene& scene) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  std::fputs(scene.dim == 3 ? "x,y,z,radius,thickness\n" : "x,y,radius,thickness\n", f);
  const auto& b = scene.bodies;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (scene.dim == 3)
      std::fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g\n", b.x[i], b.y[i], b.z[i], b.radius[i],
                   b.thickness[i]);
    else
      std::fprintf(f, "%.17g,%.17g,%.17g,%.17g\n", b.x[i], b.y[i], b.radius[i], b.thickness[i]);
  }
  if (std::fclose(f) != 0) throw std::runtime_error(path + ": write failed");
}

void apply_box(const std::string& path, Scene& scene, const Domain& box) {
  std::vector<double>* coord[3] = {&scene.bodies.x, &scene.bodies.y, &scene.bodies.z};
  const char* names[3] = {"x", "y", "z"};
  for (std::size_t i = 0; i < scene.bodies.size(); ++i) {
    for (int a = 0; a < scene.dim; ++a) {
      double& x = (*coord[a])[i];
      const double L = box.size[a];
      if (box.periodic) {
        x = std::fmod(x, L);  // exact, where x - L floor(x / L) rounds far from the box
        if (x < 0) x += L;
        if (x >= L) x = 0;  // rounding of values just below 0
      } else if (x < 0 || x > L) {
        std::ostringstream msg;
        msg.precision(17);
        msg << "column '" << names[a] << "': body " << i << " at " << x
            << " lies outside the box [0, " << L << "]";
        throw InputError(path, scene.lines[i], msg.str());
      }
    }
  }
}

}  // namespace nestsim::io
