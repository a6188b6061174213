// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {LibClone} from "solady/utils/LibClone.sol";
import {SSTORE2} from "solady/utils/SSTORE2.sol";
import {UpgradeableBeacon} from "solady/utils/UpgradeableBeacon.sol";

// What every account's code delegates to.
contract Account {
    address public owner;

    function initialize(address owner_) external {
        require(owner == address(0), "initialized");
        owner = owner_;
    }
}

contract Beacon is UpgradeableBeacon {
    constructor(address owner_, address implementation_) UpgradeableBeacon(owner_, implementation_) {}
}

// Stamps accounts out of LibClone's templates; no event names them, no source compiles to them.
contract WalletFactory {
    address public immutable implementation;
    address public immutable beacon;
    address[] public accounts;
    address public pointer;

    constructor(address implementation_, address beacon_) {
        implementation = implementation_;
        beacon = beacon_;
    }

    function createAccounts(address owner, bytes32 salt) external {
        (, address erc1967) = LibClone.createDeterministicERC1967(implementation, salt);
        _made(erc1967, owner);
        _made(LibClone.deployDeterministicERC1967I(implementation, salt), owner);
        _made(LibClone.deployDeterministicERC1967BeaconProxy(beacon, salt), owner);
        _made(LibClone.cloneDeterministic(implementation, salt), owner);
        _made(LibClone.clone(implementation, abi.encode(owner, salt)), owner);
        pointer = SSTORE2.write(abi.encode(owner, salt));
    }

    function count() external view returns (uint256) {
        return accounts.length;
    }

    function _made(address account, address owner) private {
        Account(account).initialize(owner);
        accounts.push(account);
    }
}

// Its constructor returns raw bytes instead of its runtime code, as data-contract writers do.
contract RawBytes {
    constructor() {
        bytes memory data = "kept as code, never run";
        assembly {
            return(add(data, 32), mload(data))
        }
    }
}
