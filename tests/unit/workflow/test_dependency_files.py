"""Ape rewrites a dependency's API file each time a dependency is looked up (unlink, then write),
and every lookup reads all of them back. The deploy hook's workers look dependencies up beside the
script, so a script's `project.dependencies[name]` once read one empty and failed the deploy
("Failed to add dependency openzeppelin@5.7.0: Expecting value"). The plugin writes those files
whole, by a rename, and only when they change."""

import json
import threading
import time

import pytest


@pytest.fixture
def cache(tmp_path):
    from ape.managers.project import PackagesCache

    from ape_contract_verify.workflow import after_deploy

    after_deploy.install()  # as Ape's loading of the plugin does in every command

    class Cache(PackagesCache):
        @property
        def root(self):
            return tmp_path / "packages"

    return Cache()


def _api(version: str, name: str = "lib"):
    from ape_pm.dependency import LocalDependency

    return LocalDependency(local=".", name=name, version=version)


def test_the_plugins_writer_is_the_one_ape_uses(cache):
    from ape.managers.project import PackagesCache

    assert PackagesCache.cache_api.__module__ == "ape_contract_verify.workflow.after_deploy"


def test_a_reader_never_finds_the_file_empty_or_partial_while_it_is_rewritten(cache):
    first, second = _api("1.0.0"), _api("1.0.0", name="lib")
    second = second.model_copy(update={"config_override": {"solidity": {"version": "0.8.26"}}})
    path = cache.cache_api(first)
    bad: list[str] = []
    stop = time.monotonic() + 0.75  # thousands of rewrites: a busy loop, so short (CPU, twice per tier)

    def write():
        for i in range(100_000):
            if time.monotonic() > stop:
                return
            cache.cache_api(second if i % 2 else first)

    writer = threading.Thread(target=write)
    writer.start()
    reads = 0
    while writer.is_alive() and reads < 200_000:
        try:
            json.loads(path.read_text(encoding="utf8"))
        except (ValueError, OSError) as err:
            bad.append(repr(err))
        reads += 1
    writer.join(timeout=10)
    assert reads > 100 and not bad, (reads, bad[:3])
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no partial file left


def test_an_unchanged_api_is_not_written_again(cache):
    path = cache.cache_api(_api("2.0.0"))
    before = path.stat()
    again = cache.cache_api(_api("2.0.0"))
    assert again == path and path.stat().st_ino == before.st_ino and path.stat().st_mtime_ns == before.st_mtime_ns
    changed = cache.cache_api(_api("2.0.0").model_copy(update={"config_override": {"x": 1}}))
    assert changed == path and json.loads(path.read_text())["config_override"] == {"x": 1}
