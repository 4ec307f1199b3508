"""How many lines of tests/tangram/planner/chat_phrasings.yaml the offline player answers right.

A line is right when the reply is of an expected kind (when the planner reports kinds), is not the
stock help line unless that is expected, holds the words it must and none it must not, says nothing
false of owners or counts, does not promise to place a piece already on the board, and leaves the
figure the table expects. It runs on whichever tree it is started in (the current directory comes
first on the import path), so an older checkout is measured the same way, without the kind check::

    python -m benchmarks.tangram.bench_chat_phrasings
    cd /tmp/old-tree && python CHECKOUT/benchmarks/tangram/bench_chat_phrasings.py \\
        --table CHECKOUT/tests/tangram/planner/chat_phrasings.yaml

It prints each wrong line with what is wrong, then "N of M lines answered right".
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path.cwd()))

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.planner import Planner, load_library

TABLE = Path(__file__).resolve().parents[2] / "tests" / "tangram" / "planner" / "chat_phrasings.yaml"
PIECES = "Red|Cream|Blue|Green|Yellow|Purple|Brown"
HELP_LINE = "Try 'what's next?'"


def scenario(name: str, library: Any) -> tuple[Planner, str, dict[str, Pose], dict[str, str]]:
    """The games of the table: see its header."""
    objective = {"fish": "A fish", "empty": "A house", "done": "A house"}[name]
    planner = Planner(library)
    board: dict[str, Pose] = {}
    movers: dict[str, str] = {}
    for _ in range({"fish": 2, "empty": 0, "done": 7}[name]):
        d = planner.play(objective, board)
        assert d.pose is not None
        board[d.pose.piece] = d.pose
        movers[d.pose.piece] = "agent"
    if name == "fish":
        board["Purple"] = Pose("Purple", 88.0, 88.0, 0.0)
        movers["Purple"] = "partner"
    return planner, objective, board, movers


def problems(planner: Planner, board: dict[str, Pose], movers: dict[str, str], reply: str,
             row: dict[str, Any]) -> list[str]:
    out = []
    fit = planner.fit(board, commit=False)
    if HELP_LINE in reply and "fallback" not in row["kind"]:
        out.append("stock help line")
    out += [f"missing {w!r}" for w in row.get("says", []) if w.lower() not in reply.lower()]
    out += [f"says {w!r}" for w in row.get("never", []) if w.lower() in reply.lower()]
    for m in re.finditer(rf"\b(your|my) ({PIECES})\b", reply):
        if movers.get(m.group(2)) != ("partner" if m.group(1) == "your" else "agent"):
            out.append(f"{m.group(0)} is wrong")
    for m in re.finditer(r"\b(\d) of 7 pieces (?:are )?in place", reply):
        if int(m.group(1)) != len(fit.matched):
            out.append("wrong count")
    for m in re.finditer(rf"I'll place ({PIECES})\b", reply):
        if m.group(1) in board:
            out.append(f"promises to place {m.group(1)}, already on the board")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=TABLE)
    args = parser.parse_args()
    table = yaml.safe_load(args.table.read_text(encoding="utf-8"))
    library = load_library()
    kinds = "movers" in inspect.signature(Planner.chat).parameters  # this tree reports reply kinds

    def say(planner: Planner, objective: str, board: dict[str, Pose], movers: dict[str, str], line: str) -> str:
        if kinds:
            return planner.chat(objective, board, line, movers)
        return planner.chat(objective, board, line)

    right = 0
    for row in table:
        planner, objective, board, movers = scenario(row["scenario"], library)
        reply = say(planner, objective, board, movers, row["say"])
        bad = problems(planner, board, movers, reply, row)
        if kinds and getattr(planner, "last_reply_kind", "") not in row["kind"]:
            bad.append(f"kind {getattr(planner, 'last_reply_kind', '')}")
        follow = row.get("then")
        if follow is not None:
            again = say(planner, objective, board, movers, follow["say"])
            bad += problems(planner, board, movers, again, follow)
        if "figure" in row and planner.figure.name != row["figure"]:
            bad.append(f"builds {planner.figure.name}, not {row['figure']}")
        if bad:
            print(f"wrong: {row['say']!r}: {'; '.join(bad)} :: {reply}")
        else:
            right += 1
    print(f"{right} of {len(table)} lines answered right ({'kinds checked' if kinds else 'kinds not reported'})")


if __name__ == "__main__":
    main()
