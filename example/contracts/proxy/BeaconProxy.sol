// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IBeacon {
    function implementation() external view returns (address);
}

/// An EIP-1967 beacon proxy: the beacon lives in the slot
/// bytes32(uint256(keccak256("eip1967.proxy.beacon")) - 1).
contract BeaconProxy {
    bytes32 internal constant BEACON_SLOT =
        0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50;

    event BeaconUpgraded(address indexed beacon);

    constructor(address beacon, bytes memory data) payable {
        assembly {
            sstore(BEACON_SLOT, beacon)
        }
        emit BeaconUpgraded(beacon);
        if (data.length > 0) {
            (bool ok, bytes memory reason) = IBeacon(beacon).implementation().delegatecall(data);
            if (!ok) {
                assembly {
                    revert(add(reason, 32), mload(reason))
                }
            }
        }
    }

    fallback() external payable {
        address impl = IBeacon(_beacon()).implementation();
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), impl, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }

    receive() external payable {}

    function _beacon() private view returns (address beacon) {
        assembly {
            beacon := sload(BEACON_SLOT)
        }
    }
}
