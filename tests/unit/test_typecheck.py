"""`make typecheck` (in `make test`) runs mypy, strict, on the files `[tool.mypy]` names: every
module of the package is among them, and a planted type error in one fails it, naming the file
and the line. That the tree as it is passes is `make typecheck`'s own run, not re-run here."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO

MYPY = Path(sys.executable).with_name("mypy")
PACKAGE = REPO / "ape_contract_verify"


def test_mypy_is_installed_where_make_test_runs_it():
    assert MYPY.exists(), f"{MYPY} is missing: `make install` installs the typecheck extra"


def test_every_module_is_among_the_files_mypy_checks():
    import tomllib  # Python 3.11: the main venv's, where mypy runs (the tiers skip this file)

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]
    named = [REPO / name for name in config["files"]]
    excluded = [REPO / pattern.replace("\\.", ".") for pattern in config["exclude"]]
    unchecked = [
        str(path.relative_to(REPO))
        for path in PACKAGE.rglob("*.py")
        if path not in excluded and not any(path == n or n in path.parents for n in named)
    ]
    assert unchecked == []
    assert config["strict"] is True


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """The package and its pyproject.toml, copied: mypy checks the copy."""
    root = tmp_path_factory.mktemp("typecheck")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    shutil.copytree(PACKAGE, root / "ape_contract_verify", ignore=shutil.ignore_patterns("__pycache__"))
    # `make typecheck` ran just before (make test): with its cache, only the planted module is
    # checked again (mypy trusts an entry while the file's size and mtime, kept by the copies,
    # match); without it, what the module imports is checked too.
    if (REPO / ".mypy_cache").is_dir():
        shutil.copytree(REPO / ".mypy_cache", root / ".mypy_cache")
    return root


def test_a_planted_type_error_fails_the_check(scratch):
    values = scratch / "ape_contract_verify" / "protocol" / "values.py"
    # A wrong return type, and a function strict mode alone refuses (no annotations).
    values.write_text(
        values.read_text()
        + "\n\ndef planted(address: str) -> int:\n    return checksum(address)\n"
        + "\n\ndef unannotated(value):\n    return value\n"
    )
    # The planted module alone: the project's configuration (strict) applies to a file named here.
    planted = subprocess.run(
        [MYPY, "--cache-dir", str(scratch / ".mypy_cache"), "ape_contract_verify/protocol/values.py"],
        cwd=scratch,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert planted.returncode == 1, planted.stdout + planted.stderr
    assert "protocol/values.py:" in planted.stdout and "[return-value]" in planted.stdout, planted.stdout
    assert "[no-untyped-def]" in planted.stdout, planted.stdout
