// HostArray and DoubleArray (host_array.h): numpy arrays through the buffer protocol.
#include "host_array.h"

#include <stdexcept>

namespace nestsim::python {

py::object to_numpy(HostArray&& array) {
  // Never destroyed: a static py::object would be released after the interpreter ends.
  static auto* asarray = new py::object(py::module_::import("numpy").attr("asarray"));
  return (*asarray)(py::cast(std::move(array)));
}

DoubleArray::DoubleArray(const py::object& obj, const char* what) {
  if (!PyObject_CheckBuffer(obj.ptr()))
    throw std::invalid_argument(std::string(what) + " must be an array of numbers");
  info_ = py::reinterpret_borrow<py::buffer>(obj).request();
  if (info_.format != py::format_descriptor<double>::format() || info_.itemsize != 8)
    throw std::invalid_argument(std::string(what) + " must be a float64 array, not '" +
                                info_.format + "'");
}

std::string DoubleArray::shape_text() const {
  std::string text = "(";
  for (int d = 0; d < ndim(); ++d)
    text += std::to_string(shape(d)) + (ndim() == 1 ? "," : d + 1 < ndim() ? ", " : "");
  return text + ")";
}

void bind_host_array(py::module_& m) {
  py::class_<HostArray>(m, "HostArray", py::buffer_protocol(),
                        "The memory behind an array that nestsim returns (numpy views it).")
      .def_buffer([](HostArray& a) {
        std::vector<py::ssize_t> strides(a.shape.size());
        py::ssize_t stride = a.itemsize;
        for (std::size_t d = a.shape.size(); d-- > 0;) {
          strides[d] = stride;
          stride *= a.shape[d];
        }
        return py::buffer_info(a.bytes.data(), a.itemsize, a.format, py::ssize_t(a.shape.size()),
                               a.shape, strides);
      });
}

}  // namespace nestsim::python
