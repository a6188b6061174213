// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC20Base} from "./ERC20Base.sol";
import {Ownable} from "../access/Ownable.sol";

/// A token whose constructor takes a string, a uint, an address and an array,
/// so that constructor-argument encoding is exercised on every kind of head and tail.
contract Token is ERC20Base, Ownable {
    address[] public initialHolders;

    constructor(
        string memory name_,
        string memory symbol_,
        uint256 supplyPerHolder,
        address owner_,
        address[] memory holders
    ) ERC20Base(name_, symbol_) Ownable(owner_) {
        for (uint256 i = 0; i < holders.length; i++) {
            initialHolders.push(holders[i]);
            _mint(holders[i], supplyPerHolder);
        }
    }

    function mint(address to, uint256 value) external onlyOwner {
        _mint(to, value);
    }

    function holderCount() external view returns (uint256) {
        return initialHolders.length;
    }
}
