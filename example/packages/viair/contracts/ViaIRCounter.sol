// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Compiled with viaIR (this package's config sets solidity.via_ir).
contract ViaIRCounter {
    uint256 public count;
    uint256 public immutable step;
    mapping(address => uint256) public perCaller;

    constructor(uint256 step_, uint256 start) {
        step = step_;
        count = start;
    }

    function increment() external returns (uint256) {
        count += step;
        perCaller[msg.sender] += 1;
        return count;
    }
}
