// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {UUPSUpgradeable} from "@openzeppelin/contracts/proxy/utils/UUPSUpgradeable.sol";
import {Initializable} from "@openzeppelin/contracts/proxy/utils/Initializable.sol";
import {ERC1967Proxy} from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import {EnumerableSet} from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";

/// A UUPS implementation behind an ERC1967Proxy of its own.
contract Vault is Initializable, UUPSUpgradeable, ReentrancyGuard {
    using SafeERC20 for IERC20;
    using EnumerableSet for EnumerableSet.AddressSet;

    address public owner;
    bytes32 public root;
    EnumerableSet.AddressSet private claimed;

    function initialize(address owner_, bytes32 root_) external initializer {
        owner = owner_;
        root = root_;
    }

    function claim(IERC20 token, uint256 amount, bytes32[] calldata proof) external nonReentrant {
        bytes32 leaf = keccak256(abi.encodePacked(msg.sender, amount));
        require(MerkleProof.verify(proof, root, leaf), "bad proof");
        require(claimed.add(msg.sender), "claimed");
        token.safeTransfer(msg.sender, amount);
    }

    function _authorizeUpgrade(address) internal view override {
        require(msg.sender == owner, "owner");
    }
}

contract VaultProxy is ERC1967Proxy {
    constructor(address implementation, bytes memory data) ERC1967Proxy(implementation, data) {}
}

contract PausableBox is Ownable, Pausable {
    uint256 public value;

    constructor(address owner_) Ownable(owner_) {}

    function set(uint256 value_) external onlyOwner whenNotPaused {
        value = value_;
    }
}
