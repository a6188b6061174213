// SPDX-License-Identifier: MIT
pragma solidity ^0.7.6;

// One file, one ABI coder: flattens as it is.
contract Plain {
    uint256 public count;

    function bump() external {
        count += 1;
    }
}
