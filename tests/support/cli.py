"""`ape verify …` run in this process through click's CliRunner, stderr kept apart from stdout."""

from click.testing import CliRunner


def cli_runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 always separates stderr
        return CliRunner()


def invoke(stub, *args: str):
    """`ape verify ARGS` against the scripted explorer `stub` (its URL as --explorer-url)."""
    from ape_contract_verify.cli import cli

    return cli_runner().invoke(cli, [*args, "--explorer-url", stub.url], catch_exceptions=False)
