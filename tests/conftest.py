"""Session fixtures: the example project compiled once, deployed once per kind of chain and shared
by every test that only reads it; one compile cache on disk for the whole run. Helpers that test
modules import live in tests/support/."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from support import BIN, EXAMPLE, REPO, SOLC_CACHE_ENV, run, start_solc_daemon, stop_solc_daemon
from support.e2e import deploy_example_on_anvil, stop
from support.rpc_proxy import HostedNodeProxy
from support.stub_server import stub  # noqa: F401  (the fixture, for the client tests)

COMPILE_CACHE_ENV = "APE_CONTRACT_VERIFY_COMPILE_CACHE"
COMPILE_OUTPUT = "ape-compile.out"  # beside the compiled example: its `ape compile`'s output
TESTS = Path(__file__).parent
# A test's kind is its folder's (registered in pyproject.toml; `-m unit` runs seconds). The corpus's
# tests deploy and verify end to end: e2e too, as they were marked before the folders.
FOLDER_KINDS = {
    "unit": ("unit",),
    "engine": ("engine",),
    "e2e": ("e2e",),
    "browser": ("browser",),
    "corpus": ("corpus", "e2e"),
}
KINDS = ("unit", "engine", "e2e", "browser", "corpus")


def _drives_the_example(item) -> bool:
    """e2e and browser tests, and any module that builds on the example project's copies; not the
    corpus's (test_corpus_*.py) nor a module with `OWN_PROJECT = True`: they deploy projects
    of their own, with no Ape dependency to install, and run beside the example's group."""
    if item.module.__name__.startswith("test_corpus_") or getattr(item.module, "OWN_PROJECT", False):
        return False
    if item.get_closest_marker("e2e") or item.get_closest_marker("browser"):
        return True
    names = vars(item.module)
    return "EXAMPLE" in names or any(getattr(value, "__module__", None) == "support.e2e" for value in names.values())


@pytest.hookimpl(tryfirst=True)  # before xdist's, which reads the groups into the test ids
def pytest_collection_modifyitems(items):
    """A test's folder says what it needs (tests/unit/, engine/, e2e/, browser/, corpus/): its kind
    marker comes from there, so `-m unit` selects tests/unit/. A test outside those folders, or
    with an explicit kind marker its folder disagrees with, is an error.

    On xdist's workers (`--dist loadgroup`, pyproject.toml), the modules that read the example's
    shared deploys (SHARED_DEPLOYS) run on one worker, so those are made once; the other modules
    that drive the example (its compiled copies, deployed by the test) run on one worker too, which
    compiles the example once for them; every other module runs whole on any worker, so its module
    fixtures are built once. Each worker has an Ape data folder of its own (pytest_configure)."""
    outside, disagreeing = set(), set()
    for item in items:
        where = item.path.relative_to(TESTS).parts if item.path.is_relative_to(TESTS) else ()
        kinds = FOLDER_KINDS.get(where[0], ()) if len(where) > 1 else ()
        if not kinds:
            outside.add(item.nodeid.split("::")[0])
            continue
        if {mark.name for mark in item.iter_markers() if mark.name in KINDS} - set(kinds):
            disagreeing.add(item.nodeid.split("::")[0])
        for kind in kinds:
            item.add_marker(kind)
    problems = []
    if outside:
        problems.append(
            f"not in a kind's folder (tests/{{{','.join(FOLDER_KINDS)}}}/): {', '.join(sorted(outside))}; "
            "a unit test of ape_contract_verify/<layer>/<module>.py goes in tests/unit/<layer>/test_<module>.py"
        )
    if disagreeing:
        problems.append(
            f"a kind marker its folder disagrees with in: {', '.join(sorted(disagreeing))}; "
            "the folder gives the kind: move the file or drop the marker"
        )
    if problems:
        raise pytest.UsageError("\n".join(problems))
    end_to_end = {item.module.__name__ for item in items if _drives_the_example(item)}
    sharing = {item.module.__name__ for item in items if SHARED_DEPLOYS & set(item.fixturenames)}
    for item in items:
        module = item.module.__name__
        if module in end_to_end:
            group = "example" if module in sharing else "example-copies"
        else:
            group = module
        item.add_marker(pytest.mark.xdist_group(group))


# The session fixtures that deploy the example for many modules to read.
SHARED_DEPLOYS = {"example_on_anvil", "deployed_local"}
_COMPILE_CACHE = pytest.StashKey[str]()
_SOLC_DAEMON = pytest.StashKey[subprocess.Popen]()


