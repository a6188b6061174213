// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Initializable} from "@openzeppelin/contracts/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts/proxy/utils/UUPSUpgradeable.sol";

/// A UUPS implementation on OpenZeppelin Contracts 5 (an Ape dependency from npm).
contract BoxUUPS is Initializable, UUPSUpgradeable {
    uint256 public value;
    address public owner;

    error NotOwner(address caller);

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    function initialize(uint256 initialValue, address owner_) external initializer {
        value = initialValue;
        owner = owner_;
    }

    function setValue(uint256 newValue) external {
        value = newValue;
    }

    function _authorizeUpgrade(address) internal view override {
        if (msg.sender != owner) revert NotOwner(msg.sender);
    }
}
