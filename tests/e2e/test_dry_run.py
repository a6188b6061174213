"""`ape verify contract … --dry-run --out DIR`: derives and pre-checks, sends nothing, and writes
the request bodies a real run sends, byte for byte (compared with what a real run sent to a
loopback server that records the raw bodies)."""

import json
import re
from urllib.parse import urlencode

import pytest
import yaml

from support.e2e import configure, copy_project, summary, verify_cli
from support.stub_server import GUID, Http, StubExplorer, ok

SECRET = "DRYRUNKEY0123456789SECRET"
SOURCIFY_SECRET = "SOURCIFYDRYRUNKEY0123456789"
JOB = "0f6b2a43-6c1e-4f55-9a57-3c1f1d6e9b20"


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
def test_the_dry_run_writes_exactly_what_a_real_run_sends(
    example_on_anvil, tmp_path, name, options, extension, licence, match
):
    project, address = example_on_anvil.project, example_on_anvil.deployed[name]
    out = tmp_path / "out"
    with StubExplorer() as stub:
        stub.default = _explorer
        dry = verify_cli(
            project,
            "contract",
            name,
            address,
            "--dry-run",
            "--out",
            str(out),
            "--explorer-url",
            stub.url,
            "--api-key",
            SECRET,
            *options,
        )
        assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
        assert stub.seen == []  # nothing sent
        folder = out / "etherscan"
        source_file, form_file = folder / f"{name}-{address}{extension}", folder / f"{name}-{address}.form.json"
        assert sorted(p.name for p in folder.iterdir()) == sorted([source_file.name, form_file.name])
        form = json.loads(form_file.read_text())
        # The printout says what would go, per target, and never the key.
        assert f"target etherscan (etherscan) at {stub.url}, with an API key (not shown):" in dry.stdout
        for line in (
            "settings: optimizer on, 200 runs",
            f"licence: {licence}",
            f"pre-check: {match} match",
            f"wrote {source_file}",
        ):
            assert line in dry.stdout, dry.stdout
        if name == "Calculator":
            library = example_on_anvil.deployed["MathLib"]
            assert f"libraries: MathLib={library}" in dry.stdout, dry.stdout
            assert form["libraryaddress1"].lower() == library.lower()
            assert form["constructorArguements"] == f"{3:064x}" and f"constructor arguments: 0x{3:064x}" in dry.stdout
        assert SECRET not in dry.stdout + dry.stderr
        assert all(SECRET not in p.read_text() for p in folder.iterdir())
        assert "apikey" not in form

        real = verify_cli(
            project, "contract", name, address, "--explorer-url", stub.url, "--api-key", SECRET, "--force", *options
        )
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
        proc = verify_cli(
            project,
            "contract",
            "Calculator",
            address,
            "--constructor-args",
            "4",
            "--dry-run",
            "--out",
            str(out),
            "--explorer-url",
            stub.url,
        )
        assert stub.seen == []
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"Calculator {address}: NOT SENT: pre-check failed: constructor arguments" in proc.stdout, proc.stdout
    assert not out.exists() or not any(out.rglob("*"))
    # The dry run goes to the targets a real run would: --target is honoured, an unknown one refused.
    unknown = verify_cli(project, "contract", "Calculator", address, "--dry-run", "--target", "nope")
    assert unknown.returncode == 2, unknown.stdout + unknown.stderr
    assert "nope" in unknown.stderr and "etherscan" in unknown.stderr


# -- Sourcify targets ------------------------------------------------------------------------------


def _json(code: int, body: dict) -> Http:
    return Http(code, json.dumps(body), {"Content-Type": "application/json"})


def _sourcify(seen):
    """A Sourcify server as the recordings in tests/data/sourcify-answers/ answer: not verified yet,
    the submission accepted, the job completed with an exact match."""
    parts = seen.path.strip("/").split("/")
    if seen.method == "GET" and parts[:2] == ["v2", "contract"] and len(parts) == 4:
        return _json(
            404, {"match": None, "creationMatch": None, "runtimeMatch": None, "chainId": parts[2], "address": parts[3]}
        )
    if seen.method == "POST" and parts[:2] == ["v2", "verify"] and len(parts) == 4:
        return _json(202, {"verificationId": JOB})
    if seen.method == "GET" and parts == ["v2", "verify", JOB]:
        contract = {
            "match": "exact_match",
            "creationMatch": "exact_match",
            "runtimeMatch": "exact_match",
            "chainId": "31337",
        }
        return {"isJobCompleted": True, "verificationId": JOB, "contract": contract}
    return None  # anything else is a 500: the test would see it


@pytest.fixture(scope="module")
def sourcify_project(example_on_anvil, tmp_path_factory):
    """A copy of the example whose ethereum:local also has a Sourcify target: a stub recording the
    raw bodies, with a key (kept out of every printout and file)."""
    project = copy_project(example_on_anvil.project, tmp_path_factory.mktemp("dry-run-sourcify") / "example")
    with StubExplorer() as stub:
        stub.default = _sourcify
        base = stub.url.removesuffix("api")  # a Sourcify target's base URL: http://127.0.0.1:<port>/
        local = yaml.safe_load((project / "ape-config.yaml").read_text())["contract_verify"]["explorers"]["ethereum"][
            "local"
        ]
        local["sourcify"] = {"url": base, "api_key_env": "DRY_RUN_SOURCIFY_KEY"}
        configure(project, contract_verify={"explorers": {"ethereum": {"local": local}}})
        yield project, stub, base


