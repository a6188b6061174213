// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

abstract contract Caret {
    function caret() internal pure returns (uint256) {
        return 1;
    }
}
