// SPDX-License-Identifier: MIT
// import "./Missing1.sol";
/* import "./Missing2.sol";
   pragma solidity 0.4.26; */
pragma solidity ^0.8.20; // pragma solidity ^0.5.0;

import "./Helper.sol"; // import "./Missing3.sol";

string constant BANNER = "import \"./Missing4.sol\"; pragma solidity ^0.4.0; // SPDX-License-Identifier: GPL";

/// @notice The word import, 'pragma' and "strings" in docs stay as they are.
contract Tricky is Helper {
    // SPDX-License-Identifier: WTFPL (inside a contract: not a licence, kept)
    string public constant single = 'import "./Missing5.sol";';

    function banner() external pure returns (string memory) {
        /* pragma abicoder v1; */
        return string.concat(BANNER, single, "/* not a comment */", helper());
    }
}
