// SPDX-License-Identifier: MIT
pragma solidity ^0.7.6;

// No abicoder pragma: solc 0.7 compiles this file with ABI coder v1.
contract Owned {
    address public owner;

    constructor() {
        owner = msg.sender;
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "not the owner");
        _;
    }
}
