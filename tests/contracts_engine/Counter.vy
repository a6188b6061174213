# pragma version 0.4.3
# @license MIT

owner: public(immutable(address))
start: public(immutable(uint256))
count: public(uint256)
name: public(String[32])


@deploy
def __init__(initial: uint256, name_: String[32]):
    owner = msg.sender
    start = initial
    self.count = initial
    self.name = name_


@external
def bump(by: uint256) -> uint256:
    self.count += by
    return self.count
