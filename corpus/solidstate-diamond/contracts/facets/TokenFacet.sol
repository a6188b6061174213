// SPDX-License-Identifier: MIT
// The corpus's own: SolidState's ERC-20 (base, extended, metadata, permit) as one facet.
pragma solidity ^0.8.18;

import { SolidStateERC20 } from '@solidstate/contracts/token/ERC20/SolidStateERC20.sol';

contract TokenFacet is SolidStateERC20 {}
