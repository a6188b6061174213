# @version 0.3.7
# @license MIT
# A proxy factory whose code vyper 0.3.7 lays out by Python's hash seed: create_vault and set_fee
# call internal functions defined after them, whose order follows the seed (vyper#3369).

event VaultCreated:
    vault: indexed(address)
    owner: indexed(address)

IMPLEMENTATION: public(immutable(address))

owner: public(address)
fee_bps: public(uint256)
paused: public(bool)
vaults: public(DynArray[address, 64])
is_vault: public(HashMap[address, bool])


@external
def __init__(implementation: address):
    IMPLEMENTATION = implementation
    self.owner = msg.sender


@external
def create_vault() -> address:
    self._check_not_paused()
    vault: address = create_minimal_proxy_to(IMPLEMENTATION)
    self._record(vault)
    self._announce(vault)
    return vault


@external
def set_fee(fee_bps: uint256):
    self._check_owner()
    self._check_fee(fee_bps)
    self.fee_bps = fee_bps


@internal
def _check_owner():
    assert msg.sender == self.owner, "not the owner"


@internal
def _check_fee(fee_bps: uint256):
    assert fee_bps <= 1000, "fee too high"


@internal
def _check_not_paused():
    assert not self.paused, "paused"


@internal
def _record(vault: address):
    self.vaults.append(vault)
    self.is_vault[vault] = True


@internal
def _announce(vault: address):
    log VaultCreated(vault, msg.sender)
