// SPDX-License-Identifier: MIT
// The corpus's own: SolidState's role-based access control as one facet.
pragma solidity ^0.8.18;

import { AccessControl } from '@solidstate/contracts/access/access_control/AccessControl.sol';

contract AccessControlFacet is AccessControl {}
