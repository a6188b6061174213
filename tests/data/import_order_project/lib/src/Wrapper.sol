// SPDX-License-Identifier: MIT
pragma solidity ^0.8.4;

import {Token} from "./Token.sol";

contract Wrapper is Token {}