def pytest_configure(config):
    """Every CompileCache made without a directory (the deploy's pre-check, the embedded explorer's,
    `ape verify serve`'s in a child process) shares one disk cache for the run: the same sources
    are compiled once, not once per deploy. Set here, before any fixture (a session fixture came
    after the example's deploys, which then compiled alone), by the controller; xdist's workers
    and every process they start inherit it. Tests that count compiles make their own.

    Below it, the solc-js shims keep each answer by its input (toolchain/solc-native.js): Ape's
    compiles of the example's copies, forge's and the explorers' of the same sources run solc-js
    once a run. Every input is still compiled by the real compiler, once: in solc-daemon.js's
    solc-js instances, kept loaded for the run, since loading one is most of a small compile."""
    if hasattr(config, "workerinput"):
        # Ape's package folder (dependencies installed and compiled there) is not safe for two
        # processes writing at once: one for each worker and the processes it starts. Set before
        # this worker first asks Ape for its config, which reads it once.
        worker = config.workerinput["workerid"]
        os.environ["APE_DATA_FOLDER"] = os.path.join(os.environ[COMPILE_CACHE_ENV], f"ape-data-{worker}")
        return
    if os.environ.get(COMPILE_CACHE_ENV):
        return
    config.stash[_COMPILE_CACHE] = os.environ[COMPILE_CACHE_ENV] = tempfile.mkdtemp(prefix="acv-compile-cache-")
    kept = os.environ[SOLC_CACHE_ENV] = os.path.join(os.environ[COMPILE_CACHE_ENV], "solc-js")
    config.stash[_SOLC_DAEMON] = start_solc_daemon(Path(kept))


def pytest_unconfigure(config):
    daemon = config.stash.get(_SOLC_DAEMON, None)
    if daemon is not None:
        stop_solc_daemon(daemon)
    directory = config.stash.get(_COMPILE_CACHE, None)
    if directory is not None:
        os.environ.pop(COMPILE_CACHE_ENV, None)
        os.environ.pop(SOLC_CACHE_ENV, None)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def fast_cli(monkeypatch):
    """CLI commands build their own client: keep its backoff short so fault tests stay fast."""
    from ape_contract_verify.client.targets import Target

    original = Target.client
    monkeypatch.setattr(
        Target, "client", lambda self, *a, **kw: original(self, *a, **{"backoff": 0.01, "max_backoff": 0.02, **kw})
    )


@pytest.fixture(scope="session")
def example_copy(tmp_path_factory):
    """A scratch copy of example/, so tests never write into the repository."""
    dest = tmp_path_factory.mktemp("example") / "example"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".build", ".cache", "__pycache__"))
    # Dependencies outside the example (OpenZeppelin under toolchain/) are named relative to it.
    config = dest / "ape-config.yaml"
    config.write_text(config.read_text().replace("local: ../toolchain/", f"local: {REPO}/toolchain/"))
    return dest


@pytest.fixture(scope="session")
def compiled_example(example_copy):
    """The example project after `ape compile --include-dependencies` (offline compilers); what the
    command printed is kept beside it (COMPILE_OUTPUT), for tests of what Ape says."""
    proc = run([BIN / "ape", "compile", "--include-dependencies"], cwd=example_copy, timeout=600)
    (example_copy.parent / COMPILE_OUTPUT).write_text(proc.stdout + proc.stderr)
    return example_copy


@pytest.fixture(scope="session")
def deployed_local(compiled_example):
    """`ape run deploy` on ethereum:local:test; the example's config has auto verification on.
    Each socket the command listens on is said on stderr (`LISTENING …`): it should open none."""
    command = [BIN / "python", REPO / "tests" / "support" / "ape_listening.py", "run", "deploy"]
    return run([*command, "--network", "ethereum:local:test"], cwd=compiled_example, timeout=900)


@pytest.fixture(scope="session")
def example_on_anvil(compiled_example, tmp_path_factory):
    """The example deployed to one anvil by `ape run deploy`, verified beside it on two targets: a
    standalone `ape verify serve` (its Etherscan-style API) and a second one's Sourcify face. Ape
    reaches the anvil as users reach a hosted node: through a proxy that refuses trace APIs. Shared: tests may add to the explorer and the chain, not change what the
    deploy made (tests that must, deploy their own)."""
    example = deploy_example_on_anvil(
        compiled_example, tmp_path_factory.mktemp("example-on-anvil"), sourcify=True, node=HostedNodeProxy
    )
    yield example
    stop(example)


@pytest.fixture(scope="module", autouse=True)
def _secrets_of_this_module():
    """Keys a module registers for redaction stay in that module: a test's one-letter key ("k")
    would otherwise redact that letter from every later module's texts in the same worker."""
    from ape_contract_verify.protocol import secrets

    with secrets._secrets_lock:
        before = set(secrets._secrets)
    yield
    with secrets._secrets_lock:
        secrets._secrets.clear()
        secrets._secrets.update(before)
