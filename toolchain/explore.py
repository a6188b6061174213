"""`make explore`: the example deployed on anvil and verified on a standalone local explorer, both
kept running until Ctrl-C, so that every link of the summary opens a page.

`make demo` shows the same run, but its chain and embedded explorer stop with the script.

    python toolchain/explore.py [--port 5005] [--anvil-port 8545] [--project DIR] [--workdir DIR]

`--project` takes an already compiled copy of the example (the tests pass theirs); by default
example/ is copied into the work directory (.explore/) and compiled there, so example/ stays clean.
"""

import argparse
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
START_TIMEOUT = 60.0


def port_or_free(port: int) -> int:
    """`port` when it is free on 127.0.0.1, else any free one (a second explore, a busy 8545)."""
    for candidate in (port, 0):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            return sock.getsockname()[1]
    raise SystemExit("explore: no free port on 127.0.0.1")


def rpc_ready(url: str) -> bool:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return "result" in json.loads(response.read())
    except OSError:
        return False


def wait_for(ready, what: str, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.2)
    raise SystemExit(f"explore: {what} did not start within {timeout:.0f} s")


def prepare(project: "Path | None", work: Path) -> Path:
    if project is not None:
        return project
    dest = work / "example"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(REPO / "example", dest, ignore=shutil.ignore_patterns(".build", ".cache", "__pycache__"))
    config = dest / "ape-config.yaml"
    # The example names OpenZeppelin relative to itself; the copy lives elsewhere.
    config.write_text(config.read_text().replace("local: ../toolchain/", f"local: {REPO}/toolchain/"))
    subprocess.run([BIN / "ape", "compile", "--include-dependencies"], cwd=dest, check=True)
    return dest


def point_at(project: Path, anvil_url: str, explorer_api: str) -> None:
    path = project / "ape-config.yaml"
    config = yaml.safe_load(path.read_text())
    config.setdefault("foundry", {})["host"] = anvil_url
    verify = config.setdefault("contract_verify", {})
    verify.update({"auto": True, "poll_interval": 0.5, "calls_per_second": 50})
    verify.setdefault("explorers", {}).setdefault("ethereum", {})["local"] = {"url": explorer_api}
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(prog="make explore", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=5005, help="the explorer's port (another if busy)")
    parser.add_argument("--anvil-port", type=int, default=8545, help="anvil's port (another if busy)")
    parser.add_argument("--project", type=Path, default=None, help="a compiled copy of the example")
    parser.add_argument("--workdir", type=Path, default=REPO / ".explore", help="where the copy and the database go")
    args = parser.parse_args(argv)

    args.workdir.mkdir(parents=True, exist_ok=True)
    project = prepare(args.project, args.workdir)
    children: list[subprocess.Popen] = []
    try:
        anvil_port = port_or_free(args.anvil_port)
        anvil_url = f"http://127.0.0.1:{anvil_port}"
        children.append(
            subprocess.Popen(
                [BIN / "anvil", "--host", "127.0.0.1", "--port", str(anvil_port), "--silent"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        wait_for(lambda: rpc_ready(anvil_url), "anvil")
        port = port_or_free(args.port)
        db = args.workdir / f"explorer-{anvil_port}.sqlite"
        db.unlink(missing_ok=True)  # a new chain: nothing of an earlier one is verified on it
        children.append(
            subprocess.Popen(
                [BIN / "ape", "verify", "serve", "--rpc", anvil_url, "--port", str(port), "--db", str(db)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        site = f"http://127.0.0.1:{port}"
        wait_for(lambda: _answers(site + "/api?module=contract&action=getabi&address=0x" + "00" * 20), "the explorer")
        point_at(project, anvil_url, site + "/api")
        deploy = subprocess.run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"], cwd=project)
        if deploy.returncode != 0:
            print(f"explore: the deploy script failed (exit {deploy.returncode})", file=sys.stderr)
            return deploy.returncode
        print(f"\nLocal explorer: {site}/  (every link above opens there)")
        print(f"Its API: {site}/api   Chain: {anvil_url} (chain id 31337)")
        print("Both keep running until Ctrl-C.", flush=True)
        signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as Ctrl-C does
        while all(child.poll() is None for child in children):
            time.sleep(0.5)
        print("explore: anvil or the explorer stopped by itself", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nexplore: stopped.")
        return 0
    finally:
        for child in reversed(children):
            child.terminate()
        for child in reversed(children):
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()


def _interrupt(*_) -> None:
    raise KeyboardInterrupt


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
