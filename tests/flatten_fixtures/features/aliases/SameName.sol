// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./lib/Counter.sol" as Counter;

/// The unit alias has the name of the contract it holds: `Counter.Counter` becomes `Counter`.
contract SameName is Counter.Counter {
    Counter.Counter public other;

    function increment() public override(Counter.Counter) {
        super.increment();
        other = Counter.Counter(address(this));
    }
}
