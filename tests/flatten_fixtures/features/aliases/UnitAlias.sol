// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./lib/MathLib.sol" as M;

contract UnitAlias is M.IAdder {
    /// @inheritdoc M.IAdder
    function add(uint256 a, uint256 b) external pure returns (uint256) {
        return M.MathLib.add(a, b) + M
            .MathLib.add(1, 2);
    }
}
