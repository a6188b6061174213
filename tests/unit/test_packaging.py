"""What the package's checks and tiers rest on: ruff's lint and format checks fail on a planted
finding (`make lint`, in `make test`), an install that moves a project's pins is caught
(toolchain/pins.py, the floor tier), and a missing Python for a tier is an error, never a skip."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO

RUFF = Path(sys.executable).with_name("ruff")
TOOLCHAIN = REPO / "toolchain"

# Formatted as `ruff format` writes it, and clean under the project's rules.
CLEAN = '''"""A module as the project's rules want it."""

import json
from pathlib import Path


def read(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.exists() else None
'''


def ruff(*args: str, root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([RUFF, *args, "--no-cache", "pkg"], cwd=root, capture_output=True, text=True, timeout=120)


@pytest.fixture
def scratch(tmp_path) -> Path:
    """A project with the repository's ruff configuration and one clean module."""
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    return tmp_path


def test_a_clean_module_passes_both_checks(scratch):
    for check in (("check",), ("format", "--check")):
        proc = ruff(*check, root=scratch)
        assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "planted, rule",
    [
        ("import os\n", "F401"),  # an unused import
        # typing older than the target Python (3.10) allows
        ("from typing import Optional\n\n\ndef f(x: Optional[int]) -> int:\n    return x or 0\n", "UP045"),
        ("import sys\nimport json\n\nprint(json, sys)\n", "I001"),  # unsorted imports
        ("X = None\nY = X == None\n", "E711"),  # pycodestyle's E (line length is the formatter's, E501 off)
    ],
    ids=["unused-import", "optional", "unsorted", "none-comparison"],
)
def test_a_planted_finding_fails_the_lint(scratch, planted, rule):
    (scratch / "pkg" / "planted.py").write_text(f'"""Planted."""\n\n{planted}')
    proc = ruff("check", "--output-format", "concise", root=scratch)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "planted.py:" in proc.stdout and rule in proc.stdout, proc.stdout
    assert "clean.py" not in proc.stdout


def test_an_unformatted_file_fails_the_format_check(scratch):
    (scratch / "pkg" / "unformatted.py").write_text(CLEAN.replace("def read(path: Path)", "def read( path : Path )"))
    proc = ruff("format", "--check", root=scratch)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "unformatted.py" in proc.stdout and "clean.py" not in proc.stdout, proc.stdout


def test_the_makefile_lints_what_the_pre_commit_hooks_lint():
    """`make lint` and .pre-commit-config.yaml name the same ruff checks, over the same code."""
    makefile = (REPO / "Makefile").read_text()
    assert "$(BIN)/ruff check $(LINTED)" in makefile and "$(BIN)/ruff format --check $(LINTED)" in makefile
    assert "LINTED := ape_contract_verify tests benchmarks $(wildcard toolchain/*.py)" in makefile
    hooks = (REPO / ".pre-commit-config.yaml").read_text()
    assert "id: ruff\n" in hooks and "id: ruff-format" in hooks
    pinned = next(line for line in (REPO / "constraints.txt").read_text().splitlines() if line.startswith("ruff=="))
    assert f"rev: v{pinned.split('==')[1]}" in hooks, "the hooks' ruff is the one `make test` runs"


# --- the floor tier's pin check (toolchain/pins.py) ---------------------------------------------


def pins(before: str, after: str, tmp_path: Path) -> subprocess.CompletedProcess:
    (tmp_path / "before.txt").write_text(before)
    (tmp_path / "after.txt").write_text(after)
    return subprocess.run(
        [sys.executable, TOOLCHAIN / "pins.py", tmp_path / "before.txt", tmp_path / "after.txt"],
        capture_output=True,
        text=True,
        timeout=60,
    )


PROJECT = "eth-ape==0.8.25\nweb3==6.20.4\neth_abi==5.1.0\n"


def test_an_install_that_only_adds_packages_keeps_the_pins(tmp_path):
    proc = pins(PROJECT, PROJECT.replace("eth_abi", "eth-abi") + "starlette==0.40.0\n", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


@pytest.mark.parametrize(
    "after, said",
    [
        (PROJECT.replace("web3==6.20.4", "web3==7.16.0"), "web3 6.20.4 -> 7.16.0"),
        (PROJECT.replace("eth-ape==0.8.25\n", ""), "eth-ape 0.8.25 -> removed"),
        (PROJECT.replace("eth_abi==5.1.0", "ETH.ABI==5.2.0"), "eth-abi 5.1.0 -> 5.2.0"),
    ],
    ids=["upgraded", "removed", "other-spelling"],
)
def test_an_install_that_moves_a_pin_fails(tmp_path, after, said):
    proc = pins(PROJECT, after, tmp_path)
    assert proc.returncode == 1
    assert said in proc.stderr, proc.stderr


# --- the Python of a tier ----------------------------------------------------------------------


def find_python(version: str, **env: str) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        ["bash", TOOLCHAIN / "find_python.sh", version],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )


def test_the_py313_tier_finds_python_3_13():
    proc = find_python("3.13")
    assert proc.returncode == 0, proc.stderr
    python = proc.stdout.strip()
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    assert version.stdout.strip() == "(3, 13)"


def test_a_missing_python_is_an_error_naming_the_fix():
    proc = find_python("3.99", PYTHON399="/nonexistent/python3.99")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Python 3.99 not found" in proc.stderr
    assert "pyenv install 3.99" in proc.stderr and "PYTHON399=" in proc.stderr
