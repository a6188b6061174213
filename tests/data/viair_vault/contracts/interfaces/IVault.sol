// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
struct Position { uint256 shares; uint128 debt; uint128 collateral; }
struct Market { uint128 totalAssets; uint128 totalShares; uint128 borrowAssets; uint128 borrowShares; }
interface IVault {
    function supply(bytes32 id, uint256 assets, address onBehalf) external returns (uint256);
    function withdraw(bytes32 id, uint256 shares, address onBehalf) external returns (uint256);
}
