// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

import {MathLib} from "./MathLib.sol";

/// Linked to MathLib at deploy time (ape-solidity's add_library flow).
contract Calculator {
    uint256 public immutable scale;

    constructor(uint256 scale_) {
        scale = scale_;
    }

    function scaled(uint256 value, uint256 basisPoints) external view returns (uint256) {
        return MathLib.mulDiv(value * scale, basisPoints, 10_000);
    }

    function root(uint256 value) external pure returns (uint256) {
        return MathLib.sqrt(value);
    }
}
