// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Foo as FooOne} from "./lib/Foo.sol";
import {Foo as FooTwo} from "./lib2/Foo.sol";

contract ClashAlias is FooOne(1), FooTwo {}
