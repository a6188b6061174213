// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Child {
    uint256 public x;
    address public immutable parent;

    constructor(uint256 x_) {
        x = x_;
        parent = msg.sender;
    }
}

/// Deploys Child with CREATE and CREATE2, so the creation input lives only in a trace.
contract Factory {
    event Made(address child);

    function make(uint256 x) external returns (address child) {
        child = address(new Child(x));
        emit Made(child);
    }

    function make2(bytes32 salt, uint256 x) external returns (address child) {
        child = address(new Child{salt: salt}(x));
        emit Made(child);
    }
}
