# @version 0.2.16
"""
@title Forwarders to one target, made with Vyper 0.2's create_forwarder_to
"""

target: public(address)
made: public(address[4])
count: public(uint256)


@external
def __init__(_target: address):
    self.target = _target


@external
def make() -> address:
    forwarder: address = create_forwarder_to(self.target)
    self.made[self.count] = forwarder
    self.count += 1
    return forwarder
