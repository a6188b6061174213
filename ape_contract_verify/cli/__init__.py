"""`ape verify …`: thin commands that parse, call and print."""

import click


@click.group(short_help="Verify deployed contracts on Etherscan-style explorers")
def cli() -> None:
    """Verify deployed contracts on Etherscan-style explorers (Etherscan V2, Blockscout,
    Routescan, or the plugin's own local explorer)."""


# Explorer reads (issue 3); derive, submit, follow (issues 5 and 6).
from ape_contract_verify.cli.read import abi, source, status  # noqa: E402
from ape_contract_verify.cli.verify import all_deployments, contract, proxy  # noqa: E402

for command in (abi, source, status, contract, proxy, all_deployments):
    cli.add_command(command)


# What only server/ imports: the `explorer` extra (pyproject.toml).
WEB_STACK = ("starlette", "uvicorn", "h11", "jinja2", "markupsafe", "pygments", "yarl")


# The local explorer, standalone: `ape verify serve` (issue 4).
@cli.command(short_help="Run the local Etherscan-compatible explorer against a JSON-RPC node")
@click.option("--rpc", required=True, help="JSON-RPC URL of the node to verify against, e.g. http://127.0.0.1:8545")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on")
@click.option("--port", type=int, default=0, help="Port to listen on (default: a free port)")
@click.option(
    "--db",
    "db_path",
    default=None,
    help="SQLite file (default: ~/.ape/contract_verify/explorer-<chainid>-<genesis>.sqlite)",
)
@click.option("--api-key", "api_keys", multiple=True, help="A key that submissions must carry (repeatable)")
@click.option("--workers", type=int, default=1, show_default=True, help="Verification worker threads")
@click.option("--compile-timeout", type=float, default=None, help="Seconds a compile may take (default 120)")
def serve(
    rpc: str,
    host: str,
    port: int,
    db_path: str | None,
    api_keys: tuple[str, ...],
    workers: int,
    compile_timeout: float | None,
) -> None:
    """Serve Etherscan's contract API at <base>/api, verifying against the node at --rpc,
    until interrupted. Without --api-key, submissions need no key (as on Blockscout)."""
    import importlib
    import logging

    for name in WEB_STACK:  # an extra: told before anything starts, never a traceback
        try:
            importlib.import_module(name)
        except ImportError as err:
            raise _StartError(
                f"`ape verify serve` needs the explorer's web stack ({err.name or name} is not installed): "
                "pip install 'ape-contract-verify[explorer]'"
            ) from None
    from ape_contract_verify.logs import SERVER
    from ape_contract_verify.server.runner import ExplorerStartError
    from ape_contract_verify.server.runner import serve as run_explorer

    logging.getLogger(SERVER).setLevel(logging.INFO)
    try:
        run_explorer(rpc, host, port, db_path, api_keys, workers, echo=click.echo, compile_timeout=compile_timeout)
    except ExplorerStartError as err:
        raise _StartError(str(err))


class _StartError(click.ClickException):
    exit_code = 2  # as `python -m ape_contract_verify.server.runner`: the explorer could not start
