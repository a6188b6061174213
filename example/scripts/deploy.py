"""Deploy every example contract to the connected (local) network.

It says nothing about verification: with `contract_verify.auto: true` in ape-config.yaml,
the plugin verifies what this script deploys.
"""

from ape import accounts, compilers, project


def deploy_all(deployer=None) -> dict:
    deployer = deployer or accounts.test_accounts[0]
    holders = [accounts.test_accounts[i].address for i in (1, 2, 3)]
    deployed = {}

    deployed["Token"] = deployer.deploy(
        project.Token, "Example Token", "EXT", 1_000 * 10**18, deployer.address, holders
    )

    # An external library, linked into Calculator through ape-solidity's add_library flow.
    deployed["MathLib"] = library = deployer.deploy(project.MathLib)
    compilers.solidity.add_library(library)
    deployed["Calculator"] = deployer.deploy(project.Calculator, 3)

    # Our own EIP-1967 proxy in front of Box, initialised through the constructor's data.
    deployed["Box"] = box = deployer.deploy(project.Box)
    init = box.initialize.encode_input(42, deployer.address)
    deployed["SimpleProxy"] = deployer.deploy(project.SimpleProxy, box.address, init)

    # OpenZeppelin's proxies, from the npm package used as an Ape dependency: a UUPS proxy, and a
    # transparent proxy, which creates its ProxyAdmin in its constructor.
    oz = project.dependencies["openzeppelin"]["5.7.0"]
    deployed["BoxUUPS"] = uups = deployer.deploy(project.BoxUUPS)
    deployed["UUPSProxy"] = deployer.deploy(
        oz.ERC1967Proxy, uups.address, uups.initialize.encode_input(1, deployer.address)
    )
    deployed["TransparentProxy"] = deployer.deploy(
        oz.TransparentUpgradeableProxy,
        box.address,
        deployer.address,
        box.initialize.encode_input(3, deployer.address),
    )

    # OpenZeppelin's beacon and beacon proxy, in front of the same implementation.
    deployed["OZBeacon"] = oz_beacon = deployer.deploy(oz.UpgradeableBeacon, box.address, deployer.address)
    deployed["OZBeaconProxy"] = deployer.deploy(
        oz.BeaconProxy, oz_beacon.address, box.initialize.encode_input(5, deployer.address)
    )

    # Our own beacon and a beacon proxy pointing at the same implementation.
    deployed["UpgradeableBeacon"] = beacon = deployer.deploy(
        project.UpgradeableBeacon, box.address, deployer.address
    )
    deployed["BeaconProxy"] = deployer.deploy(
        project.BeaconProxy, beacon.address, box.initialize.encode_input(7, deployer.address)
    )

    # A factory, and an EIP-1167 clone made by it.
    deployed["CloneFactory"] = factory = deployer.deploy(project.CloneFactory, box.address)
    receipt = factory.clone(99, sender=deployer)
    deployed["Clone"] = receipt.events.filter(factory.CloneCreated)[0].clone

    deployed["LegacyStore"] = deployer.deploy(project.LegacyStore, "legacy", 5)
    deployed["Vault"] = deployer.deploy(project.Vault, "Example Vault", 25, deployer.address)
    # Vyper 0.4: a .vyi interface, an initialized module, immutables, the built-in IERC20.
    deployed["Escrow"] = deployer.deploy(project.Escrow, deployed["Token"].address, 30, deployer.address)

    # Contracts whose packages carry their own compiler settings.
    viair = project.dependencies["viair"]["local"]
    tuned = project.dependencies["tuned"]["local"]
    deployed["ViaIRCounter"] = deployer.deploy(viair.ViaIRCounter, 5, 100)
    deployed["TunedStore"] = deployer.deploy(
        tuned.TunedStore, b"tuned".ljust(32, b"\0"), [1, 2, 3]
    )
    return deployed


def main():
    for name, contract in deploy_all().items():
        address = contract if isinstance(contract, str) else contract.address
        # One write a line (print's newline is a second one): the plugin may log meanwhile.
        print(f"{name:18} {address}\n", end="")
