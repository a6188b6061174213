"""A compiler's error output said in one line each, fit for a verification's reason; never a file it was not given."""

from __future__ import annotations

import re

from ape_contract_verify.engine.compiler_output import CompilerMessage, CompilerOutput
from ape_contract_verify.engine.versions import CompilerCrashed, CompilerFailed
from ape_contract_verify.protocol.inputs import CompilerInput


def raise_on_errors(output: CompilerOutput, input_json: CompilerInput, what: str) -> None:
    errors = [e for e in output.get("errors") or [] if str(e.get("severity", "error")).lower() == "error"]
    if not errors:
        return
    submitted = set((input_json.get("sources") or {}).keys())
    messages = []
    for error in errors[:3]:
        file = (error.get("sourceLocation") or {}).get("file")
        if file and submitted and file not in submitted and not file.startswith("<"):
            # Never echo text of a file the submission did not include.
            messages.append(f"{error.get('type', 'Error')} in {file}, which the submitted sources do not include")
        else:
            messages.append(one_line(error, input_json))
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    crashed = any(
        e.get("type") == "InternalCompilerError" or "Compiled contract not found" in str(e.get("message"))
        for e in errors
    )
    raise (CompilerCrashed if crashed else CompilerFailed)(f"{what} reported errors{more}: " + " | ".join(messages))


def one_line(error: CompilerMessage, input_json: CompilerInput) -> str:
    """`ParserError: Expected ';' but got '}' --> File.sol:12:5`: one line, fit for a status text."""
    message = str(error.get("message") or error.get("formattedMessage") or error).strip().replace("\n", " ")
    text = f"{error.get('type', 'Error')}: {message}"
    location = error.get("sourceLocation") or {}
    file, start = location.get("file"), location.get("start")
    if file:
        content = ((input_json.get("sources") or {}).get(file) or {}).get("content")
        if isinstance(content, str) and isinstance(start, int) and 0 <= start <= len(content):
            line = content.count("\n", 0, start) + 1
            column = start - (content.rfind("\n", 0, start) + 1) + 1
            return f"{text} --> {file}:{line}:{column}"
        vyper_line = re.search(r"line (\d+):(\d+)", str(error.get("formattedMessage") or ""))
        return f"{text} --> {file}" + (f":{vyper_line.group(1)}:{vyper_line.group(2)}" if vyper_line else "")
    return text
