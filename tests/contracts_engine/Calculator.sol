// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// An external library: its functions are called through DELEGATECALL, so users are linked.
library MathLib {
    function mulAdd(uint256 a, uint256 b, uint256 c) external pure returns (uint256) {
        return a * b + c;
    }
}

contract Calculator {
    uint256 public last;

    constructor(uint256 seed) {
        last = seed;
    }

    function run(uint256 b, uint256 c) external returns (uint256) {
        last = MathLib.mulAdd(last, b, c);
        return last;
    }
}
