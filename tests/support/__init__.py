"""What the test modules share: paths, the venv's tools, and running them (no fixtures here;
those are in tests/conftest.py). Test modules import `support.*`, never each other."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "example"
BIN = Path(sys.executable).parent
# toolchain/solc-native.js keeps solc-js answers by input there, and compiles in the daemon listening
# there (tests/conftest.py sets both up for a run); a test that needs the compiler itself to run in
# the process it starts (a bound, a compile in flight) removes it.
SOLC_CACHE_ENV = "SOLC_NATIVE_CACHE"
# In that folder, toolchain/solc-daemon.js's socket: the shims compile there, in a solc-js kept loaded.
SOLC_DAEMON_SOCKET = "daemon.sock"


def start_solc_daemon(folder: Path, workers: int = 4) -> subprocess.Popen:
    """toolchain/solc-daemon.js on `folder`, listening once this returns (or after 10 s, without
    it: the shims then compile themselves, as they do with no daemon)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "daemon.log", "ab") as log:
        daemon = subprocess.Popen(
            ["node", "--liftoff-only", REPO / "toolchain" / "solc-daemon.js", folder, str(workers)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    deadline = time.monotonic() + 10
    while not (folder / SOLC_DAEMON_SOCKET).exists() and daemon.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return daemon


def cpu_seconds(pid: int) -> float:
    """A running process's CPU time so far (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_solc_daemon(daemon: subprocess.Popen) -> None:
    daemon.terminate()
    try:
        daemon.wait(timeout=10)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait(timeout=10)


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
