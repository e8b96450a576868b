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

// The length of the UTF-8 sequence that starts `text` at `i` and its code point, or 0
// when the bytes there are not one.
std::size_t utf8_at(const std::string& text, std::size_t i, uint32_t& code) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  std::size_t n = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 0;
  if (n == 0 || b >= 0xF5 || i + n > text.size()) return 0;
  code = b & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < least[n] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

// Characters that print as nothing or as a blank: shown by name.
bool invisible(uint32_t code) {
  return code == 0xA0 || code == 0xAD || (code >= 0x2000 && code <= 0x200F) ||
         (code >= 0x2028 && code <= 0x202F) || (code >= 0x2060 && code <= 0x206F) ||
         code == 0xFEFF || code == 0x3000 || (code >= 0x80 && code < 0xA0);
}

}  // namespace

std::string excerpt(const std::string& text, std::size_t limit) {
  std::string out;
  std::size_t shown = 0, i = 0;
  char buf[16];
  while (i < text.size() && shown < limit) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    uint32_t code = 0;
    std::size_t n = 1;
    if (b >= 0x20 && b < 0x7F) {
      out.push_back(char(b));
    } else if (b == '\t') {
      out += "\\t";
    } else if (b >= 0x80 && (n = utf8_at(text, i, code)) != 0) {
      if (invisible(code)) {
        std::snprintf(buf, sizeof buf, "<U+%04X>", unsigned(code));
        out += buf;
      } else {
        out.append(text, i, n);
      }
    } else {
      n = 1;
      std::snprintf(buf, sizeof buf, "\\x%02X", unsigned(b));
      out += buf;
    }
    i += n;
    ++shown;
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes in all)";
  return out;
}

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
