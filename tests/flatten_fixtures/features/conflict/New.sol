// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

import "./Old.sol";

contract New is Old {}
