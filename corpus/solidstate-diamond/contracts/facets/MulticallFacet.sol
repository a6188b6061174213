// SPDX-License-Identifier: MIT
// The corpus's own: SolidState's Multicall (delegatecalls to the diamond itself) as one facet.
pragma solidity ^0.8.18;

import { Multicall } from '@solidstate/contracts/utils/Multicall.sol';

contract MulticallFacet is Multicall {}
