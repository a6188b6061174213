// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./MitToo.sol";

library MitLib {
    function inc(uint256 a) internal pure returns (uint256) {
        return MitToo.add(a, 1);
    }
}
