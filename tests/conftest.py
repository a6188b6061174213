"""Shared fixtures: the example project, compiled once per session in a scratch copy."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "example"
BIN = Path(sys.executable).parent


def tool_env() -> dict:
    """The environment `source .venv/bin/activate` gives: the venv first on PATH, local solc."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))
    return env


def run(cmd: list, cwd: Path, timeout: float = 300, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        cmd, cwd=cwd, env=tool_env(), capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, cmd))} exited {proc.returncode}\n"
            f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
        )
    return proc


@pytest.fixture(scope="session")
def example_copy(tmp_path_factory) -> Path:
    """A scratch copy of example/, so tests never write into the repository."""
    dest = tmp_path_factory.mktemp("example") / "example"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".build", ".cache", "__pycache__"))
    # Dependencies outside the example (OpenZeppelin under toolchain/) are named relative to it.
    config = dest / "ape-config.yaml"
    config.write_text(config.read_text().replace("local: ../toolchain/", f"local: {REPO}/toolchain/"))
    return dest


@pytest.fixture(scope="session")
def compiled_example(example_copy) -> Path:
    """The example project after `ape compile --include-dependencies` (offline compilers)."""
    run([BIN / "ape", "compile", "--include-dependencies"], cwd=example_copy, timeout=600)
    return example_copy


def load_manifest(project: Path) -> dict:
    return json.loads((project / ".build" / "__local__.json").read_text())


@pytest.fixture(scope="session")
def deployed_local(compiled_example):
    """`ape run deploy` on ethereum:local:test; the example's config has auto verification on."""
    return run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:test"], cwd=compiled_example, timeout=900)
