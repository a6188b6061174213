"""Deploy OpenZeppelin 1.12.0's concrete contracts as the package ships them (it has no mocks):
its ERC-20 and ERC-721 tokens, token timelock and vesting, the plain crowdsale, ownership,
lifecycle, access and payment contracts, and the Escrow PullPayment creates in its constructor.
Left out: abstract contracts; libraries (internal functions only) and ReentrancyGuard, whose empty
ABIs leave nothing to read back through an explorer."""

import rlp
from ape import accounts, chain, project
from eth_utils import keccak, to_checksum_address


def main():
    owner, other = accounts.test_accounts[0], accounts.test_accounts[1]
    later = chain.pending_timestamp + 86400
    deployed = {}

    def deploy(name, *args, **kwargs):
        deployed[name] = contract = owner.deploy(getattr(project, name), *args, **kwargs)
        return contract

    # Tokens
    deploy("BasicToken")
    token = deploy("StandardToken")
    deploy("BurnableToken")
    deploy("StandardBurnableToken")
    mintable = deploy("MintableToken")
    deploy("CappedToken", 10**24)
    deploy("PausableToken")
    deploy("RBACMintableToken")
    deploy("TokenTimelock", token.address, other.address, later)
    deploy("TokenVesting", other.address, later, 3600, 86400, True)
    deploy("ERC721BasicToken")
    deploy("ERC721Token", "Collectible", "NFT")
    deploy("ERC721Holder")
    deploy("Crowdsale", 1000, owner.address, mintable.address)
    # Ownership and lifecycle
    for name in (
        "Ownable",
        "Claimable",
        "DelayedClaimable",
        "Contactable",
        "HasNoEther",
        "HasNoTokens",
        "HasNoContracts",
        "NoOwner",
        "CanReclaimToken",
        "Superuser",
        "Destructible",
        "Pausable",
        "TokenDestructible",
    ):
        deploy(name)
    deploy("Heritable", 86400)
    # Access, payment, the rest
    for name in ("RBAC", "Whitelist", "SignatureBouncer", "Escrow"):
        deploy(name)
    deploy("RefundEscrow", other.address)
    deploy("SplitPayment", [owner.address, other.address], [1, 3])
    pull = deploy("PullPayment")
    deploy("LimitBalance", 10**18)
    deploy("SupportsInterfaceWithLookup")

    # PullPayment's escrow is private: its address is the CREATE one for PullPayment's nonce 1.
    escrow = keccak(rlp.encode([bytes.fromhex(pull.address[2:]), 1]))[12:]
    for name, contract in deployed.items():
        print(f"{name:28} {contract.address}\n", end="")  # one write: the plugin may log meanwhile
    print(f"{'Escrow (PullPayment)':28} {to_checksum_address(escrow)}\n", end="")
