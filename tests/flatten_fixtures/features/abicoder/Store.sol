// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Store {
    uint256 public value = 7;
}
