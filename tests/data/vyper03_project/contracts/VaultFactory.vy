# @version 0.3.7
# @license MIT
# A vault factory for Vyper 0.3.7, whose immutables are appended after the runtime code on chain.

event VaultCreated:
    vault: indexed(address)
    owner: indexed(address)

ADMIN: public(immutable(address))
FEE_BPS: public(immutable(uint256))
IMPLEMENTATION: public(immutable(address))
LABEL: public(immutable(String[32]))

BPS: constant(uint256) = 10000
MAX_FEE_BPS: constant(uint256) = 1000

vaults: public(DynArray[address, 64])
owner_of: public(HashMap[address, address])


@external
def __init__(admin: address, fee_bps: uint256, implementation: address, label: String[32]):
    assert fee_bps <= MAX_FEE_BPS, "fee too high"
    ADMIN = admin
    FEE_BPS = fee_bps
    IMPLEMENTATION = implementation
    LABEL = label


@external
def create_vault() -> address:
    vault: address = create_minimal_proxy_to(IMPLEMENTATION)
    self.vaults.append(vault)
    self.owner_of[vault] = msg.sender
    log VaultCreated(vault, msg.sender)
    return vault


@view
@external
def fee_on(amount: uint256) -> uint256:
    return amount * FEE_BPS / BPS


@view
@external
def vault_count() -> uint256:
    return len(self.vaults)
