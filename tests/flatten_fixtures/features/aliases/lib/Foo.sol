// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Foo {
    uint256 public immutable seed;

    constructor(uint256 seed_) {
        seed = seed_;
    }

    function foo() public view virtual returns (uint256) {
        return seed;
    }
}
