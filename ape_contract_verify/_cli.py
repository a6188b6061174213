"""`ape verify …`: thin commands that parse, call and print."""

import click


@click.group(short_help="Verify deployed contracts on Etherscan-style explorers")
def cli():
    """Verify deployed contracts on Etherscan-style explorers (Etherscan V2, Blockscout,
    Routescan, or the plugin's own local explorer)."""
