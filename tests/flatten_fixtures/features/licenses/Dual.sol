// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity ^0.8.20;

import "./MitToo.sol";

library Dual {
    function twice(uint256 a) internal pure returns (uint256) {
        return MitToo.add(a, a);
    }
}
