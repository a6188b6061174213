# @version 0.3.7
# The factory's interface, imported by Registry.vy: Vyper 0.3 imports are interfaces only.

@view
@external
def FEE_BPS() -> uint256:
    pass

@external
def create_vault() -> address:
    pass
