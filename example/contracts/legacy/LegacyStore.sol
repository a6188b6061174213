// SPDX-License-Identifier: GPL-3.0
pragma solidity 0.5.17;

/// Built with an old compiler (0.5.x), whose standard-json path differs in solc-js.
contract LegacyStore {
    uint256 public stored;
    string public label;

    constructor(string memory label_, uint256 initial) public {
        label = label_;
        stored = initial;
    }

    function set(uint256 value) public {
        stored = value;
    }
}
