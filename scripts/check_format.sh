#!/usr/bin/env bash
# Check that every C and C++ source of the project is formatted as its .clang-format says
# (the root one for C, the core's tests and the benchmarks; plugin/ and catalyst/src/ have
# their own, VTK's style). Prints the files that differ and fails if there are any.
#   scripts/check_format.sh [--fix] [--diff] [PATH...]
#   --fix    format those files in place instead (clang-format -i)
#   --diff   also show what would change (a unified diff per file)
#   PATH     only these files or folders (git pathspecs); default: the whole tree
# The files are the tracked ones plus new files not yet added (git ls-files), so build trees
# and anything .gitignore'd are never looked at. The style files are written for
# clang-format 14 (Debian 12's clang-format); other major versions format some constructs
# differently, so the check refuses them (CLANG_FORMAT=/path/to/clang-format-14 picks one).
# Part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
show_diff=0
paths=()
for a in "$@"; do
  case "$a" in
    --fix) fix=1 ;;
    --diff) show_diff=1 ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check_format: unknown option $a" >&2; exit 2 ;;
    *) paths+=("$a") ;;
  esac
done

# clang-format 14: CLANG_FORMAT, else clang-format-14, else clang-format
cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
  for c in clang-format-14 clang-format; do
    if command -v "$c" > /dev/null 2>&1; then cf=$c; break; fi
  done
fi
if [ -z "$cf" ] || ! command -v "$cf" > /dev/null 2>&1; then
  echo "check_format: clang-format not found (Debian: apt-get install clang-format; scripts/setup.sh --tests installs it)" >&2
  exit 2
fi
version=$("$cf" --version | sed -n 's/.*clang-format version \([0-9]*\).*/\1/p')
if [ "$version" != 14 ]; then
  echo "check_format: $cf is clang-format ${version:-of unknown version}; the style files are written for clang-format 14" >&2
  echo "check_format: set CLANG_FORMAT to a clang-format 14" >&2
  exit 2
fi

# plugin/ and catalyst/src/ share one style: their two files must stay the same
if [ -f plugin/.clang-format ] && [ -f catalyst/src/.clang-format ] &&
  ! cmp -s plugin/.clang-format catalyst/src/.clang-format; then
  echo "check_format: plugin/.clang-format and catalyst/src/.clang-format differ (they are one style: copy one over the other)" >&2
  exit 1
fi

# The project's C and C++ files. Nothing is vendored or generated in the tree today (the
# *.in files are CMake templates, not C); add such files to the exclusion below if that changes.
exclude='^$'
mapfile -d '' files < <(git ls-files -z --cached --others --exclude-standard -- \
  "${paths[@]:-.}" | grep -zE '\.(c|h|cc|cpp|cxx|hpp|hxx)$' | grep -zvE "$exclude" | sort -zu)

existing=()
for f in "${files[@]}"; do
  if [ -f "$f" ]; then existing+=("$f"); fi # not there: listed but deleted (a move in progress)
done
if [ ${#existing[@]} -eq 0 ]; then
  echo "check_format: no C/C++ files to check"
  exit 0
fi
# one process after the other: parallel ones would interleave their diagnostics
each() { printf '%s\0' "${existing[@]}" | xargs -0 -n 64 "$@"; }

if [ "$fix" = 1 ]; then
  before=$(each md5sum)
  each "$cf" -i --style=file
  after=$(each md5sum)
  mapfile -t changed < <(diff <(sort -k2 <<< "$before") <(sort -k2 <<< "$after") | sed -n 's/^> [0-9a-f]*  //p')
  echo "check_format: clang-format $version changed ${#changed[@]} of ${#existing[@]} files"
  [ ${#changed[@]} -eq 0 ] || printf '  %s\n' "${changed[@]}"
  exit 0
fi

# One diagnostic per file that differs ("FILE:LINE:COL: error: code should be
# clang-formatted"); any other error (a broken .clang-format, say) stops the check.
status=0
out=$(each "$cf" --dry-run --Werror --ferror-limit=1 --style=file 2>&1) || status=$?
mapfile -t bad < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<< "$out" | sort -u)
other=$(grep -E '^[^ ].*:[0-9]+:[0-9]+: error: |^Error |^Configuration file|^Invalid|^YAML' <<< "$out" |
  grep -v 'error: code should be clang-formatted' || true)
if [ -n "$other" ] || { [ "$status" -ne 0 ] && [ ${#bad[@]} -eq 0 ]; }; then
  echo "check_format: clang-format failed (status $status):" >&2
  echo "${other:-$out}" | sort -u >&2
  exit 2
fi
if [ ${#bad[@]} -gt 0 ]; then
  for f in "${bad[@]}"; do
    echo "$f"
    if [ "$show_diff" = 1 ]; then
      "$cf" --style=file "$f" | diff -u --label "$f" --label "$f (clang-format)" "$f" - || true
    fi
  done
  echo "check_format: ${#bad[@]} of ${#existing[@]} files are not formatted (clang-format $version); scripts/check_format.sh --fix formats them" >&2
  exit 1
fi
echo "check_format: all ${#existing[@]} C/C++ files formatted (clang-format $version)"
