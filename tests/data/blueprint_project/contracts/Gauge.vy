# @version 0.3.10
# A gauge for one pool, made from a blueprint sent by a raw transaction.

POOL: public(immutable(address))
weight: public(uint256)


@external
def __init__(pool: address):
    POOL = pool
    self.weight = 1


@external
def set_weight(weight: uint256):
    self.weight = weight
