"""python/setup.py: builds rowandb's C extension (src/rowandb/_rowan.c) against librowan.

Where librowan comes from:
  - ROWAN_LIB_DIR set: the directory of a CMake build of this repository holding librowan.a
    (for example build/test after scripts/test.sh); its include/ is this repository's;
  - else: this file runs CMake on the repository (the folder above this one) into
    python/build/librowan (Release, tests off) and builds the static library there.
librowan.a is linked into the extension, so the installed module needs no librowan.so at
run time; it still needs liblz4, libxxhash and zlib (Debian: liblz4-1, libxxhash0, zlib1g),
found with pkg-config at build time. It does not build the shell or the tests.
"""
import os
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def librowan_dir():
    d = os.environ.get("ROWAN_LIB_DIR")
    if d:
        d = os.path.abspath(d)
        if not os.path.exists(os.path.join(d, "librowan.a")):
            raise SystemExit("ROWAN_LIB_DIR=%s holds no librowan.a" % d)
        return d
    d = os.path.join(HERE, "build", "librowan")
    subprocess.check_call(["cmake", "-S", ROOT, "-B", d, "-DCMAKE_BUILD_TYPE=Release",
                           "-DROWAN_TESTS=OFF"])
    subprocess.check_call(["cmake", "--build", d, "-j", str(os.cpu_count() or 2),
                           "--target", "rowan_static"])
    return d


def pkg_libs(*pkgs):
    out = subprocess.check_output(["pkg-config", "--libs"] + list(pkgs), text=True)
    return out.split()


lib = librowan_dir()
ext = Extension(
    "rowandb._rowan",
    sources=["src/rowandb/_rowan.c"],
    include_dirs=[os.path.join(ROOT, "include")],
    extra_objects=[os.path.join(lib, "librowan.a")],
    extra_link_args=pkg_libs("liblz4", "libxxhash", "zlib") + ["-lpthread", "-lm"],
    extra_compile_args=["-std=c11", "-Wall", "-Wno-missing-field-initializers"],
)
setup(ext_modules=[ext])
