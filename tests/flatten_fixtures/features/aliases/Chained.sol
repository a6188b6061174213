// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./lib/Reexport.sol";

/// Imports a file that itself uses a unit alias: the alias is rewritten inside Reexport.sol.
contract Chained {
    function five() external pure returns (uint256) {
        return Reexport.add3(2);
    }
}
