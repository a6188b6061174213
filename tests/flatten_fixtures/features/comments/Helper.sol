// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/**
 * import "./Missing6.sol";
 */
abstract contract Helper {
    function helper() internal pure returns (string memory) {
        return "// pragma solidity 0.6.0;";
    }
}
