"""The deploy hook never breaks a deploy (issue 27): a project whose Ape dependencies are installed
on first use, from a fresh Ape data folder, with auto verification on. Before the deploy hook kept
its workers out of Ape's managers while the script ran (`derive.ape_gate`), a worker reading the
dependencies installed OpenZeppelin while the script's `project.Token` compiled, which copied the
package half-written into `contracts/.cache`: the script died (1 run in 6 here, 13 in 16 on a
project of the same shape) and `ape compile` failed after it until the folder was deleted.

Many runs, two at a time (each its own copy and data folder), so the machine is loaded as a CI's
is: each run's script and the `ape compile` after it must succeed, and both contracts verify."""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from support import BIN, REPO
from support.e2e import summary

pytestmark = pytest.mark.timeout(1800)

PROJECT = REPO / "tests" / "data" / "first_use_project"
RUNS = int(os.environ.get("FIRST_USE_RUNS", "20"))


def _lay(root: Path) -> Path:
    project = root / "project"
    shutil.copytree(PROJECT, project)
    npm = project / "node_modules" / "@openzeppelin" / "contracts"
    shutil.copytree(REPO / "toolchain" / "openzeppelin-contracts", npm, ignore=shutil.ignore_patterns(".complete"))
    shutil.copy(REPO / "toolchain" / "node_modules" / "@openzeppelin" / "contracts" / "package.json", npm)
    return project


def _one_run(root: Path) -> str:
    """One fresh data folder, one deploy, one compile after it: '' when all went right, else why."""
    project = _lay(root)
    env_data = {"APE_DATA_FOLDER": str(root / "ape-data")}
    deploy = _run_with(env_data, [BIN / "ape", "run", "deploy", "--network", "ethereum:local:test"], project)
    if deploy.returncode != 0:
        return f"{root.name}: the deploy script failed: {_last_lines(deploy)}"
    rows = summary(deploy.stdout)
    verified = sorted(name for name, (_, outcome, _) in rows.items() if outcome == "verified")
    if verified != ["Token", "lib:Counter"]:
        return f"{root.name}: verified {verified}, rows {rows}"
    compile_after = _run_with(env_data, [BIN / "ape", "compile"], project)
    if compile_after.returncode != 0:
        return f"{root.name}: `ape compile` after the deploy failed: {_last_lines(compile_after)}"
    return ""


def _run_with(extra: dict, cmd: list, cwd: Path):
    import subprocess

    from support import tool_env

    env = {**tool_env(), **extra}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _last_lines(proc) -> str:
    lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
    return " | ".join(lines[-4:])


def test_deploys_with_dependencies_installed_on_first_use_never_break(tmp_path):
    roots = [tmp_path / f"run-{index:02d}" for index in range(RUNS)]
    for root in roots:
        root.mkdir()
    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = [failure for failure in pool.map(_one_run, roots) if failure]
    assert not failures, f"{len(failures)} of {RUNS} runs failed:\n" + "\n".join(failures)
