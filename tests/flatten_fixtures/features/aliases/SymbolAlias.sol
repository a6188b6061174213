// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Foo as Bar} from "./lib/Foo.sol";
import {MathLib as Maths, IAdder} from "./lib/MathLib.sol";

/// A contract that knows its parents only by their aliases.
contract SymbolAlias is Bar {
    Bar public sibling;

    constructor(uint256 seed_) Bar(seed_) {
        sibling = new Bar(seed_ + 1);
    }

    function foo() public view override(Bar) returns (uint256) {
        return Maths.add(Bar.foo(), sibling.foo());
    }

    function adder() external pure returns (bytes4) {
        return type(IAdder).interfaceId;
    }
}
