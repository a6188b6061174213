// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Child} from "./Child.sol";

/// Parent and Child import each other: a cycle solc accepts across files.
contract Parent {
    function kind() external pure virtual returns (uint256) {
        return 1;
    }

    function asChild(address at) external pure returns (Child) {
        return Child(at);
    }
}
