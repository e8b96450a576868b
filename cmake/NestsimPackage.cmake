# A Debian package of what `cmake --install` puts under a prefix, with the prefix /usr:
#
#   cmake --build build/cpu -j2 && (cd build/cpu && cpack -G DEB)
#   apt install ./build/cpu/nestsim_0.1.0_amd64.deb
#
# /usr/bin/nestsim, its data in /usr/share/nestsim (models, plot scripts, the page of
# `nestsim view` where it was built) and `import nestsim` for Debian's python3 from
# /usr/lib/python3/dist-packages (python/CMakeLists.txt). The libraries the program and
# the module link are found by dpkg-shlibdeps; what they run is declared here.
set(CPACK_PACKAGE_NAME nestsim)
set(CPACK_PACKAGE_VENDOR "The nestsim developers")
set(CPACK_PACKAGE_CONTACT "The nestsim developers <nestsim@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "particle-based reaction-diffusion simulator with nested hollow-sphere compartments")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "nestsim simulates bodies in cells by Brownian dynamics: proteins, vesicles and\n"
    "compartments nested inside one another as hollow spheres, with reactions, budding\n"
    "and fusion, and writes H5MD trajectories. It includes the nestsim program (run,\n"
    "analyze, pairs, view, export, ensemble) and the Python module nestsim.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # nestsim_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The module is built for one Python version (Debian's /usr/bin/python3, as
# python/CMakeLists.txt builds it).
set(nestsim_deb_python "python3")
if(EXISTS /usr/bin/python3)
  execute_process(COMMAND /usr/bin/python3 -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE nestsim_deb_pyver OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE nestsim_deb_pyrc)
  if(nestsim_deb_pyrc EQUAL 0)
    string(REGEX REPLACE "^([0-9]+)\\.([0-9]+)$" "\\1" nestsim_deb_major "${nestsim_deb_pyver}")
    string(REGEX REPLACE "^([0-9]+)\\.([0-9]+)$" "\\2" nestsim_deb_minor "${nestsim_deb_pyver}")
    math(EXPR nestsim_deb_minor_next "${nestsim_deb_minor} + 1")
    set(nestsim_deb_python "python3 (>= ${nestsim_deb_pyver}), python3 (<< ${nestsim_deb_major}.${nestsim_deb_minor_next})")
  endif()
endif()
# Beyond the linked libraries: the module needs numpy; the plots of `analyze --plot` and
# `ensemble` run /usr/bin/python3 with matplotlib; nestsim.open reads through the module
# (io::Trajectory), so h5py is the user's choice, not a dependency.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${nestsim_deb_python}, python3-numpy")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-matplotlib")
set(CPACK_GENERATOR DEB)
# cpack packages the build as it is (build the targets first, as above) rather than
# building every test and benchmark of the tree on its own.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CPack)
