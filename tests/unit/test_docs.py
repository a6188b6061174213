"""The documents hold what the code does: README.md documents every `contract_verify:` key with its
default, every `ape verify` command and option, and every outcome a row can end with;
ape-config.example.yaml has every key once, with its default, and validates; every document the
code cites is in the repository and every relative link resolves; benchmarks/README.md has every
benchmark. A key, option, outcome or benchmark added without its documentation fails here."""

import re
from enum import Enum
from pathlib import Path

import click
import pytest
import yaml

from ape_contract_verify.config import ContractVerifyConfig, ExplorerConfig, TargetConfig
from ape_contract_verify.protocol.answers import Outcome
from support import REPO

README = REPO / "README.md"
NETWORK = "explorers.<ecosystem>.<network>"


def section(title: str, path: Path = README) -> str:
    text = path.read_text()
    assert text.count(f"\n## {title}\n") == 1, f"{path.name} has one section '## {title}'"
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def table_rows(text: str) -> dict[str, list[str]]:
    """First cell (backticks stripped) -> the row's cells, for every table row of `text`."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells
    return rows


def as_yaml(value) -> str:
    """A default as ape-config.yaml spells it."""
    if isinstance(value, Enum):
        value = value.value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "{}" if value == {} else str(value)


def documented_keys() -> dict[str, object]:
    """Every key a user can write, with its default: the section's, a network's, a named target's."""
    keys = {name: field.default for name, field in ContractVerifyConfig.model_fields.items()}
    keys |= {f"{NETWORK}.{name}": field.default for name, field in ExplorerConfig.model_fields.items()}
    keys |= {f"{NETWORK}.<target>.{name}": field.default for name, field in TargetConfig.model_fields.items()}
    return keys


def test_every_config_key_is_documented_with_its_default():
    rows = table_rows(section("Configuration"))
    for key, default in documented_keys().items():
        assert key in rows, f"README's Configuration section has no row for `{key}`"
        assert rows[key][1] == f"`{as_yaml(default)}`", (
            f"`{key}`: documented default {rows[key][1]}, the code's {as_yaml(default)}"
        )
        assert len(rows[key]) == 3 and rows[key][2], f"`{key}` says what it does"
    # And no row documents a key the code does not have (a renamed or dropped one).
    config_rows = {key for key, cells in rows.items() if len(cells) == 3 and cells[1].startswith("`") and key != "key"}
    stale = config_rows - set(documented_keys())
    assert not stale, f"README documents keys the config has not: {sorted(stale)}"


class _UniqueKeys(yaml.SafeLoader):
    """A YAML loader that refuses a key written twice in one mapping (PyYAML keeps the last)."""


def _unique_mapping(loader, node, deep=False):
    keys = [loader.construct_object(key, deep=deep) for key, _ in node.value]
    twice = sorted({str(key) for key in keys if keys.count(key) > 1})
    assert not twice, f"ape-config.example.yaml line {node.start_mark.line + 1}: {twice} written twice"
    return loader.construct_mapping(node, deep)


_UniqueKeys.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def test_the_example_config_has_every_key_once_with_its_default():
    section_ = yaml.load((REPO / "ape-config.example.yaml").read_text(), Loader=_UniqueKeys)["contract_verify"]
    fields = ContractVerifyConfig.model_fields
    assert set(section_) == set(fields)
    for name, field in fields.items():
        if name != "explorers":  # the example's explorers show each key; the default has none
            assert as_yaml(section_[name]) == as_yaml(field.default), name
    config = ContractVerifyConfig.model_validate(section_)
    for ecosystem, networks in config.explorers.items():
        for network, explorer in networks.items():
            explorer.named_targets(f"contract_verify.explorers.{ecosystem}.{network}.")  # raises on a bad entry
    sepolia = section_["explorers"]["ethereum"]["sepolia"]
    written = set(sepolia) | {key for value in sepolia.values() if isinstance(value, dict) for key in value}
    assert set(ExplorerConfig.model_fields) | set(TargetConfig.model_fields) <= written


def test_the_duplicate_key_check_catches_a_key_written_twice():
    with pytest.raises(AssertionError, match="written twice"):
        yaml.load("contract_verify:\n  explorer: true\n  explorer: false\n", Loader=_UniqueKeys)


def test_every_command_and_option_is_documented():
    from ape_contract_verify.cli import cli

    text = section("Commands")
    shared = next(p for p in text.split("\n\n") if p.strip().startswith("All but `serve` take"))
    rows = table_rows(text)
    for name, command in cli.commands.items():
        own = " ".join(
            " | ".join(cells)
            for first, cells in rows.items()
            if first == name or first.startswith(f"ape verify {name}")
        )
        assert own, f"README's Commands section has no row for `ape verify {name}`"
        where = own if name == "serve" else own + " " + shared
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                tokens = [re.escape(opt) for opt in param.opts]
                assert re.search(rf"(?<![\w-])({'|'.join(tokens)})(?![\w-])", where), (
                    f"`ape verify {name}` {param.opts[0]} is not documented"
                )


def test_every_outcome_is_explained():
    rows = table_rows(section("Troubleshooting"))
    for outcome in Outcome:
        assert outcome.value in rows and all(rows[outcome.value][1:]), (
            f"Troubleshooting has no row for `{outcome.value}`"
        )


def _cited_documents() -> set[tuple[Path, str]]:
    cited = set()
    for folder in ("ape_contract_verify", "tests", "benchmarks"):
        for source in (REPO / folder).rglob("*.py"):
            for name in re.findall(r"(?<![\w/.-])((?:\.\./)*[\w./-]+\.md)\b", source.read_text()):
                cited.add((source, name))
    return cited


def test_every_document_the_code_cites_is_in_the_repository():
    cited = _cited_documents()
    assert any(name == "docs/explorer-behaviour.md" for _, name in cited)  # the scan sees citations
    for source, name in cited:
        found = (REPO / name).exists() if "/" in name else (REPO / "docs" / name).exists() or (REPO / name).exists()
        assert found, f"{source.relative_to(REPO)} cites {name}, which is not in the repository"
    outside = "/".join(("shared", "spec"))  # the specification's folder outside the repository
    for folder in ("ape_contract_verify", "tests", "benchmarks"):
        for source in (REPO / folder).rglob("*.py"):
            assert outside not in source.read_text(), f"{source.relative_to(REPO)} cites a file outside the repository"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_relative_link_resolves():
    documents = [
        README,
        REPO / "CHANGELOG.md",
        REPO / "benchmarks" / "README.md",
        *sorted((REPO / "docs").glob("*.md")),
    ]
    for document in documents:
        for target in re.findall(r"\]\(([^)\s]+)\)", document.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (document.parent / path).resolve() if path else document
            assert linked.exists(), f"{document.relative_to(REPO)} links to {target}, which does not exist"
            if anchor and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", linked.read_text(), re.M)
                assert anchor in {_slug(h) for h in headings}, (
                    f"{document.relative_to(REPO)} links to #{anchor}, no heading of {linked.name}"
                )


def test_the_benchmarks_readme_has_every_benchmark():
    text = (REPO / "benchmarks" / "README.md").read_text()
    rows = table_rows(text)
    for bench in sorted((REPO / "benchmarks").glob("bench_*.py")):
        assert bench.name in rows, f"benchmarks/README.md has no row for {bench.name}"
