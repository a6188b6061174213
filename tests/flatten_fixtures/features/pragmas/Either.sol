// SPDX-License-Identifier: MIT
pragma solidity ^0.7.0 || ^0.8.10;

abstract contract Either {
    function either() internal pure returns (uint256) {
        return 3;
    }
}
