// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
import "@openzeppelin/contracts/token/ERC20/ERC20.sol";
contract Token is ERC20 {
    constructor(uint256 supply) ERC20("Race", "RCE") { _mint(msg.sender, supply); }
}
