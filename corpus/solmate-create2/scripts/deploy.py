"""Deploy Solmate's contracts with constructor arguments through the deterministic-deployment
proxy (Arachnid's, at the same address on every chain; anvil has it from genesis): one call each,
the salt then the init code, the address the CREATE2 rule's."""

from ape import accounts, project
from eth_abi import encode
from eth_utils import keccak, to_checksum_address

DEPLOYER = "0x4e59b44847b379578588920ca78fbf26c0b4956c"


def create2(sender, container, types, args, salt=b"\0" * 32):
    init = bytes.fromhex(container.contract_type.deployment_bytecode.bytecode[2:]) + encode(types, args)
    sender.transfer(DEPLOYER, 0, data=salt + init)
    made = keccak(b"\xff" + bytes.fromhex(DEPLOYER[2:]) + salt + keccak(init))[12:]
    return to_checksum_address(made)


def main():
    owner = accounts.test_accounts[0]
    deployed = {}
    deployed["MockERC20"] = token = create2(owner, project.MockERC20, ["string", "string", "uint8"], ["Token", "TKN", 18])
    deployed["MockERC4626"] = create2(
        owner, project.MockERC4626, ["address", "string", "string"], [token, "Vault", "vTKN"]
    )
    deployed["MockERC721"] = create2(owner, project.MockERC721, ["string", "string"], ["Collectible", "NFT"])
    deployed["RolesAuthority"] = create2(
        owner, project.RolesAuthority, ["address", "address"], [owner.address, "0x" + "00" * 20]
    )
    deployed["WETH"] = create2(owner, project.WETH, [], [])
    for name, address in deployed.items():
        print(f"{name:20} {address}")
