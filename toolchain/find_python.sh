#!/usr/bin/env bash
# Prints the path of a Python X.Y interpreter (`find_python.sh 3.13`), looked for as
# toolchain/install.sh looks for 3.10: $PYTHON<XY> (PYTHON313=/path/to/python3.13), pythonX.Y on
# PATH, then pyenv's versions. Exits 1 with what to do when there is none: a tier `make test` runs
# on that Python fails, never skips.
set -euo pipefail
want=${1:?usage: find_python.sh X.Y}
major=${want%%.*}
minor=${want#*.}
override_name="PYTHON${major}${minor}"
for candidate in ${!override_name:-} "python$want" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$want".*/bin/python; do
  # pyenv's shim is on PATH even when it cannot run that version: ask the interpreter itself.
  if "$candidate" -c "import sys; sys.exit(sys.version_info[:2] != ($major, $minor))" 2>/dev/null; then
    command -v "$candidate"
    exit 0
  fi
done
echo "toolchain: Python $want not found; install one (pyenv install $want) or set $override_name=/path/to/python$want" >&2
exit 1
