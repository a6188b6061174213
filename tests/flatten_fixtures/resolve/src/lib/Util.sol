// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ThingOne} from "dep/Thing.sol"; // no context match here: vendor/dep1
import "./../lib/./Base.sol";

library Util {
    function util() internal pure returns (uint256) {
        return ThingOne.thing() * 10;
    }
}
