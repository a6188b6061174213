"""`ape verify contract … --dry-run --out DIR`: derives and pre-checks, sends nothing, and writes
the request bodies a real run sends, byte for byte (compared with what a real run sent to a
loopback server that records the raw bodies)."""

import json
from urllib.parse import urlencode

import pytest

from support.e2e import verify_cli
from support.stub_server import GUID, StubExplorer, ok

pytestmark = pytest.mark.e2e

SECRET = "DRYRUNKEY0123456789SECRET"


def _explorer(seen):
    if seen.action == "verifysourcecode":
        return ok(GUID)
    if seen.action == "checkverifystatus":
        return ok("Pass - Verified")
    return None  # anything else is a 500: the test would see it


@pytest.mark.parametrize(
    "name, options, extension, licence, match",
    [("Calculator", (), ".json", "Apache-2.0 (12)", "full"), ("Token", ("--flatten",), ".sol", "MIT (3)", "partial")],
    ids=["standard-json", "flatten"],
)
def test_the_dry_run_writes_exactly_what_a_real_run_sends(example_on_anvil, tmp_path, name, options, extension, licence, match):
    project, address = example_on_anvil.project, example_on_anvil.deployed[name]
    out = tmp_path / "out"
    with StubExplorer() as stub:
        stub.default = _explorer
        dry = verify_cli(project, "contract", name, address, "--dry-run", "--out", str(out),
                         "--explorer-url", stub.url, "--api-key", SECRET, *options)
        assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
        assert stub.seen == []  # nothing sent
        folder = out / "etherscan"
        source_file, form_file = folder / f"{name}-{address}{extension}", folder / f"{name}-{address}.form.json"
        assert sorted(p.name for p in folder.iterdir()) == sorted([source_file.name, form_file.name])
        form = json.loads(form_file.read_text())
        # The printout says what would go, per target, and never the key.
        assert f"target etherscan (etherscan) at {stub.url}, with an API key (not shown):" in dry.stdout
        for line in ("settings: optimizer on, 200 runs", f"licence: {licence}", f"pre-check: {match} match", f"wrote {source_file}"):
            assert line in dry.stdout, dry.stdout
        if name == "Calculator":
            library = example_on_anvil.deployed["MathLib"]
            assert f"libraries: MathLib={library}" in dry.stdout, dry.stdout
            assert form["libraryaddress1"].lower() == library.lower()
            assert form["constructorArguements"] == f"{3:064x}" and f"constructor arguments: 0x{3:064x}" in dry.stdout
        assert SECRET not in dry.stdout + dry.stderr
        assert all(SECRET not in p.read_text() for p in folder.iterdir())
        assert "apikey" not in form

        real = verify_cli(project, "contract", name, address, "--explorer-url", stub.url, "--api-key", SECRET, "--force", *options)
        assert real.returncode == 0, real.stdout[-3000:] + real.stderr[-3000:]
        posts = [s for s in stub.seen if s.action == "verifysourcecode"]
        assert len(posts) == 1
        sent = posts[0]
    assert source_file.read_bytes() == sent.form["sourceCode"].encode("utf-8")
    assert form == {k: v for k, v in sent.form.items() if k != "apikey"}
    # The whole body, byte for byte: the form in the file's order, then the key.
    assert urlencode({**form, "apikey": SECRET}) == sent.raw


def test_a_dry_run_that_would_fail_says_why_and_writes_nothing(example_on_anvil, tmp_path):
    project, address = example_on_anvil.project, example_on_anvil.deployed["Calculator"]
    out = tmp_path / "out"
    with StubExplorer() as stub:
        proc = verify_cli(project, "contract", "Calculator", address, "--constructor-args", "4",
                          "--dry-run", "--out", str(out), "--explorer-url", stub.url)
        assert stub.seen == []
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"Calculator {address}: NOT SENT: pre-check failed: constructor arguments" in proc.stdout, proc.stdout
    assert not out.exists() or not any(out.rglob("*"))
    # The dry run goes to the targets a real run would: --target is honoured, an unknown one refused.
    unknown = verify_cli(project, "contract", "Calculator", address, "--dry-run", "--target", "nope")
    assert unknown.returncode == 2, unknown.stdout + unknown.stderr
    assert "nope" in unknown.stderr and "etherscan" in unknown.stderr
