"""Deploy ERC-4337's EntryPoint and a SimpleAccount behind it, Solady's ERC4337Factory for that
account, then three accounts through the factory, as a wallet's users get theirs: each with
CREATE2 from a salt whose upper 160 bits are its owner (the factory's rule), each an ERC-1967
minimal proxy no event names. The EntryPoint's own SenderCreator (its state-variable initialiser,
the EntryPoint's first CREATE) is printed too."""

import rlp
from ape import accounts, project
from eth_utils import keccak, to_checksum_address


def main():
    deployer = accounts.test_accounts[0]
    entry_point = deployer.deploy(project.EntryPoint)
    sender_creator = to_checksum_address(keccak(rlp.encode([bytes.fromhex(entry_point.address[2:]), 1]))[12:])
    implementation = deployer.deploy(project.SimpleAccount, entry_point.address)
    factory = deployer.deploy(project.ERC4337Factory, implementation.address)
    made = [
        ("EntryPoint", entry_point.address),
        ("SenderCreator", sender_creator),
        ("SimpleAccount", implementation.address),
        ("ERC4337Factory", factory.address),
    ]
    for index, owner in enumerate(accounts.test_accounts[:3], start=1):
        salt = bytes.fromhex(owner.address[2:]) + index.to_bytes(12, "big")
        factory.createAccount(salt, sender=deployer)
        made.append((f"Account {index}", factory.getAddress(salt)))
    for name, address in made:
        print(f"{name:20} {address}")
