// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A value holder with constructor arguments of several types and immutables.
contract Box {
    uint256 public immutable created;
    address public immutable owner;
    uint256 public value;
    string public label;
    bytes32 public tag;
    int16[] public deltas;

    event Stored(uint256 value);

    constructor(uint256 initial, address owner_, string memory label_, bytes32 tag_, int16[] memory deltas_) {
        created = block.number;
        owner = owner_;
        value = initial;
        label = label_;
        tag = tag_;
        deltas = deltas_;
    }

    function store(uint256 v) external {
        require(msg.sender == owner, "not owner");
        for (uint256 i = 0; i < deltas.length; i++) {
            if (deltas[i] > 0) v += uint256(int256(deltas[i]));
        }
        value = v;
        emit Stored(v);
    }

    function describe() external view returns (string memory) {
        return string(abi.encodePacked(label, ":", tag));
    }
}