@pytest.mark.parametrize(
    "name, options, version",
    [
        ("Calculator", ("--flatten",), r"0\.8\.\d+\+commit\.[0-9a-f]{8}"),
        ("Vault", (), r"0\.4\.\d+\+commit\.[0-9a-f]{8}"),
    ],
    ids=["solidity-flatten-is-standard-json-there", "vyper-long-version"],
)
def test_the_dry_run_writes_the_sourcify_body_a_real_run_sends(
    example_on_anvil, sourcify_project, tmp_path, monkeypatch, name, options, version
):
    project, stub, base = sourcify_project
    monkeypatch.setenv("DRY_RUN_SOURCIFY_KEY", SOURCIFY_SECRET)
    address = example_on_anvil.deployed[name]
    out = tmp_path / "out"
    stub.seen.clear()
    dry = verify_cli(
        project, "contract", name, address, "--dry-run", "--out", str(out), "--target", "sourcify", *options
    )
    assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
    assert stub.seen == []  # nothing sent
    assert [p.name for p in out.iterdir()] == ["sourcify"]  # --target: the other target gets nothing
    body_file = out / "sourcify" / f"{name}-{address}.sourcify.json"
    assert [p.name for p in (out / "sourcify").iterdir()] == [body_file.name]
    body = json.loads(body_file.read_bytes())
    assert sorted(body) == ["compilerVersion", "contractIdentifier", "creationTransactionHash", "stdJsonInput"]
    assert re.fullmatch(version, body["compilerVersion"]), body["compilerVersion"]
    assert body["stdJsonInput"]["language"] == ("Vyper" if name == "Vault" else "Solidity")  # never the flat file
    assert body["contractIdentifier"].endswith(f":{name}") and re.fullmatch(
        r"0x[0-9a-f]{64}", body["creationTransactionHash"]
    )
    lines = dry.stdout.splitlines()
    for line in (
        f"target sourcify (sourcify) at {base}, with an API key (not shown):",
        f"  {name} {address}: POST {base}v2/verify/31337/{address}",
        f"    compilerVersion {body['compilerVersion']}, contractIdentifier {body['contractIdentifier']}",
        f"    creationTransactionHash {body['creationTransactionHash']}",
        f"    wrote {body_file}",
    ):
        assert line in lines, dry.stdout
    assert "licence:" not in dry.stdout  # Sourcify's body has no licence field
    assert SOURCIFY_SECRET not in dry.stdout + dry.stderr + body_file.read_text()

    real = verify_cli(project, "contract", name, address, "--target", "sourcify", "--force", *options)
    assert real.returncode == 0, real.stdout[-3000:] + real.stderr[-3000:]
    assert summary(real.stdout)[name][:2] == (address, "verified"), real.stdout
    posts = [s for s in stub.seen if s.method == "POST"]
    assert [s.path for s in posts] == [f"/v2/verify/31337/{address}"]
    # The whole body, byte for byte.
    assert body_file.read_bytes() == posts[0].raw.encode("utf-8")


def test_sourcify_dry_runs_that_would_fail_or_skip_say_why(example_on_anvil, sourcify_project, tmp_path):
    from ape_contract_verify.client.targets import Target
    from ape_contract_verify.request import CodeFormat, VerificationRequest
    from ape_contract_verify.workflow.plan import DryRunPlan, Planned

    project, stub, base = sourcify_project
    stub.seen.clear()
    # A proxy: its implementation and its own source go; the link does not (Sourcify resolves it).
    # --no-check: the link does not depend on it, and these two pre-checks cost ~10 s.
    proxy, box = example_on_anvil.deployed["SimpleProxy"], example_on_anvil.deployed["Box"]
    out = tmp_path / "proxy"
    proc = verify_cli(
        project, "contract", "SimpleProxy", proxy, "--dry-run", "--no-check", "--out", str(out), "--target", "sourcify"
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (
        f"  SimpleProxy (proxy link) {proxy}: no proxy link is sent to Sourcify (it resolves proxies itself)"
        in proc.stdout.splitlines()
    ), proc.stdout
    assert sorted(p.name for p in (out / "sourcify").iterdir()) == sorted(
        [f"Box-{box}.sourcify.json", f"SimpleProxy-{proxy}.sourcify.json"]
    )
    # A pre-check that fails: not sent, nothing written, exit 1.
    calculator = example_on_anvil.deployed["Calculator"]
    out = tmp_path / "wrong-args"
    proc = verify_cli(
        project,
        "contract",
        "Calculator",
        calculator,
        "--constructor-args",
        "4",
        "--dry-run",
        "--out",
        str(out),
        "--target",
        "sourcify",
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"  Calculator {calculator}: NOT SENT: pre-check failed: constructor arguments" in proc.stdout, proc.stdout
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))
    assert stub.seen == []
    # A request Sourcify's rules refuse (InvalidRequest) is not sent, with the field and the fix.
    source = json.dumps({"language": "Solidity", "sources": {"A.sol": {"content": ""}}, "settings": {}})
    request = VerificationRequest(calculator, "Calculator", source, CodeFormat.STANDARD_JSON, "v0.8.26+commit.8a97fa7a")
    target = Target("ethereum", "local", base, 31337, None, name="sourcify", kind="sourcify")
    out = tmp_path / "refused"
    planned = [Planned("Calculator", calculator, request, match="full")]
    dry = DryRunPlan("ethereum:local", [target], {"sourcify": planned})
    assert dry.ok is False
    lines = list(dry.lines(str(out)))[2:]  # after the plan's and the target's heads
    assert dry.files == []
    assert lines == [
        f"  Calculator {calculator}: NOT SENT: contractIdentifier: 'Calculator' is not <path>:<Name>. "
        "Fix: give the contract as in the JSON input, e.g. src/Box.sol:Box"
    ]
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))
