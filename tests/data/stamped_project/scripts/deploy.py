from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    account = deployer.deploy(project.Account)
    beacon = deployer.deploy(project.Beacon, deployer.address, account.address)
    factory = deployer.deploy(project.WalletFactory, account.address, beacon.address)
    factory.createAccounts(deployer.address, b"wallets".ljust(32, b"\0"), sender=deployer)
    raw = deployer.deploy(project.RawBytes)
    kinds = ("ERC1967", "ERC1967I", "BeaconProxy", "Clone", "CloneWithArgs")
    made = {"Account": account.address, "Beacon": beacon.address, "WalletFactory": factory.address}
    made.update({kind: factory.accounts(i) for i, kind in enumerate(kinds)})
    made.update({"Pointer": factory.pointer(), "RawBytes": raw.address})
    for name, address in made.items():
        print(f"DEPLOYED {name} {address}\n", end="")
