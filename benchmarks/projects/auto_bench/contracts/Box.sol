// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The implementation behind the EIP-1967 proxy, the beacon proxy and the clones.
/// State is set through initialize(), since a proxy never runs the implementation's constructor.
contract Box {
    uint256 public value;
    address public admin;
    bool private initialized;

    event ValueChanged(uint256 newValue);

    error AlreadyInitialized();

    function initialize(uint256 initialValue, address admin_) external {
        if (initialized) revert AlreadyInitialized();
        initialized = true;
        value = initialValue;
        admin = admin_;
    }

    function setValue(uint256 newValue) external {
        value = newValue;
        emit ValueChanged(newValue);
    }

    function version() external pure returns (string memory) {
        return "Box v1";
    }
}
