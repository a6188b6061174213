// SPDX-License-Identifier: MIT
pragma solidity ^0.8.4;

// Token.sol is reached two ways: by the dependency's name here, and by Wrapper's `./Token.sol`.
import {Token} from "order-lib/src/Token.sol";
import {Wrapper} from "order-lib/src/Wrapper.sol";

contract Impl is Wrapper {
    function twice(uint256 id) external pure returns (string memory) {
        return string.concat(label(id), label(id));
    }
}
