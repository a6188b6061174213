// SPDX-License-Identifier: MIT
pragma solidity 0.6.12;
pragma experimental ABIEncoderV2;

import {DataTypes} from "./DataTypes.sol";

// Public functions taking structs: ABI coder v2's Yul helpers, named after the structs' AST ids.
library ReserveLogic {
    function cumulate(DataTypes.ReserveData memory reserve, DataTypes.UserConfigurationMap memory config, uint256 amount)
        public
        pure
        returns (DataTypes.ReserveData memory, uint256)
    {
        require(reserve.isActive, "inactive");
        reserve.liquidityIndex += amount + config.data;
        return (reserve, reserve.liquidityIndex);
    }

    function configure(DataTypes.ReserveData memory reserve, uint256 amount)
        public
        pure
        returns (DataTypes.UserConfigurationMap memory)
    {
        require(amount != 0, "zero amount");
        return DataTypes.UserConfigurationMap(uint256(reserve.id) + amount);
    }

    function total(DataTypes.ReserveData[] memory reserves, DataTypes.UserConfigurationMap[] memory configs)
        public
        pure
        returns (DataTypes.ReserveData[] memory, uint256 sum)
    {
        for (uint256 i = 0; i < reserves.length && i < configs.length; i++) {
            sum += configs[i].data + reserves[i].currentLiquidityRate;
        }
        return (reserves, sum);
    }
}
