// SPDX-License-Identifier: MIT
pragma solidity 0.6.12;

library GenericLogic {
    function healthFactor(uint256 collateral, uint256 debt) public pure returns (uint256) {
        return debt == 0 ? uint256(-1) : (collateral * 1e18) / debt;
    }
}
