// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import * as L from "./lib/Shapes.sol";

contract StarAlias {
    using L.Shapes for L.Point;

    L.Point public origin = L.Point(1, 2);

    function area(int256 x, int256 y) external view returns (int256) {
        return origin.area(L.Point({x: x, y: y})) / int256(L.SCALE);
    }
}
