"""Deploy Solmate's concrete contracts as the package ships them: its token mocks (ERC-20, an
ERC-4626 vault over that token, ERC-721, ERC-1155, ERC-6909), WETH, and its auth contracts."""

from ape import accounts, project


def main():
    owner = accounts.test_accounts[0]
    deployed = {}
    deployed["MockERC20"] = token = owner.deploy(project.MockERC20, "Token", "TKN", 18)
    deployed["MockERC4626"] = owner.deploy(project.MockERC4626, token.address, "Vault", "vTKN")
    deployed["MockERC721"] = owner.deploy(project.MockERC721, "Collectible", "NFT")
    deployed["MockERC1155"] = owner.deploy(project.MockERC1155)
    deployed["MockERC6909"] = owner.deploy(project.MockERC6909)
    deployed["WETH"] = owner.deploy(project.WETH)
    deployed["RolesAuthority"] = roles = owner.deploy(project.RolesAuthority, owner.address, "0x" + "00" * 20)
    deployed["MultiRolesAuthority"] = owner.deploy(project.MultiRolesAuthority, owner.address, roles.address)
    deployed["MockAuthority"] = owner.deploy(project.MockAuthority, True)
    deployed["MockAuthChild"] = owner.deploy(project.MockAuthChild)
    deployed["MockOwned"] = owner.deploy(project.MockOwned)

    for name, contract in deployed.items():
        print(f"{name:20} {contract.address}")
