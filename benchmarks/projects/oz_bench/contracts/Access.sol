// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "@openzeppelin/contracts/access/Ownable2Step.sol";
import "@openzeppelin/contracts/access/extensions/AccessControlEnumerable.sol";

contract OwnedBox is Ownable2Step {
    uint256 public value;

    constructor(address owner_, uint256 value_) Ownable(owner_) {
        value = value_;
    }

    function set(uint256 value_) external onlyOwner {
        value = value_;
    }
}

contract RoleBox is AccessControlEnumerable {
    bytes32 public constant WRITER = keccak256("WRITER");
    uint256 public value;

    constructor(address admin) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    function set(uint256 value_) external onlyRole(WRITER) {
        value = value_;
    }
}
