"""`make typecheck` (in `make test`) runs mypy, strict, on the files `[tool.mypy]` names: a planted
type error in one of them fails it, naming the file and the line; the tree as it is passes."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO

MYPY = Path(sys.executable).with_name("mypy")


def mypy(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MYPY, "--cache-dir", str(root / ".mypy_cache")], cwd=root, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """The package and its pyproject.toml, copied: mypy checks the copy."""
    root = tmp_path_factory.mktemp("typecheck")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    shutil.copytree(
        REPO / "ape_contract_verify", root / "ape_contract_verify", ignore=shutil.ignore_patterns("__pycache__")
    )
    # `make typecheck` ran just before (make test): its cache makes the clean run seconds, not a
    # second full check. mypy trusts an entry only while the file's size and mtime (kept by the
    # copies) match, so the planted error is checked anew; without the cache the run is whole.
    if (REPO / ".mypy_cache").is_dir():
        shutil.copytree(REPO / ".mypy_cache", root / ".mypy_cache")
    return root


def test_mypy_is_installed_where_make_test_runs_it():
    assert MYPY.exists(), f"{MYPY} is missing: `make install` installs the typecheck extra"


def test_the_typed_layers_pass_and_a_planted_type_error_fails(scratch):
    clean = mypy(scratch)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Success" in clean.stdout
    values = scratch / "ape_contract_verify" / "protocol" / "values.py"
    original = values.read_text()
    values.write_text(original + "\n\ndef planted(address: str) -> int:\n    return checksum(address)\n")
    try:
        planted = mypy(scratch)
    finally:
        values.write_text(original)
    assert planted.returncode == 1, planted.stdout + planted.stderr
    assert "protocol/values.py:" in planted.stdout and "[return-value]" in planted.stdout, planted.stdout
