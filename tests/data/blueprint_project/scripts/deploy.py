"""Declare the Pool blueprint through Ape, send the Gauge blueprint by a raw transaction, deploy the
Factory on them and make two pools (each with its gauge). Prints `DEPLOYED <name> <address>`."""

from ape import accounts, chain, project

ERC5202 = bytes.fromhex("fe7100")


def raw_blueprint(sender, container):
    """The project's own helper: ERC-5202 deploy code sent as a plain creation transaction."""
    body = ERC5202 + bytes(container.contract_type.deployment_bytecode.to_bytes())
    code = b"\x61" + len(body).to_bytes(2, "big") + bytes.fromhex("3d81600a3d39f3") + body
    txn = chain.provider.network.ecosystem.create_transaction(data=code, sender=sender.address)
    return sender.call(txn).contract_address


def main():
    deployer = accounts.test_accounts[0]
    pool_blueprint = deployer.declare(project.Pool).contract_address
    print(f"DEPLOYED PoolBlueprint {pool_blueprint}")
    # The container's own declare, through the account (Ape caches nothing on this path).
    spare = project.Pool.declare(sender=deployer).contract_address
    print(f"DEPLOYED SparePoolBlueprint {spare}")
    gauge_blueprint = raw_blueprint(deployer, project.Gauge)
    print(f"DEPLOYED GaugeBlueprint {gauge_blueprint}")
    factory = deployer.deploy(project.Factory, pool_blueprint, gauge_blueprint)
    print(f"DEPLOYED Factory {factory.address}")
    for n, (fee, name) in enumerate(((30, "first"), (5, "second"))):
        factory.make_pool("0x" + f"{n + 1:02x}" * 20, fee, name, sender=deployer)
        print(f"DEPLOYED Pool{n} {factory.pools(n)}")
        print(f"DEPLOYED Gauge{n} {factory.gauges(n)}")
