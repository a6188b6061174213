"""Deploy SolidState's diamond (@solidstate/contracts 0.0.59) as its users do: the diamond (its
loupe, cut, fallback, ERC-165 and ownership built in), then each facet as a contract of its own,
its every function added with one `diamondCut` whose initializer (DiamondInit, delegatecalled
once) sets the token's metadata, mints its supply and makes the owner the roles' admin."""

from ape import accounts, project
from eth_utils import function_signature_to_4byte_selector

ADD = 0  # IERC2535DiamondCutInternal.FacetCutAction.ADD
FACETS = ("TokenFacet", "AccessControlFacet", "MulticallFacet")


def main():
    owner = accounts.test_accounts[0]
    diamond = owner.deploy(project.Diamond)
    facets = {name: owner.deploy(getattr(project, name)) for name in FACETS}
    init = owner.deploy(project.DiamondInit)

    cuts = []
    for facet in facets.values():
        methods = [*facet.contract_type.mutable_methods, *facet.contract_type.view_methods]
        cuts.append((facet.address, ADD, [function_signature_to_4byte_selector(abi.selector) for abi in methods]))
    call = init.init.encode_input("Diamond Token", "DMD", 18, 10**24, owner.address)
    diamond.diamondCut(cuts, init.address, call, sender=owner)

    made = [("Diamond", diamond), *facets.items(), ("DiamondInit", init)]
    for name, contract in made:
        print(f"{name:20} {contract.address}")
