"""What the test modules share: paths, the venv's tools, and running them (no fixtures here;
those are in tests/conftest.py). Test modules import `support.*`, never each other."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "example"
BIN = Path(sys.executable).parent
# toolchain/solc-native.js keeps solc-js answers by input there (tests/conftest.py sets it for a run);
# a test that needs the compiler itself to run (a bound, a compile in flight) removes it.
SOLC_CACHE_ENV = "SOLC_NATIVE_CACHE"


def tool_env() -> dict:
    """The environment `source .venv/bin/activate` gives: the venv first on PATH, local solc."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))
    return env


def run(cmd: list, cwd: Path, timeout: float = 300, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=tool_env(), capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        # The error's last lines first: a truncated report still shows why.
        last = [line for line in proc.stderr.splitlines() if line.strip()][-3:]
        raise AssertionError(
            f"{' '.join(map(str, cmd))} exited {proc.returncode}: {' | '.join(last)}\n"
            f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
        )
    return proc


def load_manifest(project: Path) -> dict:
    return json.loads((project / ".build" / "__local__.json").read_text())
