// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

struct Point {
    int256 x;
    int256 y;
}

uint256 constant SCALE = 1000;

library Shapes {
    function area(Point memory a, Point memory b) internal pure returns (int256) {
        return (b.x - a.x) * (b.y - a.y) * int256(SCALE);
    }
}
