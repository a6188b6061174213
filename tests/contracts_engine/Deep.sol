// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Factory.sol";

/// Forwards a call: a chain of relays puts a factory's CREATE calls deep in a transaction.
contract Relay {
    function forward(address target, bytes calldata data) external returns (bytes memory out) {
        bool ok;
        (ok, out) = target.call(data);
        require(ok, "forward failed");
    }

    /// Calls `target` and goes on when it reverts: a CREATE inside that call is undone.
    function tryForward(address target, bytes calldata data) external returns (bool ok) {
        (ok, ) = target.call(data);
    }
}

/// Creates its Child in its constructor, as OpenZeppelin 5's TransparentUpgradeableProxy its ProxyAdmin.
contract Maker {
    Child public child;

    constructor(uint256 x) {
        child = new Child(x);
    }
}

/// Makes a Child, then reverts: the Child never exists.
contract Undone {
    function makeAndRevert(uint256 x) external returns (address) {
        new Child(x);
        revert("undone");
    }
}
