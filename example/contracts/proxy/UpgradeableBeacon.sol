// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Holds the implementation address for every BeaconProxy that points at it.
contract UpgradeableBeacon {
    address public implementation;
    address public immutable owner;

    event Upgraded(address indexed implementation);

    constructor(address implementation_, address owner_) {
        implementation = implementation_;
        owner = owner_;
        emit Upgraded(implementation_);
    }

    function upgradeTo(address newImplementation) external {
        require(msg.sender == owner, "UpgradeableBeacon: not owner");
        implementation = newImplementation;
        emit Upgraded(newImplementation);
    }
}
