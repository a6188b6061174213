// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Foo {
    function other() external pure returns (uint256) {
        return 2;
    }
}
