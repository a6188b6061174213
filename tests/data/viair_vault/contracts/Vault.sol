// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
import {IVault, Position, Market} from "./interfaces/IVault.sol";
import {MathLib} from "./libraries/MathLib.sol";
import {SharesLib} from "./libraries/SharesLib.sol";
contract Vault is IVault {
    using MathLib for uint256;
    using SharesLib for uint256;
    mapping(bytes32 => mapping(address => Position)) public position;
    mapping(bytes32 => Market) public market;
    function supply(bytes32 id, uint256 assets, address onBehalf) external returns (uint256 shares) {
        Market storage m = market[id];
        shares = assets.toSharesDown(m.totalAssets, m.totalShares);
        position[id][onBehalf].shares += shares;
        m.totalShares += uint128(shares);
        m.totalAssets += uint128(assets);
    }
    function withdraw(bytes32 id, uint256 shares, address onBehalf) external returns (uint256 assets) {
        Market storage m = market[id];
        assets = shares.toAssetsUp(m.totalAssets, m.totalShares);
        position[id][onBehalf].shares -= shares;
        m.totalShares -= uint128(shares);
        m.totalAssets -= uint128(assets);
    }
    function accrue(bytes32 id, uint256 rate, uint256 elapsed) external {
        Market storage m = market[id];
        uint256 interest = uint256(m.totalAssets).wMulDown(rate.wTaylor(elapsed));
        m.totalAssets += uint128(interest);
    }
}
