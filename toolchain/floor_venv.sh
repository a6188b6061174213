#!/usr/bin/env bash
# The oldest Ape the plugin says it supports, as a user's project has it: a venv on the oldest
# Python (3.10) with the project's own lock (toolchain/floor-project.txt: eth-ape at the floor with
# web3 6, ape-solidity and ape-vyper at the plugin's floors), then the plugin's wheel installed as a
# user installs it, with no constraint. pip must move none of the project's packages: any version
# that changed fails the make. The test tools go in last, constrained to what is there.
# Usage: floor_venv.sh VENV WHEEL
set -euo pipefail
venv=${1:?usage: floor_venv.sh VENV WHEEL}
wheel=${2:?usage: floor_venv.sh VENV WHEEL}
root=$(cd "$(dirname "$0")/.." && pwd)
project=$root/toolchain/floor-project.txt
pip=(--quiet --disable-pip-version-check --no-compile)  # Python compiles what the tests import

python=$(bash "$root/toolchain/find_python.sh" 3.10)
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install "${pip[@]}" --upgrade pip
"$venv/bin/python" -m pip install "${pip[@]}" --no-deps -r "$project"
"$venv/bin/python" -m pip check
"$venv/bin/python" -m pip freeze --all --exclude pip > "$venv/project-pins.txt"

"$venv/bin/python" -m pip install "${pip[@]}" "$wheel"
"$venv/bin/python" -m pip freeze --all --exclude pip --exclude ape-contract-verify > "$venv/after-plugin.txt"
# Every package the project had, at the version it had: new ones (the plugin's own) are fine.
if ! "$venv/bin/python" "$root/toolchain/pins.py" "$venv/project-pins.txt" "$venv/after-plugin.txt"; then
  echo "floor: installing the plugin moved the project's pins (above); its floors must admit them" >&2
  exit 1
fi
echo "floor: the plugin installed beside $(grep -iE '^(eth-ape|web3|ape-solidity|ape-vyper)==' "$venv/project-pins.txt" | tr '\n' ' ')without moving any of the project's $(wc -l < "$venv/project-pins.txt") packages"

# The test tools, never moving what is installed.
"$venv/bin/python" -m pip install "${pip[@]}" -c "$venv/after-plugin.txt" "$wheel[test]"
