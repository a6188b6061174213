// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

// Made in WithHelper's state-variable initialiser; no event names it.
contract Helper {
    address public immutable maker = msg.sender;
}

contract WithHelper {
    Helper public immutable helper = new Helper();
}

// Root.grow() creates a Branch, whose constructor creates a Middle, whose constructor creates a
// Leaf: three calls deep, no event anywhere.
contract Leaf {
    uint256 public immutable bornAt = block.number;
}

contract Middle {
    Leaf public immutable leaf = new Leaf();
}

contract Branch {
    Middle public immutable middle = new Middle();
}

contract Root {
    Branch public branch;

    function grow() external {
        branch = new Branch();
    }
}

// SSTORE2-style: bytes kept as the code of a contract that starts with STOP, so it never runs.
contract DataStore {
    address public pointer;

    function write(bytes calldata data) external {
        bytes memory code = abi.encodePacked(hex"00", data);
        // PUSH4 len, DUP1, PUSH1 14, PUSH1 0, CODECOPY, PUSH1 0, RETURN; then the code itself.
        bytes memory init = abi.encodePacked(hex"63", uint32(code.length), hex"80600e6000396000f3", code);
        address made;
        assembly {
            made := create(0, add(init, 32), mload(init))
        }
        require(made != address(0), "data contract not created");
        pointer = made;
    }
}

// Seeds.plant(salt) makes a Sprout with CREATE2 (its constructor takes an argument); no event
// names it, and CREATE2 leaves no trace in the factory's nonce.
contract Sprout {
    uint256 public immutable seed;

    constructor(uint256 seed_) {
        seed = seed_;
    }
}

contract Seeds {
    address public sprout;

    function plant(bytes32 salt) external {
        sprout = address(new Sprout{salt: salt}(uint256(salt)));
    }
}
