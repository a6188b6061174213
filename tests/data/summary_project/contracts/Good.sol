// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

contract Good {
    uint256 public constant MAGIC = 0x1111111111111111111111111111111111111111111111111111111111111111;
    uint256 public value;

    constructor(uint256 start) {
        value = start;
    }
}
