// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A counter with an immutable step and a label: every deployment has its own constructor arguments.
contract Counter {
    uint256 public immutable step;
    string public label;
    uint256 public count;

    constructor(uint256 step_, string memory label_) {
        step = step_;
        label = label_;
    }

    function bump() external {
        count += step;
    }
}
