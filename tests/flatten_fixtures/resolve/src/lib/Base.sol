// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

abstract contract Base {
    function base() internal pure returns (uint256) {
        return 100;
    }
}
