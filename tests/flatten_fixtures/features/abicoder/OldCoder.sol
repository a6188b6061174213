// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
pragma abicoder v1;

import {Store} from "./Store.sol";

/// Its external functions are encoded with ABI coder v1; Store's with the default, v2.
contract OldCoder is Store {
    function get() external view returns (uint256) {
        return value;
    }
}
