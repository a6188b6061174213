// SPDX-License-Identifier: MIT
pragma solidity >= 0.8.0 <= 0.8.37;

abstract contract Capped {
    function capped() internal pure returns (uint256) {
        return 4;
    }
}
