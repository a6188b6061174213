// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Base} from "../lib/Base.sol";

abstract contract Local is Base {}
