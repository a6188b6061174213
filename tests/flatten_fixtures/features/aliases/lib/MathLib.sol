// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

library MathLib {
    function add(uint256 a, uint256 b) internal pure returns (uint256) {
        return a + b;
    }
}

interface IAdder {
    /// @notice Adds.
    function add(uint256 a, uint256 b) external view returns (uint256);
}
