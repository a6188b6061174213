// SPDX-License-Identifier: MIT
pragma solidity 0.6.12;
pragma experimental ABIEncoderV2;

library DataTypes {
    struct ReserveData {
        uint256 liquidityIndex;
        uint128 currentLiquidityRate;
        address aTokenAddress;
        uint8 id;
        bool isActive;
    }

    struct UserConfigurationMap {
        uint256 data;
    }
}
