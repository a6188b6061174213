// SPDX-License-Identifier: MIT
pragma solidity ^0.7.6;
pragma abicoder v2;

import "./Owned.sol";

// ABI coder v2 (a struct in an external signature) on top of a v1 file.
contract Registry is Owned {
    struct Entry {
        string name;
        uint256 value;
    }

    string public label;
    Entry[] private entries;

    constructor(string memory label_) {
        label = label_;
    }

    function add(Entry calldata entry) external onlyOwner {
        entries.push(entry);
    }

    function entry(uint256 index) external view returns (Entry memory) {
        return entries[index];
    }
}
