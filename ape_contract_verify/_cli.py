"""`ape verify …`: thin commands that parse, call and print."""

import click


@click.group(short_help="Verify deployed contracts on Etherscan-style explorers")
def cli():
    """Verify deployed contracts on Etherscan-style explorers (Etherscan V2, Blockscout,
    Routescan, or the plugin's own local explorer)."""


# Explorer reads: `ape verify abi | source | status` (issue 3).
from ape_contract_verify._read_commands import abi, source, status  # noqa: E402

cli.add_command(abi)
cli.add_command(source)
cli.add_command(status)

