// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// An external library: its public functions are called with DELEGATECALL,
/// so contracts that use it are linked against its deployed address.
library MathLib {
    function mulDiv(uint256 a, uint256 b, uint256 denominator) public pure returns (uint256) {
        require(denominator != 0, "MathLib: zero denominator");
        return (a * b) / denominator;
    }

    function sqrt(uint256 x) public pure returns (uint256 y) {
        if (x == 0) return 0;
        uint256 z = (x + 1) / 2;
        y = x;
        while (z < y) {
            y = z;
            z = (x / z + z) / 2;
        }
    }
}
