#!/usr/bin/env bash
# Offline toolchain for a machine that reaches only PyPI, npm and Debian:
#  - solc-js versions from npm, each exposed as a native-looking `solc-v<X.Y.Z>` in a project-local
#    SOLCX_BINARY_PATH, where py-solc-x (and so ape-solidity) finds it;
#  - the same executables where forge's svm looks, when asked (--svm DIR);
#  - anvil and forge from npm, and vyper from the venv, on the venv's PATH;
#  - the venv's activate script exports SOLCX_BINARY_PATH, so `source .venv/bin/activate` is enough.
# Idempotent: a second run only re-checks.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${VENV:-$root/.venv}
tc=$root/toolchain
solcx=$root/.solcx

if [ ! -d "$tc/node_modules" ] || [ "$tc/package-lock.json" -nt "$tc/node_modules/.installed" ]; then
  (cd "$tc" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$tc/node_modules/.installed"
fi

# OpenZeppelin's Solidity sources without the rest of the npm package (its Hardhat artifacts
# would collide with compiled types, and Ape lists at most 500 files under contracts/).
oz_src=$tc/node_modules/@openzeppelin/contracts
oz=$tc/openzeppelin-contracts
if [ ! -f "$oz/.complete" ] || [ "$oz_src/package.json" -nt "$oz/.complete" ]; then
  rm -rf "$oz" && mkdir -p "$oz"
  (cd "$oz_src" && find . -name '*.sol' -print0 | xargs -0 cp --parents -t "$oz")
  touch "$oz/.complete"
fi

# The corpus's Vyper protocols, published on PyPI as packages of .vy files: each pinned release in
# a folder of its own (never the venv's site-packages: snekmate 0.0.1 installs top-level `tokens`,
# `auth`, … packages). 0.0.1's sources import one another as `src.…`, as in its repository, so they
# go under `src/`. The corpus projects (corpus/snekmate*/contracts) link there.
pypi=$tc/pypi
for spec in snekmate==0.1.2: snekmate==0.0.1:src; do
  requirement=${spec%%:*}
  dest=$pypi/${requirement%%==*}-${requirement##*==}
  if [ ! -f "$dest/.complete" ]; then
    rm -rf "$dest"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
      --target "$dest/${spec#*:}" "$requirement"
    touch "$dest/.complete"
  fi
done

mkdir -p "$solcx"
for pkg in "$tc"/node_modules/solc-*; do
  version=${pkg##*/solc-}
  shim="$solcx/solc-v$version"
  # py-solc-x and ape-solidity ask `--version` before most compiles; loading solc-js to answer
  # costs half a CPU-second a time, so the shim answers it from what solc-js said once, here.
  answer=$(node "$tc/solc-native.js" "$pkg" --version)
  # --liftoff-only: V8's baseline wasm compiler alone. A compile is one short process, and
  # optimizing soljson's hot functions costs more CPU than it saves: about 40% of a small
  # contract's compile, 30% of OpenZeppelin's Governor; only a via-IR compile of ten seconds
  # or more runs longer in wall time (10.3 s against 8.8 s), still with less CPU.
  cat > "$shim" <<SH
#!/bin/sh
if [ "\$#" -eq 1 ] && [ "\$1" = "--version" ]; then
  cat <<'VERSION'
$answer
VERSION
  exit 0
fi
exec node --liftoff-only "$tc/solc-native.js" "$pkg" "\$@"
SH
  chmod +x "$shim"
done

for tool in anvil forge; do
  ln -sf "$tc/node_modules/.bin/$tool" "$venv/bin/$tool"
done

# Vyper versions besides the venv's, each in a small venv of its own (each release pins its own
# dependencies): .vyper/<X.Y.Z>/bin/vyper-json, where the explorer's compilers.py finds them.
# vyper 0.3.7 and older declare Python < 3.11, so their venvs are made with a Python 3.10.
python310() {
  local candidate
  for candidate in ${PYTHON310:-} python3.10 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10.*/bin/python; do
    # pyenv's shim is on PATH even when it cannot run 3.10: ask the interpreter itself.
    if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 10))' 2>/dev/null; then
      echo "$candidate"
      return
    fi
  done
  echo "toolchain: vyper $1 needs Python 3.10 (it declares Python < 3.11); install one (pyenv install 3.10) or set PYTHON310=/path/to/python3.10" >&2
  exit 1
}
older_than() { [ "$(printf '%s\n' "$1" "$2" | sort -V | head -1)" = "$1" ] && [ "$1" != "$2" ]; }
# The real directory, so vvm's links stay valid from any checkout that links .vyper here.
mkdir -p "$root/.vyper/vvm"
vyper_root=$(cd -P "$root/.vyper" && pwd)
for version in ${VYPER_EXTRA_VERSIONS-0.3.10 0.3.7 0.2.16}; do
  vdir=$vyper_root/$version
  if [ ! -f "$vdir/.installed" ]; then
    rm -rf "$vdir"
    python=$venv/bin/python
    if older_than "$version" 0.2.8; then
      # vyper 0.2.7 reads Python's ast as it was before 3.9: on 3.9 and later it installs, then
      # refuses every `String[64]` ("Subscript must be a literal integer"). Debian 12 has no 3.8.
      python=$("$tc/find_python.sh" 3.8)
    elif older_than "$version" 0.3.8; then
      python=$(python310 "$version")
    fi
    "$python" -m venv "$vdir"
    "$vdir/bin/python" -m pip install --quiet --disable-pip-version-check "vyper==$version"
    touch "$vdir/.installed"
  fi
  # Where vvm (and so ape-vyper) looks for a Vyper that is not the venv's.
  ln -sf "$vdir/bin/vyper" "$vyper_root/vvm/vyper-$version"
done

marker="# ape-contract-verify offline toolchain"
if ! grep -q "$marker" "$venv/bin/activate"; then
  cat >> "$venv/bin/activate" <<SH

$marker
export SOLCX_BINARY_PATH="$solcx"
SH
fi
vvm_marker="# ape-contract-verify: vyper side venvs for vvm"
if ! grep -q "$vvm_marker" "$venv/bin/activate"; then
  cat >> "$venv/bin/activate" <<SH

$vvm_marker
export VVM_BINARY_PATH="$root/.vyper/vvm"
SH
fi
echo "toolchain: solc $(ls "$solcx" | sed 's/solc-v//' | tr '\n' ' ')| anvil $("$venv/bin/anvil" --version | head -1 | awk "{print \$3}") | vyper $("$venv/bin/vyper" --version) $(ls "$root/.vyper" 2>/dev/null | grep -v vvm | tr '\n' ' ')"
