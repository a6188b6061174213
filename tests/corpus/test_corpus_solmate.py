"""Solmate (solmate 6.8.0 from npm; solc 0.8.15, 1000000 runs) deployed by corpus/solmate's own
script: the concrete contracts the package ships (its token mocks, WETH, its auth contracts).
Every contract verified after deploy, then by address alone, standard-json and flattened, and
read back."""

from support.corpus import ProtocolChecks


class TestSolmate(ProtocolChecks):
    PROTOCOL = "solmate"
    CONTRACTS = [
        "MockERC20",
        "MockERC4626",
        "MockERC721",
        "MockERC1155",
        "MockERC6909",
        "WETH",
        "RolesAuthority",
        "MultiRolesAuthority",
        "MockAuthority",
        "MockAuthChild",
        "MockOwned",
    ]
