// SPDX-License-Identifier: MIT
pragma solidity 0.6.12;

// First by name in the project's compile: its nodes shift the libraries' AST ids there.
contract AToken {
    mapping(address => uint256) public balanceOf;
    uint256 public totalSupply;

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
        totalSupply += amount;
    }
}
