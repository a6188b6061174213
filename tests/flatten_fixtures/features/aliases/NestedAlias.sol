// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./lib/Reexport.sol" as R;

contract NestedAlias {
    function seven() external pure returns (uint256) {
        return R.Inner.MathLib.add(3, 4) + R.Reexport.add3(0);
    }
}
