#!/usr/bin/python3
"""Group fuzz inputs by the failure they cause: run the harness on each file and print one
line per distinct signature (the sanitizer's report location and kind, or the broken oracle
with its numbers left out), with how many inputs give it and the smallest one.

    /usr/bin/python3 tests/fuzz/triage.py build-fuzz/fuzz_find_clumps build-fuzz/artifacts/* [--quiet]

Inputs that pass are counted as such. Exit status 1 if any input fails."""
import re
import subprocess
import sys
from collections import defaultdict

ENV = {"ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1", "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
       "PATH": "/usr/bin:/bin"}


def signature(output):
    m = re.search(r"oracle (\w) broken: (.*)", output)
    if m:  # the oracle and its message without numbers
        return f"oracle {m.group(1)}: " + re.sub(r"-?\d[\d.e+-]*|inf|nan", "#", m.group(2))
    m = re.search(r"(\S+:\d+):\d+: runtime error: (.*)", output)
    if m:
        return f"UBSan {m.group(1)}: " + re.sub(r"-?\d[\d.e+-]*", "#", m.group(2))
    m = re.search(r"ERROR: (AddressSanitizer|LeakSanitizer): (\S+)", output)
    if m:
        frame = re.search(r"#[1-9] 0x[0-9a-f]+ in (\S+) (\S+)", output[m.end():])
        return f"{m.group(1)} {m.group(2)} in " + (f"{frame.group(1)} {frame.group(2)}" if frame else "?")
    m = re.search(r"ERROR: libFuzzer: (\S+)", output)
    if m:
        return "libFuzzer " + m.group(1)
    return "failed without a report"


def main():
    args = [a for a in sys.argv[1:] if a != "--quiet"]
    fuzzer, inputs = args[0], args[1:]
    groups = defaultdict(list)
    passed = 0
    for path in inputs:
        p = subprocess.run([fuzzer, path], capture_output=True, text=True, env=ENV, timeout=300)
        if p.returncode == 0:
            passed += 1
            continue
        size = len(open(path, "rb").read())
        groups[signature(p.stdout + p.stderr)].append((size, path))
    for sig, files in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        files.sort()
        print(f"{len(files):5d}  {sig}\n       smallest: {files[0][1]} ({files[0][0]} bytes)")
    print(f"{passed} of {len(inputs)} inputs pass; {len(groups)} distinct failures")
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())
