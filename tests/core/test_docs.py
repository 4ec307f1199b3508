"""The README and the docs pages link only to files that exist, the table of contents lists every
page, and every module, file and ``python -m`` command they name is in the checkout."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _links(page: Path) -> list[str]:
    return [target for target in LINK.findall(page.read_text(encoding="utf-8"))
            if "://" not in target and not target.startswith("mailto:")]


def test_every_relative_link_resolves() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = [f"{page.relative_to(ROOT)} -> {target}" for page in pages for target in _links(page)
              if not (page.parent / target).exists()]
    assert broken == []


def test_the_table_of_contents_lists_every_page() -> None:
    listed = set(_links(ROOT / "docs" / "README.md"))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"README.md"}
    assert pages - listed == set()


PATH = re.compile(r"(?<![\w./~<-])((?:agent/games|agent/core|agent/analyze|agent/cli|tests|benchmarks)/?[\w./<>*-]*)")
"""A file or folder of the checkout named in a page: agent/games/tangram/link/session.py, tests/tangram/sim/."""
CHECKED = (".py", ".yaml", ".j2", ".toml", ".txt", ".html", ".js", "/")
COMMAND = re.compile(r"python -m ((?:agent|tests|benchmarks)(?:\.\w+)*)")
DOTTED = re.compile(r"(?<![\w./])(agent(?:\.\w+){2,})")
PLACEHOLDER = re.compile(r"NAME|<|\*|(?:^|[./])[A-Z](?:$|[./])")


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _module_file(module: str) -> Path | None:
    """The file that ``module`` (dotted) is, or None when the checkout has no such module."""
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _defines(module: Path, name: str) -> bool:
    """``module`` defines or imports ``name`` at its top level (a function, class, constant or re-export)."""
    pattern = rf"^(?:async def |def |class ){name}\b|^{name}\s*[:=]|^from \S+ import .*\b{name}\b|^\s+{name},$"
    return re.search(pattern, module.read_text(encoding="utf-8"), re.MULTILINE) is not None


def test_every_path_named_in_the_docs_exists() -> None:
    missing = [f"{page.relative_to(ROOT)}: {path}" for page in _pages()
               for path in {p.rstrip(".,:;)") for p in PATH.findall(page.read_text(encoding="utf-8"))}
               if path.endswith(CHECKED) and not PLACEHOLDER.search(path) and not (ROOT / path).exists()]
    assert missing == []


def test_every_python_m_command_in_the_docs_names_a_runnable_module() -> None:
    missing = []
    for page in _pages():
        for module in set(COMMAND.findall(page.read_text(encoding="utf-8"))):
            if PLACEHOLDER.search(module):
                continue
            found = _module_file(module)
            runnable = found is not None and (found.name != "__init__.py" or (found.parent / "__main__.py").is_file())
            if not runnable:
                missing.append(f"{page.relative_to(ROOT)}: python -m {module}")
    assert missing == []


def test_every_dotted_module_named_in_the_docs_exists() -> None:
    """``agent.games.tangram.link.session`` or ``agent.games.tangram.planner.candidates.propose_candidates``:
    the longest prefix that is a module exists, and what follows it is defined there."""
    missing = []
    for page in _pages():
        for dotted in set(DOTTED.findall(page.read_text(encoding="utf-8"))):
            if PLACEHOLDER.search(dotted):
                continue
            parts = dotted.split(".")
            cut = next((n for n in range(len(parts), 1, -1) if _module_file(".".join(parts[:n]))), None)
            if cut is None:
                missing.append(f"{page.relative_to(ROOT)}: {dotted}")
                continue
            rest = parts[cut:]
            module = _module_file(".".join(parts[:cut]))
            assert module is not None
            if rest and not _defines(module, rest[0]):
                missing.append(f"{page.relative_to(ROOT)}: {dotted}")
    assert missing == []


CONFIG = re.compile(r"(?<![\w/])configs/([\w.*<>-]+\.ya?ml)")
"""A shipped config or study file named in a page: configs/gpt4o.yaml (configs/<game>*.yaml is a pattern)."""
FENCED = re.compile(r"^\s*```(\w*)\n(.*?)^\s*```", re.MULTILINE | re.DOTALL)
STUDY_COMMAND = re.compile(r"python -m agent study ((?:\w+\|)*\w+)([^;#|\n]*)")
"""``python -m agent study ACTION ARGS`` up to a comment, a pipe or the end of a sentence; an action may
be alternatives (``next|pause|resume|drop``)."""
STAND_INS = {"ID": "P01", "FILE": "study.yaml", "N": "40", "URL": "https://study.example.org"}


def test_every_config_named_in_the_docs_exists() -> None:
    missing = [f"{page.relative_to(ROOT)}: configs/{name}" for page in _pages()
               for name in set(CONFIG.findall(page.read_text(encoding="utf-8")))
               if not re.search(r"[*<]|\b[A-Z]{2,}\b", name) and not (ROOT / "configs" / name).is_file()]
    assert missing == []


def _code_lines() -> list[tuple[str, str]]:
    """Every line of the pages' fenced code blocks and of the shipped study files' comments, with where."""
    out = [(f"{page.relative_to(ROOT)}", line) for page in _pages()
           for _, block in FENCED.findall(page.read_text(encoding="utf-8")) for line in block.splitlines()]
    out += [(f"configs/{study.name}", line) for study in sorted((ROOT / "configs").glob("study*.yaml"))
            for line in study.read_text(encoding="utf-8").splitlines() if line.lstrip().startswith("#")]
    return out


def test_every_study_command_line_in_the_docs_parses() -> None:
    """``python -m agent study ...`` as the pages and the example studies write it, placeholders filled in:
    every subcommand takes the study file as ``--study FILE``."""
    from agent.study_cli import _parser

    seen, refused = 0, []
    for where, line in _code_lines():
        for actions, rest in STUDY_COMMAND.findall(line):
            words = [STAND_INS.get(w, w) for w in rest.replace("[", " ").replace("]", " ").split()]
            for action in actions.split("|"):
                seen += 1
                try:
                    args = _parser().parse_args([action, *words])
                except SystemExit:
                    refused.append(f"{where}: python -m agent study {action} {' '.join(words)}")
                    continue
                if args.study is None:
                    refused.append(f"{where}: {line.strip()} (no --study)")
    assert refused == []
    assert seen >= 20  # the pages' commands were found


def test_the_study_files_in_the_docs_load(tmp_path: Path) -> None:
    """Each study file a page shows (a ``yaml`` block with a ``design:``) loads and validates as written."""
    from agent.games import read_study

    shown = [(page, textwrap.dedent(block)) for page in _pages()
             for kind, block in FENCED.findall(page.read_text(encoding="utf-8"))
             if kind == "yaml" and re.search(r"^\s*design:", block, re.MULTILINE)]
    assert {page.name for page, _ in shown} >= {"study.md", "online-study.md"}
    for i, (_, text) in enumerate(shown):
        path = tmp_path / f"study{i}.yaml"
        path.write_text(text, encoding="utf-8")
        assert read_study(path).conditions


def test_the_online_example_study_loads_and_says_who_must_be_at_the_console() -> None:
    """configs/study-online-example.yaml: a within-subject online study with every part of an online
    section, the LLM conditions priced for its spend caps, and a Wizard-of-Oz condition that says, in
    the file, that someone must be at the console."""
    from agent.core.studies.pricing import configured_price, missing_prices
    from agent.games import read_study

    path = ROOT / "configs" / "study-online-example.yaml"
    study = read_study(path)
    assert study.plan.design == "within" and len(study.plan.sequences) == 2 * len(study.conditions) == 6
    online = study.online
    assert online is not None and online.recruitment == "invite" and online.consent
    assert online.completion_code and online.completion_url and online.completion_code in online.completion_url
    assert online.base_url == "https://study.example.org" and online.on_leave in ("keep", "drop")
    assert online.spend_cap_participant_usd and online.spend_cap_study_usd
    llm = [c for c in study.conditions if c.config.uses_llm()]
    assert llm and all(configured_price(c.config) is not None for c in llm) and missing_prices(study) is None
    assert [c.name for c in study.conditions if c.console == "wizard"] == ["wizard"]
    assert "someone must be at the experimenter console" in path.read_text(encoding="utf-8")
    assert "Finish" in online.consent and "continue" in online.consent  # how a game ends, for the participant


def test_games_md_lists_every_module_and_room_of_the_core() -> None:
    text = (ROOT / "docs" / "games.md").read_text(encoding="utf-8")
    listing = text[text.index("  core/ "):text.index("  games/\n")]
    named = set(re.findall(r"^    (\w+(?:\.py|/))", listing, re.MULTILINE))
    core = {p.name + ("/" if p.is_dir() else "") for p in (ROOT / "agent" / "core").iterdir()
            if p.name != "__init__.py" and not p.name.startswith((".", "__pycache__"))}
    assert named == core
