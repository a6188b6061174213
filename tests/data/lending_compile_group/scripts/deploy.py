from ape import accounts, compilers, project


def main():
    deployer = accounts.test_accounts[0]
    # As a lending protocol deploys its libraries: each added once deployed (ape-solidity then
    # compiles its file again, alone, and the manifest keeps that compile).
    for name in ("GenericLogic", "ReserveLogic", "ValidationLogic"):
        library = deployer.deploy(getattr(project, name))
        compilers.solidity.add_library(library)
        print("DEPLOYED", name, library.address, flush=True)
