// SPDX-License-Identifier: BSD-3-Clause
pragma solidity 0.8.26;

/// Compiled for EVM paris with 10000 optimizer runs (this package's config), on solc 0.8.26.
contract TunedStore {
    bytes32 public tag;
    uint256[] public values;

    constructor(bytes32 tag_, uint256[] memory values_) {
        tag = tag_;
        values = values_;
    }

    function sum() external view returns (uint256 total) {
        for (uint256 i = 0; i < values.length; i++) total += values[i];
    }
}
