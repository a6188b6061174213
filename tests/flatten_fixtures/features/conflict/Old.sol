// SPDX-License-Identifier: MIT
pragma solidity ^0.7.6;

contract Old {}
