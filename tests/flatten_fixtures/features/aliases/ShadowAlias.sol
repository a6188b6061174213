// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Foo as Bar} from "./lib/Foo.sol";

contract ShadowAlias is Bar(1) {
    // Renaming Bar back to Foo here would bind to this local variable instead.
    function twice() external view returns (uint256) {
        uint256 Foo = 2;
        return Bar.foo() * Foo;
    }
}
