"""The package's shape holds by contract: import-linter's layers, no cycles, no private imports
across modules, every import declared. `make test` runs lint-imports and deptry on the tree first;
here each is shown failing on a planted error (a copy of the package), not re-run on the tree."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO

LINT = Path(sys.executable).with_name("lint-imports")
DEPTRY = Path(sys.executable).with_name("deptry")
PACKAGE = REPO / "ape_contract_verify"


def lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}  # this copy of the package, not the installed one
    return subprocess.run(
        [LINT, "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def package_copy(tmp_path) -> Path:
    shutil.copytree(PACKAGE, tmp_path / "ape_contract_verify", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize(
    "module, bad_import, broken",
    [
        # a lower layer reaching up: the engine must not know the server
        ("engine/verifier.py", "from ape_contract_verify.server import store", "Layers"),
        # siblings that must stay independent: the server serves without the client
        ("server/pages.py", "from ape_contract_verify.client import etherscan", "Layers"),
        # the explorer's library verifies without the client, and knows nothing of HTTP's faces
        ("explorer/jobs.py", "from ape_contract_verify.client import etherscan", "Layers"),
        ("explorer/store.py", "from ape_contract_verify.server import api", "Layers"),
        # the web stack is an extra: nothing outside server/ imports it
        ("workflow/local_target.py", "import starlette", "web stack"),
        # errors sit at the bottom: they import nothing of the package
        ("exceptions.py", "from ape_contract_verify.protocol import secrets", "Layers"),
        # a cycle inside one layer
        ("evm/bytecode.py", "from ape_contract_verify.evm import proxies", "cycles"),
    ],
)
def test_a_forbidden_import_breaks_a_contract(package_copy, module, bad_import, broken):
    target = package_copy / "ape_contract_verify" / module
    target.write_text(target.read_text() + f"\n\ndef _late():\n    {bad_import}\n")
    proc = lint(package_copy)
    assert proc.returncode != 0, proc.stdout
    assert "0 broken" not in proc.stdout
    broken_section = proc.stdout.split("Broken contracts", 1)[1]
    assert broken in broken_section
    dotted = "ape_contract_verify." + module.removesuffix(".py").replace("/", ".")
    assert dotted in broken_section or dotted.rsplit(".", 1)[-1] in broken_section


def private_imports(paths) -> list[str]:
    """`from ape_contract_verify… import _name`: a module reaching for another's private name (an
    alias such as `import checksum as _checksum` is the importer's own, and fine)."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ape_contract_verify"):
                found += [
                    f"{path.relative_to(REPO)}:{node.lineno}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
    return found


def test_no_module_imports_another_modules_private_name(tmp_path):
    paths = [*PACKAGE.rglob("*.py"), *(REPO / "benchmarks").rglob("*.py"), *(REPO / "toolchain").glob("*.py")]
    assert private_imports(paths) == []
    # The check finds one when there is one.
    planted = tmp_path / "planted.py"
    planted.write_text("from ape_contract_verify.evm.reads import (\n    ChainError,\n    _number,\n)\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys.modules[__name__], "REPO", tmp_path)
        assert private_imports([planted]) == ["planted.py:1: ape_contract_verify.evm.reads._number"]


def deptry(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([DEPTRY, ".", "--no-ansi"], cwd=root, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "module, line, rule",
    [
        ("evm/bytecode.py", "import toolz", "DEP003"),  # installed only because cytoolz needs it
        ("server/pages.py", "from mako import Template", "DEP001"),  # not installed at all
    ],
)
def test_an_undeclared_import_fails_the_dependency_check(package_copy, module, line, rule):
    target = package_copy / "ape_contract_verify" / module
    target.write_text(target.read_text() + f"\n\ndef _late():\n    {line}\n")
    proc = deptry(package_copy)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert rule in proc.stdout + proc.stderr and line.split()[1] in proc.stdout + proc.stderr
