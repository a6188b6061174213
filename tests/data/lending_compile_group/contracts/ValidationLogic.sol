// SPDX-License-Identifier: MIT
pragma solidity 0.6.12;
pragma experimental ABIEncoderV2;

import {DataTypes} from "./DataTypes.sol";
import {GenericLogic} from "./GenericLogic.sol";

// Linked to GenericLogic: ape-solidity compiles it only once GenericLogic is added (add_library).
library ValidationLogic {
    function validateBorrow(DataTypes.ReserveData memory reserve, DataTypes.UserConfigurationMap memory config, uint256 amount)
        public
        pure
        returns (uint256)
    {
        require(reserve.isActive, "inactive");
        return GenericLogic.healthFactor(config.data + reserve.liquidityIndex, amount);
    }
}
