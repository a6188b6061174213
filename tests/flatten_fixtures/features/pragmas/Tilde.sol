// SPDX-License-Identifier: MIT
pragma solidity ~0.8.26;
pragma abicoder v2;

abstract contract Tilde {
    struct Pair {
        uint256 a;
        uint256 b;
    }

    function pair(Pair calldata p) external pure returns (Pair memory) {
        return p;
    }

    function tilde() internal pure returns (uint256) {
        return 2;
    }
}
