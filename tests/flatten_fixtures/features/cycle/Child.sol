// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Parent} from "./Parent.sol";

contract Child is Parent {
    function kind() external pure override returns (uint256) {
        return 2;
    }
}
