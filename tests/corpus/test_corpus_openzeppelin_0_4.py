"""OpenZeppelin 1.12.0 (openzeppelin-solidity from npm; solc 0.4.24, optimizer off, as its truffle
build) deployed by corpus/openzeppelin-0.4's own script: the package's concrete contracts and a
child a constructor creates. Every one verified after deploy, then by address alone, standard-json and
flattened, and read back: solc 0.4's metadata (bzzr0), its standard-json and its flattening."""

from support.corpus import ProtocolChecks


class TestOpenZeppelin04(ProtocolChecks):
    PROTOCOL = "openzeppelin-0.4"
    CONTRACTS = [
        "BasicToken",
        "StandardToken",
        "BurnableToken",
        "StandardBurnableToken",
        "MintableToken",
        "CappedToken",
        "PausableToken",
        "RBACMintableToken",
        "TokenTimelock",
        "TokenVesting",
        "ERC721BasicToken",
        "ERC721Token",
        "ERC721Holder",
        "Crowdsale",
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
        "Heritable",
        "RBAC",
        "Whitelist",
        "SignatureBouncer",
        "Escrow",
        "RefundEscrow",
        "SplitPayment",
        "PullPayment",
        "LimitBalance",
        "SupportsInterfaceWithLookup",
        "Escrow (PullPayment)",
    ]
    NAMES = {"Escrow (PullPayment)": "Escrow"}
