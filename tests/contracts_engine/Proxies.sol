// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Tiny proxies, one per storage pattern; each forwards every call with DELEGATECALL.
abstract contract Forwarder {
    function _impl() internal view virtual returns (address);

    fallback() external payable {
        address impl = _impl();
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), impl, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }
}

contract SlotProxy is Forwarder {
    bytes32 private immutable slot;

    constructor(bytes32 slot_, address impl) {
        slot = slot_;
        assembly { sstore(slot_, impl) }
    }

    function _impl() internal view override returns (address impl) {
        bytes32 s = slot;
        assembly { impl := sload(s) }
    }
}

contract Beacon {
    address public implementation;

    constructor(address impl) {
        implementation = impl;
    }
}

contract BeaconProxy is Forwarder {
    // bytes32(uint256(keccak256("eip1967.proxy.beacon")) - 1)
    bytes32 private constant BEACON_SLOT = 0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50;

    constructor(address beacon) {
        assembly { sstore(BEACON_SLOT, beacon) }
    }

    function _impl() internal view override returns (address) {
        address beacon;
        assembly { beacon := sload(BEACON_SLOT) }
        return Beacon(beacon).implementation();
    }
}

/// Gnosis Safe style: the implementation ("masterCopy") sits in storage slot 0.
contract MasterCopyProxy is Forwarder {
    address internal masterCopy;

    constructor(address impl) {
        masterCopy = impl;
    }

    function _impl() internal view override returns (address) {
        return masterCopy;
    }
}

contract Target {
    uint256 public number;

    function setNumber(uint256 n) external {
        number = n;
    }
}
