// SPDX-License-Identifier: MIT
// solc 0.7.1 crashes ("Compiled contract not found") on Main when the output selection names
// Main alone: its base's constructor creates a Child (Balancer V2's Vault and its
// ProtocolFeesCollector, small). Every contract selected, it compiles.
pragma solidity 0.7.1;
pragma experimental ABIEncoderV2;

contract Child {
    address public owner;

    constructor(address owner_) {
        owner = owner_;
    }
}

abstract contract Base {
    Child public child;

    constructor() {
        child = new Child(address(this));
    }
}

contract Main is Base {
    uint256 public value;

    constructor(uint256 value_) {
        value = value_;
    }
}
