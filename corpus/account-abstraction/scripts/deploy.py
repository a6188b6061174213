"""Deploy ERC-4337's EntryPoint (0.6.0). Its state-variable initialiser
`SenderCreator private immutable senderCreator = new SenderCreator();` creates a helper no event
names and no getter returns: the deploy hook finds it by the EntryPoint's nonce or the node's
traces (issue 28). Printed from the CREATE rule: a contract's first child is at its nonce 1."""

import rlp
from ape import accounts, project
from eth_utils import keccak, to_checksum_address


def main():
    deployer = accounts.test_accounts[0]
    entry_point = deployer.deploy(project.EntryPoint)
    sender_creator = to_checksum_address(keccak(rlp.encode([bytes.fromhex(entry_point.address[2:]), 1]))[12:])
    for name, address in (("EntryPoint", entry_point.address), ("SenderCreator", sender_creator)):
        print(f"{name:20} {address}")
