// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
library MathLib {
    uint256 internal constant WAD = 1e18;
    function wMulDown(uint256 x, uint256 y) internal pure returns (uint256) { return mulDivDown(x, y, WAD); }
    function wDivUp(uint256 x, uint256 y) internal pure returns (uint256) { return mulDivUp(x, WAD, y); }
    function mulDivDown(uint256 x, uint256 y, uint256 d) internal pure returns (uint256) { return (x * y) / d; }
    function mulDivUp(uint256 x, uint256 y, uint256 d) internal pure returns (uint256) { return (x * y + (d - 1)) / d; }
    function wTaylor(uint256 x, uint256 n) internal pure returns (uint256) {
        uint256 first = x * n; uint256 second = mulDivDown(first, first, 2 * WAD); uint256 third = mulDivDown(second, first, 3 * WAD);
        return first + second + third;
    }
}
