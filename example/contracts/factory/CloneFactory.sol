// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IBox {
    function initialize(uint256 initialValue, address admin_) external;
}

/// Makes EIP-1167 minimal proxies (clones) of a Box, with CREATE and with CREATE2.
contract CloneFactory {
    address public immutable implementation;

    event CloneCreated(address indexed clone, bytes32 salt);

    constructor(address implementation_) {
        implementation = implementation_;
    }

    function clone(uint256 initialValue) external returns (address instance) {
        instance = _deploy(bytes32(0), false);
        IBox(instance).initialize(initialValue, msg.sender);
        emit CloneCreated(instance, bytes32(0));
    }

    function cloneDeterministic(bytes32 salt, uint256 initialValue) external returns (address instance) {
        instance = _deploy(salt, true);
        IBox(instance).initialize(initialValue, msg.sender);
        emit CloneCreated(instance, salt);
    }

    function _deploy(bytes32 salt, bool deterministic) private returns (address instance) {
        // 363d3d373d3d3d363d73 <implementation> 5af43d82803e903d91602b57fd5bf3, behind a 10-byte creation prefix.
        bytes memory code = abi.encodePacked(
            hex"3d602d80600a3d3981f3363d3d373d3d3d363d73",
            implementation,
            hex"5af43d82803e903d91602b57fd5bf3"
        );
        assembly {
            switch deterministic
            case 0 { instance := create(0, add(code, 32), mload(code)) }
            default { instance := create2(0, add(code, 32), mload(code), salt) }
        }
        require(instance != address(0), "CloneFactory: deploy failed");
    }
}
