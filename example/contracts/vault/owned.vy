# pragma version 0.4.3
# @license MIT
# A stateful Vyper 0.4 module: its storage lives in the contract that `initializes:` it.

owner: public(address)


@deploy
def __init__(owner_: address):
    self.owner = owner_


@internal
@view
def only_owner():
    assert msg.sender == self.owner, "not the owner"
