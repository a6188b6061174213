"""Deploy BENCH_DEPLOYMENTS (default 50) contracts: Box, Token and Counter in turn, each with its own
constructor arguments. Says nothing about verification; prints `name address` per deployment."""

import os

from ape import accounts, project


def main():
    count = int(os.environ.get("BENCH_DEPLOYMENTS", "50"))
    deployer = accounts.test_accounts[0]
    holder = accounts.test_accounts[1].address
    for index in range(count):
        kind = index % 3
        if kind == 0:
            contract = deployer.deploy(project.Box)
            name = "Box"
        elif kind == 1:
            contract = deployer.deploy(
                project.Token, f"Token {index}", f"T{index}", 10**18 + index, deployer.address, [holder]
            )
            name = "Token"
        else:
            contract = deployer.deploy(project.Counter, index, f"counter {index}")
            name = "Counter"
        print(f"{name} {contract.address}", flush=True)
