"""The example project on a chain, as a user drives it: scratch copies, `ape-config.yaml` edits,
the deploy summary, and `ape verify …` run in this process (Ape's own CLI object, as the `ape`
executable runs it) instead of a new interpreter per call."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from support import BIN, run
from support.service import Anvil, ServerProcess

ROW = re.compile(
    r"^(\S.*?)\s{2,}(0x[0-9a-fA-F]{40})\s{2,}(verified|already verified|failed|pre-check failed|error|skipped|nothing to verify|unsupported)\b(.*)$",
    re.M,
)
DEPLOYED = re.compile(r"^(\w+)\s+(0x[0-9a-fA-F]{40})$", re.M)


def reset_hook() -> None:
    """Forget the deploy hook's networks, summary and warnings, and stop the embedded explorers:
    what a test running `ape run` in this process leaves behind for the next one."""
    from ape_contract_verify.workflow import after_deploy, local_explorers

    hook = after_deploy.HOOK
    with hook.lock:
        queues = list(hook.runs.values())
        hook.runs.clear()
        hook.drained.clear()
        hook.endings.clear()
        hook.warned.clear()
    for queue in queues:
        queue.close()
    local_explorers.stop_all()


def summary(output: str) -> dict:
    return {m.group(1).strip(): (m.group(2), m.group(3), m.group(4).strip()) for m in ROW.finditer(output)}


def configure(project: Path, **sections) -> None:
    path = project / "ape-config.yaml"
    config = yaml.safe_load(path.read_text())
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key].update(value)
        else:
            config[key] = value
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def copy_project(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("contract_verify"))
    return dest


def submissions(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]


def anvil_project(compiled_example, dest: Path, anvil, explorer_url: str, node_url: str | None = None) -> Path:
    """`node_url`: where Ape's provider reads and sends (e.g. a hosted node's proxy); default the anvil."""
    project = copy_project(compiled_example, dest)
    configure(
        project,
        foundry={"host": node_url or anvil.url},
        contract_verify={
            "auto": True,
            "max_retries": 1,
            # The explorer is ours, on loopback: as the embedded one, poll often and skip the public rate.
            "poll_interval": 0.5,
            "calls_per_second": 50,
            "explorers": {"ethereum": {"local": {"url": explorer_url}}},
        },
    )
    return project


def as_json(proc: subprocess.CompletedProcess) -> dict:
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise AssertionError(
            f"not JSON (exit {proc.returncode}):\n{proc.stdout[:1500]}\n…\n{proc.stdout[-1500:]}\n--- stderr\n{proc.stderr[-3000:]}"
        )


# -- `ape verify …` in this process -----------------------------------------------------------


def ape_in_process(project: Path, *args: str) -> subprocess.CompletedProcess:
    """`ape ARGS` run by Ape's own CLI object in this process, in PROJECT, as a CompletedProcess.

    Ape's global state is put back afterwards: the local project (Ape 0.8 picks it by the working
    directory once; `project.chdir` switches it but does not restore its path, so we do) and every
    provider connection the command opened (the next call may aim at another node)."""
    from ape import networks
    from ape import project as local_project
    from ape._cli import cli as ape_cli
    from click.testing import CliRunner

    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 always separates stderr
        runner = CliRunner()
    cwd, base_path = os.getcwd(), local_project._base_path
    os.chdir(project)
    try:
        with local_project.chdir(Path(project)):
            result = runner.invoke(ape_cli, list(args), catch_exceptions=True)
    finally:
        local_project._base_path = base_path
        os.chdir(cwd)
        forget_connections(networks)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        # What the executable would have printed before dying: the test's message shows it.
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(["ape", *args], result.exit_code, result.stdout, stderr)


def forget_connections(networks) -> None:
    """Disconnect whatever a command connected, and drop what Ape remembers of local chains: every
    anvil here has chain id 31337 and deploys at the same addresses, so a cached code or contract
    type from one node would be wrong on the next."""
    from ape.api.networks import ProviderContextManager
    from ape.managers._contractscache import ContractCache
    from ape.managers.chain import ChainManager, TransactionHistory

    for provider in list(ProviderContextManager.connected_providers.values()):
        provider.disconnect()
    ProviderContextManager.connected_providers.clear()
    ProviderContextManager.provider_stack.clear()
    ProviderContextManager.disconnect_map.clear()
    networks.active_provider = None
    for by_network in ContractCache._caches.values():
        for caches in by_network.values():
            for cache in caches.values():
                cache.memory = {}
    ChainManager._code.clear()
    ChainManager._transaction_history_map.clear()
    ChainManager._block_container_map.clear()
    TransactionHistory._account_history_cache.clear()


def verify_cli(project: Path, *args: str, timeout: float = 300, real: bool = False) -> subprocess.CompletedProcess:
    """`ape verify ARGS --network ethereum:local:foundry` in PROJECT: in this process, or with
    `real` through the `ape` executable (one smoke test per command keeps that path honest)."""
    command = ["verify", *args, "--network", "ethereum:local:foundry"]
    if real:
        return run([BIN / "ape", *command], cwd=project, timeout=timeout, check=False)
    return ape_in_process(project, *command)


# -- the example deployed on anvil, verified on a standalone explorer ---------------------------


@dataclass
class ExampleOnAnvil:
    anvil: Anvil
    explorer: ServerProcess  # `ape verify serve`; `.db` is its SQLite file
    project: Path
    proc: subprocess.CompletedProcess  # the `ape run deploy`
    deployed: dict  # the deploy script's name -> address
    sourcify: ServerProcess | None = None  # a second explorer, the deploy's second target (its Sourcify face)
    node: Any = None  # what stood in front of the anvil for Ape (`deploy_example_on_anvil`'s `node`)
    height: int = 0  # the chain's last block once the deploy ended (later tests may add blocks)


def sourcify_base(server: ServerProcess) -> str:
    """The base URL `ape verify serve` printed for Sourcify clients."""
    line = next(line for line in server.lines if line.startswith("Sourcify API: "))
    return line.split("Sourcify API: ", 1)[1].strip()


def deploy_example_on_anvil(
    compiled_example: Path, root: Path, sourcify: bool = False, node: Any = None, auto: bool = True
) -> ExampleOnAnvil:
    """With `sourcify`, the deploy verifies on two targets: the explorer's Etherscan-style API and a
    second explorer's Sourcify face; afterwards the project names the first only, as tests expect.
    `node(anvil_url)` puts something in front of the anvil for Ape (a hosted node's proxy: it has
    `.url` and `.stop()`) while the explorer reads the anvil directly, as explorers index their own."""
    anvil = Anvil()
    front = node(anvil.url) if node is not None else None
    explorer = second = None
    try:
        db = root / "explorer.sqlite"
        explorer = ServerProcess(anvil.url, db, use_ape=True)
        explorer.db = db
        project = anvil_project(
            compiled_example, root / "example", anvil, explorer.base_url, front.url if front else None
        )
        if not auto:
            configure(project, contract_verify={"auto": False})
        if sourcify:
            second = ServerProcess(anvil.url, root / "sourcify.sqlite", use_ape=True)
            second.db = root / "sourcify.sqlite"
            local = {"url": explorer.base_url, "sourcify": {"url": sourcify_base(second)}}
            configure(project, contract_verify={"explorers": {"ethereum": {"local": local}}})
        proc = run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"], cwd=project, timeout=900)
        if sourcify:
            configure(project, contract_verify={"explorers": {"ethereum": {"local": {"url": explorer.base_url}}}})
        height = int(anvil.rpc("eth_blockNumber"), 16)
        return ExampleOnAnvil(
            anvil, explorer, project, proc, dict(DEPLOYED.findall(proc.stdout)), second, front, height
        )
    except BaseException:
        for server in (explorer, second, front):
            if server is not None:
                server.stop()
        anvil.stop()
        raise


def stop(example: ExampleOnAnvil) -> None:
    example.explorer.stop()
    if example.sourcify is not None:
        example.sourcify.stop()
    if example.node is not None:
        example.node.stop()
    example.anvil.stop()
