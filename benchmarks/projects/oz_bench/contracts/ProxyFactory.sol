// SPDX-License-Identifier: MIT
pragma solidity ^0.8.22;

import {ERC1967Proxy} from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol";
import {BeaconProxy} from "@openzeppelin/contracts/proxy/beacon/BeaconProxy.sol";
import {UpgradeableBeacon} from "@openzeppelin/contracts/proxy/beacon/UpgradeableBeacon.sol";
import {TransparentUpgradeableProxy} from "@openzeppelin/contracts/proxy/transparent/TransparentUpgradeableProxy.sol";

/// Creates proxies with `new`: its creation code embeds theirs, metadata and all.
contract ProxyFactory {
    event Created(address proxy);

    function uups(address implementation, bytes calldata data) external returns (address proxy) {
        proxy = address(new ERC1967Proxy(implementation, data));
        emit Created(proxy);
    }

    function transparent(address implementation, bytes calldata data) external returns (address proxy) {
        proxy = address(new TransparentUpgradeableProxy(implementation, msg.sender, data));
        emit Created(proxy);
    }

    function beacon(address implementation) external returns (address beacon_, address proxy) {
        beacon_ = address(new UpgradeableBeacon(implementation, msg.sender));
        proxy = address(new BeaconProxy(beacon_, ""));
        emit Created(proxy);
    }
}
