// SPDX-License-Identifier: MIT
pragma solidity >=0.8.20 <0.9.0;

import {Caret} from "./Caret.sol";
import {Tilde} from "./Tilde.sol";
import {Either} from "./Either.sol";
import {Capped} from "./Capped.sol";

contract Entry is Caret, Tilde, Either, Capped {
    function all() external pure returns (uint256) {
        return caret() + tilde() + either() + capped();
    }
}
