// SPDX-License-Identifier: MIT
// The corpus's own: the initializer `diamondCut` delegatecalls once, as EIP-2535's DiamondInit
// does; it writes the facets' state through the package's internal layers.
pragma solidity ^0.8.18;

import { AccessControlInternal } from '@solidstate/contracts/access/access_control/AccessControlInternal.sol';
import { AccessControlStorage } from '@solidstate/contracts/access/access_control/AccessControlStorage.sol';
import { ERC20BaseInternal } from '@solidstate/contracts/token/ERC20/base/ERC20BaseInternal.sol';
import { ERC20MetadataInternal } from '@solidstate/contracts/token/ERC20/metadata/ERC20MetadataInternal.sol';

contract DiamondInit is ERC20BaseInternal, ERC20MetadataInternal, AccessControlInternal {
    function init(
        string calldata name,
        string calldata symbol,
        uint8 decimals,
        uint256 supply,
        address admin
    ) external {
        _setName(name);
        _setSymbol(symbol);
        _setDecimals(decimals);
        _mint(admin, supply);
        _grantRole(AccessControlStorage.DEFAULT_ADMIN_ROLE, admin);
    }
}
