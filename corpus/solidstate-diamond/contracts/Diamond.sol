// SPDX-License-Identifier: MIT
// The corpus's own: the package's reference diamond is abstract; a user's diamond is this.
pragma solidity ^0.8.18;

import { SolidStateDiamond } from '@solidstate/contracts/proxy/diamond/SolidStateDiamond.sol';

contract Diamond is SolidStateDiamond {}
