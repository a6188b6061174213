"""The suite mirrors the package: every module has a unit test file in tests/unit/<layer>/ that
imports it, a test file's basename is unique (pytest imports test modules by it), and every test
path the repository cites exists."""

import ast
import re
import shutil
import subprocess
import sys

from support import REPO

PACKAGE = REPO / "ape_contract_verify"
TESTS = REPO / "tests"
UNIT = TESTS / "unit"


def modules() -> list[tuple[str, ...]]:
    """("workflow", "report") for ape_contract_verify/workflow/report.py, ("api",) for api.py."""
    return sorted(
        path.relative_to(PACKAGE).with_suffix("").parts
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" and "__pycache__" not in path.parts
    )


def imports(test_file, dotted: str) -> bool:
    """Whether the file imports ape_contract_verify.<dotted> (at the top or inside a test)."""
    full = f"ape_contract_verify.{dotted}"
    parent, _, name = full.rpartition(".")
    for node in ast.walk(ast.parse(test_file.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == full or node.module.startswith(full + "."):
                return True
            if node.module == parent and any(alias.name == name for alias in node.names):
                return True
        if isinstance(node, ast.Import) and any(
            alias.name == full or alias.name.startswith(full + ".") for alias in node.names
        ):
            return True
    return False


def unit_files(module: tuple[str, ...]) -> list:
    """tests/unit/<layer>/test_<module>.py; test_<layer>_<module>.py where another layer has a
    module of that name (basenames are unique); test_<module>_<aspect>.py for a second file."""
    *layer, name = module
    folder = UNIT.joinpath(*layer)
    names = {f"test_{name}.py"} | ({f"test_{layer[0]}_{name}.py"} if layer else set())
    return sorted(
        path for path in folder.glob("test_*.py") if path.name in names or path.name.startswith(f"test_{name}_")
    )


def test_every_module_has_a_unit_test_file_that_imports_it():
    assert len(modules()) > 50 and ("workflow", "report") in modules()  # the walk sees the package
    lacking = [
        f"ape_contract_verify/{'/'.join(module)}.py"
        for module in modules()
        if not any(imports(path, ".".join(module)) for path in unit_files(module))
    ]
    assert not lacking, "no unit test file (tests/unit/<layer>/test_<module>.py) imports: " + ", ".join(lacking)


def test_the_check_finds_a_module_s_file_and_its_import(tmp_path):
    assert unit_files(("workflow", "report")) == [UNIT / "workflow" / "test_report.py"]
    assert imports(UNIT / "workflow" / "test_report.py", "workflow.report")
    assert imports(UNIT / "test_api.py", "api")  # `from ape_contract_verify import api`
    assert not imports(UNIT / "workflow" / "test_report.py", "server.store")
    inside = tmp_path / "test_x.py"
    inside.write_text("def test_x():\n    import ape_contract_verify.evm.abi as abi\n")
    assert imports(inside, "evm.abi") and not imports(inside, "evm.chain")


def test_a_test_file_s_basename_is_unique_in_the_suite():
    seen: dict[str, list[str]] = {}
    for path in TESTS.rglob("test_*.py"):
        seen.setdefault(path.name, []).append(str(path.relative_to(REPO)))
    assert len(seen) > 50
    assert not {name: paths for name, paths in seen.items() if len(paths) > 1}


# A path cited as tests/<…>.py, a glob of them, or one test of one (`::name`); not one in quotes,
# which is a path a test writes inside a project copy (`"tests/test_hook.py"`).
CITED = re.compile(r"(?<![\"'\w/.-])(tests/[\w/*.-]+?\.py)(?:::(\w+))?")


def cited_test_paths() -> set[tuple[str, str, str | None]]:
    sources = [REPO / "Makefile", REPO / "README.md", REPO / "pyproject.toml", *(REPO / ".ci").glob("*")]
    sources += [*(REPO / "docs").glob("*.md"), REPO / "benchmarks" / "README.md"]
    sources += [*TESTS.glob("data/*/ape-config.yaml")]
    for folder in ("ape_contract_verify", "tests", "benchmarks", "toolchain"):
        sources += [path for path in (REPO / folder).rglob("*.py") if "node_modules" not in path.parts]
    cited = set()
    for source in sources:
        if source.is_file():
            for path, test in CITED.findall(source.read_text()):
                cited.add((str(source.relative_to(REPO)), path, test or None))
    return cited


def test_every_test_path_the_repository_cites_exists():
    cited = cited_test_paths()
    assert any(path == "tests/e2e/test_verify_e2e.py" and test for _, path, test in cited)  # Makefile's test-floor
    missing = []
    for source, path, test in sorted(cited):
        found = sorted(REPO.glob(path))
        if not found or (test and not any(re.search(rf"^def {test}\(", f.read_text(), re.M) for f in found)):
            missing.append(f"{source}: {path}{'::' + test if test else ''}")
    assert not missing, "cited but not in the suite: " + "; ".join(missing)


def collect(root, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_folder_gives_the_kind_and_a_test_outside_or_marked_otherwise_fails(tmp_path):
    """tests/conftest.py's hook on a copy of the suite's frame (conftest, support, pyproject.toml)."""
    tests = tmp_path / "tests"
    shutil.copytree(TESTS / "support", tests / "support", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(TESTS / "conftest.py", tests / "conftest.py")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    test = "def test_one():\n    assert True\n"
    marked = "import pytest\n\npytestmark = pytest.mark.{}\n\n" + test
    for folder in ("unit/evm", "engine", "corpus"):
        (tests / folder).mkdir(parents=True)
    (tests / "unit" / "evm" / "test_abi_copy.py").write_text(test)
    (tests / "engine" / "test_in_engine.py").write_text(marked.format("engine"))  # agrees: allowed
    (tests / "corpus" / "test_in_corpus.py").write_text(test)

    # The unit file by its folder, the corpus's as corpus and e2e, not the engine's.
    chosen = collect(tmp_path, "-m", "unit or (corpus and e2e)")
    assert chosen.returncode == 0, chosen.stdout + chosen.stderr
    assert "2/3 tests collected" in chosen.stdout, chosen.stdout
    assert "test_abi_copy.py::test_one" in chosen.stdout and "test_in_corpus.py::test_one" in chosen.stdout

    (tests / "engine" / "test_in_engine.py").write_text(marked.format("unit"))  # the folder disagrees
    (tests / "test_at_the_top.py").write_text(test)  # no kind's folder
    wrong = collect(tmp_path)
    said = wrong.stdout + wrong.stderr
    assert wrong.returncode != 0, said
    assert "not in a kind's folder" in said and "test_at_the_top.py" in said, said
    assert "disagrees with in: " + "/".join(("tests", "engine", "test_in_engine.py")) in said, said
