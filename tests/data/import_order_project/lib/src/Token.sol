// SPDX-License-Identifier: MIT
pragma solidity ^0.8.4;

import {LibString} from "order-strings/src/utils/LibString.sol";

contract Token {
    function label(uint256 id) public pure returns (string memory) {
        return LibString.toString(id);
    }
}
