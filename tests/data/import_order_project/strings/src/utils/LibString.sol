// SPDX-License-Identifier: MIT
pragma solidity ^0.8.4;

/// Imported only by order-lib's Token.sol, by this dependency's name.
library LibString {
    function toString(uint256 value) internal pure returns (string memory str) {
        if (value == 0) return "0";
        uint256 digits;
        for (uint256 v = value; v != 0; v /= 10) digits++;
        bytes memory buffer = new bytes(digits);
        for (; value != 0; value /= 10) buffer[--digits] = bytes1(uint8(48 + (value % 10)));
        str = string(buffer);
    }
}
