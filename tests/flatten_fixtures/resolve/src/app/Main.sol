// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Local.sol";
import {Util} from "../lib/Util.sol";
import "resolve/src/lib/Util.sol"; // the same unit by its literal name: appears once
import {ThingTwo} from "dep/Thing.sol"; // remapped with context resolve/src/app: vendor/dep2

contract Main is Local {
    function all() external pure returns (uint256) {
        return Util.util() + ThingTwo.thing() + base();
    }
}
