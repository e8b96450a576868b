"""The PEP 517 build backend of `pip install .` (pyproject.toml): CMake builds the
module nestsim._core, then the wheel is written here with zipfile.

Why in-tree and not scikit-build-core: Debian 12 packages no scikit-build-core, and the
build must work offline as `/usr/bin/python3 -m pip install --no-build-isolation` with
Debian's packages only. The wheel format is small (PEP 427): the package's files, a
.dist-info with METADATA, WHEEL and RECORD (sha256 of each file).

The configure step builds only the module: no tests, benchmarks or viewer, and the
interpreter that runs pip (sys.executable) with its own pybind11, so that the module
matches the Python that installs it (a pip or conda Python as well as Debian's).
"""
import base64
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "nestsim"


# --- PEP 517 hooks -------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    """What pip must install before build_wheel (with build isolation): CMake and Ninja
    from PyPI only where the machine has none, tomli where tomllib is missing."""
    needs = []
    if not _system_cmake():
        needs.append("cmake>=3.25")
    if not shutil.which("ninja"):
        needs.append("ninja")
    if sys.version_info < (3, 11):
        needs.append("tomli")
    return needs


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = os.path.join(metadata_directory, _dist_info_name())
    os.makedirs(dist_info, exist_ok=True)
    with open(os.path.join(dist_info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return os.path.basename(dist_info)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    settings = _settings(config_settings)
    build_dir = _build(settings)
    package_dir = os.path.join(build_dir, "python", NAME)
    files = sorted(f for f in os.listdir(package_dir)
                   if f.endswith(".py") or re.match(r"_core\..*(so|pyd|dylib)$", f))
    if not any(f.startswith("_core.") for f in files):
        raise SystemExit(f"nestsim build: no module _core in {package_dir} after the build")
    tag = _wheel_tag()
    wheel_name = f"{NAME}-{_version()}-{tag}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    _write_wheel(os.path.join(wheel_directory, wheel_name), tag,
                 [(os.path.join(package_dir, f), f"{NAME}/{f}") for f in files])
    return wheel_name


# --- settings ------------------------------------------------------------------------

def _settings(config_settings):
    """--config-settings, checked: a misspelt key stops the build with the known ones."""
    known = {"backend": "CPU", "build-dir": "", "jobs": str(os.cpu_count() or 2),
             "cmake-args": ""}
    settings = dict(known)
    for key, value in (config_settings or {}).items():
        if key not in known:
            raise SystemExit(f"nestsim build: unknown config setting '{key}' "
                             f"(known: {', '.join(sorted(known))})")
        settings[key] = value if isinstance(value, str) else " ".join(value)
    settings["backend"] = settings["backend"].upper()
    if settings["backend"] not in ("CPU", "CUDA"):
        raise SystemExit(f"nestsim build: backend must be CPU or CUDA, not "
                         f"'{settings['backend']}'")
    if not settings["jobs"].isdigit() or int(settings["jobs"]) < 1:
        raise SystemExit(f"nestsim build: jobs must be a number >= 1, not '{settings['jobs']}'")
    if not settings["build-dir"]:
        py = f"py{sys.version_info[0]}{sys.version_info[1]}"
        settings["build-dir"] = os.path.join(ROOT, "build",
                                             f"pip-{py}-{settings['backend'].lower()}")
    settings["build-dir"] = os.path.abspath(settings["build-dir"])
    return settings


# --- CMake ---------------------------------------------------------------------------

def _system_cmake():
    """cmake on PATH when it is 3.25 or newer (CMakeLists.txt's minimum), else None."""
    cmake = shutil.which("cmake")
    if not cmake:
        return None
    try:
        out = subprocess.run([cmake, "--version"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    m = re.search(r"(\d+)\.(\d+)", out)
    return cmake if m and (int(m[1]), int(m[2])) >= (3, 25) else None


def _cmake():
    cmake = _system_cmake()
    if cmake:
        return cmake
    try:  # PyPI's cmake, installed by get_requires_for_build_wheel
        import cmake as cmake_module
        return os.path.join(cmake_module.CMAKE_BIN_DIR, "cmake")
    except ImportError:
        raise SystemExit("nestsim build: CMake 3.25 or newer is needed "
                         "(Debian: sudo apt-get install cmake; or pip install cmake)") from None


def _pybind11_dir():
    """The CMake directory of the pybind11 that this interpreter imports, if any: the
    module must be compiled with the headers that match the running Python."""
    try:
        import pybind11
    except ImportError:
        return None
    return pybind11.get_cmake_dir()


def _run(cmd, **kwargs):
    print("nestsim build:", " ".join(shlex.quote(c) for c in cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def _build(settings):
    """Configures (a fresh tree only) and builds the module's target; the build tree."""
    cmake = _cmake()
    build_dir = settings["build-dir"]
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if os.path.exists(cache):
        _check_reused_tree(cache)
    else:
        cmd = [cmake, "-S", ROOT, "-B", build_dir,
               "-DCMAKE_BUILD_TYPE=Release",
               f"-DNESTSIM_BACKEND={settings['backend']}",
               "-DNESTSIM_BUILD_TESTS=OFF", "-DNESTSIM_BUILD_BENCH=OFF",
               "-DNESTSIM_BUILD_VIEWER=OFF", "-DNESTSIM_BUILD_PYTHON=ON",
               # numpy is a dependency of the wheel (pip installs it), not of its build:
               # the module reads and writes arrays through the buffer protocol.
               "-DNESTSIM_PYTHON_REQUIRE_NUMPY=OFF",
               f"-DPython_EXECUTABLE={sys.executable}"]
        pybind11_dir = _pybind11_dir()
        if pybind11_dir:
            cmd.append(f"-Dpybind11_DIR={pybind11_dir}")
        if shutil.which("ninja") or _pip_ninja():
            cmd += ["-G", "Ninja"]
            if not shutil.which("ninja"):
                cmd.append(f"-DCMAKE_MAKE_PROGRAM={_pip_ninja()}")
        if settings["backend"] == "CUDA":
            cmd.append("-DCMAKE_CUDA_ARCHITECTURES=90")
        cmd += shlex.split(settings["cmake-args"])
        _run(cmd)
    _run([cmake, "--build", build_dir, "--target", "nestsim_python", "-j", settings["jobs"]])
    return build_dir


def _check_reused_tree(cache):
    """A reused build tree must have been configured for this interpreter."""
    with open(cache, encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = re.search(r"^Python_EXECUTABLE:[A-Z]*=(.*)$", text, re.M)
    if m and os.path.realpath(m[1]) != os.path.realpath(sys.executable):
        raise SystemExit(f"nestsim build: the build tree {os.path.dirname(cache)} was "
                         f"configured for {m[1]}, not for {sys.executable}; choose "
                         f"another one with --config-settings=build-dir=PATH")


def _pip_ninja():
    try:
        import ninja
    except ImportError:
        return None
    return os.path.join(ninja.BIN_DIR, "ninja")


# --- metadata and the wheel ----------------------------------------------------------

def _pyproject():
    """pyproject.toml as a dict."""
    try:
        import tomllib
    except ImportError:
        import tomli as tomllib  # Python < 3.11 (get_requires_for_build_wheel asks for it)
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _dependencies():
    """[tool.nestsim] dependencies, less those the building Python already imports: the
    wheel is built for this interpreter, and `pip install --target DIR` ignores what the
    interpreter has installed (it would fetch numpy again into DIR)."""
    import importlib.util
    wanted = _pyproject()["tool"]["nestsim"]["dependencies"]
    return [req for req in wanted
            if importlib.util.find_spec(re.match(r"[A-Za-z0-9_.-]+", req)[0]) is None]


def _version():
    """project(nestsim VERSION X.Y.Z) of CMakeLists.txt: one version for all."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*nestsim\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        raise SystemExit("nestsim build: CMakeLists.txt: no project(nestsim VERSION ...)")
    return m[1]


def _dist_info_name():
    return f"{NAME}-{_version()}.dist-info"


def _metadata():
    """Core metadata 2.1 from pyproject.toml's [project] table."""
    project = _pyproject()["project"]
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {_version()}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    for req in _dependencies():
        lines.append(f"Requires-Dist: {req}")
    for extra, reqs in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for req in reqs:
            marker = f'extra == "{extra}"'
            lines.append(f"Requires-Dist: {req}; {marker}" if ";" not in req
                         else f"Requires-Dist: {req} and {marker}")
    return "\n".join(lines) + "\n"


def _wheel_tag():
    """cpXY-cpXY-<platform>: the module is built for this interpreter and machine."""
    impl = {"cpython": "cp", "pypy": "pp"}.get(sys.implementation.name, "py")
    version = f"{sys.version_info[0]}{sys.version_info[1]}"
    abi = sysconfig.get_config_var("SOABI") or ""
    m = re.match(r"cpython-(\d+)(\w*?)-", abi)
    abi_tag = f"cp{m[1]}{m[2]}" if m else (abi.replace("-", "_").replace(".", "_") or "none")
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}{version}-{abi_tag}-{platform}"


def _record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def _write_wheel(path, tag, files):
    """The wheel: the package's files, then METADATA, WHEEL and RECORD (PEP 427)."""
    dist_info = _dist_info_name()
    wheel_text = ("Wheel-Version: 1.0\nGenerator: nestsim_build\nRoot-Is-Purelib: false\n"
                  f"Tag: {tag}\n")
    record = []
    with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED) as whl:
        def add(arcname, data, mode=0o644):
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info, data)
            record.append(f"{arcname},{_record_hash(data)},{len(data)}")

        for source, arcname in files:
            with open(source, "rb") as f:
                add(arcname, f.read(), 0o755 if arcname.endswith((".so", ".pyd")) else 0o644)
        add(f"{dist_info}/METADATA", _metadata().encode("utf-8"))
        add(f"{dist_info}/WHEEL", wheel_text.encode("utf-8"))
        record.append(f"{dist_info}/RECORD,,")
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        whl.writestr(info, ("\n".join(record) + "\n").encode("utf-8"),
                     compress_type=zipfile.ZIP_DEFLATED)
    os.replace(path + ".part", path)
