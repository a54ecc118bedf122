"""Writes the C source of phew's cffi module, phew._ffi (cffi's API mode; CMake compiles it).

The declarations cffi reads are the public headers themselves, run through the C preprocessor
with empty stand-ins for <stddef.h> and <stdint.h> (cffi knows int64_t, size_t and the rest)
and without __GNUC__ (PHEW_API then expands to nothing): nothing is declared twice, and the
compiled module checks every struct's fields against the real headers.

    python3 build_ffi.py --cc CC --include DIR [--include DIR ...] --output FILE.c
"""
import argparse
import os
import subprocess
import sys
import tempfile

import cffi

HEADERS = ("phew/phew.h", "phew/phew_readers.h")

# The two callbacks of phew_context, answered in Python (phew/_core.py).
CALLBACKS = """
extern "Python" void phew_python_progress(double fraction, const char *stage, void *user_data);
extern "Python" int phew_python_cancel(void *user_data);
"""


def declarations(cc, include_dirs):
    with tempfile.TemporaryDirectory() as stubs:
        for name in ("stddef.h", "stdint.h"):
            open(os.path.join(stubs, name), "w").close()
        command = [cc, "-E", "-P", "-nostdinc", "-U__GNUC__", "-I", stubs]
        command += ["-I" + d for d in include_dirs] + ["-x", "c", "-"]
        source = "".join('#include "%s"\n' % h for h in HEADERS)
        done = subprocess.run(command, input=source, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit("build_ffi.py: the preprocessor failed:\n" + done.stderr)
        return done.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", required=True, help="the C compiler, as its preprocessor")
    ap.add_argument("--include", action="append", required=True, help="a folder of the public headers")
    ap.add_argument("--output", required=True, help="the C file to write")
    args = ap.parse_args()
    ffi = cffi.FFI()
    ffi.cdef(declarations(args.cc, args.include) + CALLBACKS)
    ffi.set_source("phew._ffi", "".join('#include "%s"\n' % h for h in HEADERS))
    ffi.emit_c_code(args.output)


if __name__ == "__main__":
    main()
