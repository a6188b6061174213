// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./MathLib.sol" as Inner;

library Reexport {
    function add3(uint256 a) internal pure returns (uint256) {
        return Inner.MathLib.add(a, 3);
    }
}
