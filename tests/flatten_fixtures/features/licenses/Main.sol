// SPDX-License-Identifier: GPL-3.0-or-later
pragma solidity ^0.8.20;

import "./MitLib.sol";
import "./Dual.sol";

contract Main {
    function run(uint256 a) external pure returns (uint256) {
        return Dual.twice(MitLib.inc(a));
    }
}
