"""Two participants play an online study with the real game at once, in two headless Chromium pages,
through Caddy with TLS (``tls internal``), as docs/online-study.md sets it up.

    .venv/bin/python -m benchmarks.tangram.real_game.online --gaips DIR --template DIR [--turns 2] [--out DIR]

The agent serves a two-condition study (``python -m agent --study ... --public ... --trusted-proxy``);
two invitation links are made; each page opens its link, agrees on the consent page, and plays each of
its games as the scripted human of the real-game runner (a piece dragged, End Turn, the AI's turn seen
through, ``--turns`` times; then Finish, five stars on the closing form and its Submit, which quits the
engine; the game's current sources hide the form's stars, so Submit stays grey and the page's Continue
ends the game); the page then starts the next game, and after the last shows the completion code. Prints
each participant's conditions in order, whether they saw the code, and the study's participants and
games tables, and first what a third participant's browser downloads (first visit, reload; on the agent's
own address: Chromium caches nothing from a site whose certificate it does not trust). Needs the game's
sources and a Godot 4 web template (never in the repository) and Caddy.

With ``--questionnaires`` it serves the online example study's questionnaires and flow
(configs/study-online-example.yaml, its three conditions played by the offline planner) to three
participants (PERSONAS): consent, the first questionnaire, each game and the page after it, the final
page, the code. One answers in Portuguese (``lang=pt`` in the link); one reloads in the middle of its
first after-game page once the server has the draft, finds its answers and fails every attention
check, so it gets the screen-out code. What each browser entered (answering.py) is compared with the
study's export and the data package is validated with frictionless (exported.py); it ends with a
summary and PASS or FAIL (exit status 1).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import socket
import sqlite3
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import yaml

from agent.core.studies.questionnaires import Questionnaires
from benchmarks.tangram.real_game.answering import Answered, Persona, answer_page
from benchmarks.tangram.real_game.browser import CHROMIUM, CHROMIUM_ARGS, Recorder, StepTimeout, socket_hook
from benchmarks.tangram.real_game.events import EventLog, ImageStore
from benchmarks.tangram.real_game.exported import export_and_check, verdict
from benchmarks.tangram.real_game.human import Human
from benchmarks.tangram.real_game.plan import plan
from benchmarks.tangram.real_game.runner import play_game
from benchmarks.tangram.real_game.screen import HEIGHT, WIDTH, Button

STUDY = """name: real-online
design: within
conditions:
  explain: {{config: planner.yaml}}
  silent: {{config: planner.yaml, overrides: {{turn: {{thinking_line: false}}}}}}
online:
  consent: "A real-game check of the online study."
  completion_code: REAL0NE
"""
# The closing form (forms.tscn, at the scene's origin): the fifth star's Area2D and the Submit button.
STAR_5 = Button("five stars", 686.0 - 12.0, 154.0 - 30.0, 24.0, 24.0)
SUBMIT = Button("Submit", 445.0 + 15.0, 393.0 - 6.0, 229.5, 89.8)
READY = "served on http://"
EXAMPLE = Path(__file__).resolve().parents[3] / "configs" / "study-online-example.yaml"
PERSONAS = (Persona("L0001"), Persona("L0002", language="pt"),
            Persona("L0003", fail_checks=True, reload_page="partner"))
"""``--questionnaires``: one answers in English, one in Portuguese (the link's lang=pt), one reloads in the
middle of its first after-game page and fails every attention check (screened out)."""


def questionnaire_study(example: Path = EXAMPLE) -> str:
    """The online example study (its consent, codes, languages, attention rule, questionnaires and
    flow as they are) with its three conditions played by the offline planner, so no LLM key and
    nobody at the console is needed; its Prolific addresses are left out (the page would leave for
    them after the code)."""
    data = yaml.safe_load(example.read_text(encoding="utf-8"))
    data["name"] = "real-online-questionnaires"
    data["conditions"] = {
        "explain": {"config": "planner.yaml", "description": "the planner, with the thinking line"},
        "silent": {"config": "planner.yaml", "overrides": {"turn": {"thinking_line": False}},
                   "description": "the planner without the thinking line"},
        "offline": {"config": "planner.yaml", "description": "the planner again, a third partner"},
    }
    for key in ("completion_url", "screen_out_url", "base_url"):
        data["online"].pop(key, None)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)


class FramePage:
    """What the scripted human needs of a page, for a game that runs in the participant page's frame
    (full-window at the top left, so the page's mouse reaches the same points)."""

    def __init__(self, page: Any, frame: Any) -> None:
        self.page = page
        self.frame = frame
        self.mouse = page.mouse
        self.keyboard = page.keyboard

    async def evaluate(self, script: str, *args: Any) -> Any:
        return await self.frame.evaluate(script, *args)

    async def screenshot(self, **kwargs: Any) -> Any:
        return await self.page.screenshot(**kwargs)

    async def reload(self, **kwargs: Any) -> Any:
        return await self.page.reload(**kwargs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def agent(out: Path, gaips: Path, template: Path, study: str = STUDY.format()) -> AsyncIterator[str]:
    (out / "planner.yaml").write_text(f"player: planner\ntranscripts: {{dir: {out / 'transcripts'}}}\n")
    (out / "study.yaml").write_text(study, encoding="utf-8")
    log = (out / "agent.log").open("w")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent", "--study", str(out / "study.yaml"), "--browser-game", str(gaips),
        "--godot-web", str(template), "--public", "127.0.0.1:0", "--trusted-proxy", "127.0.0.1",
        "--log-level", "INFO", stderr=asyncio.subprocess.PIPE)
    assert proc.stderr is not None
    try:
        async with asyncio.timeout(300):
            while True:
                line = (await proc.stderr.readline()).decode()
                if not line:
                    raise SystemExit(f"the agent stopped: see {out / 'agent.log'}")
                log.write(line)
                if READY in line:
                    break
        pump = asyncio.create_task(_pump(proc.stderr, log))
        yield line.split(READY, 1)[1].split("/", 1)[0]
    finally:
        proc.terminate()
        await proc.wait()
        with contextlib.suppress(Exception):
            await pump
        log.close()


async def _pump(stream: asyncio.StreamReader, log: Any) -> None:
    while line := await stream.readline():
        log.write(line.decode(errors="replace"))
        log.flush()


@contextlib.asynccontextmanager
async def caddy(out: Path, upstream: str) -> AsyncIterator[str]:
    binary = shutil.which("caddy")
    if binary is None:
        raise SystemExit("caddy is not installed (apt-get install caddy)")
    https_port, http_port = free_port(), free_port()
    (out / "Caddyfile").write_text(
        f"{{\n\tadmin off\n\tskip_install_trust\n\tstorage file_system {out / 'caddy'}\n\thttp_port {http_port}\n"
        f"\thttps_port {https_port}\n}}\n\nlocalhost:{https_port} {{\n\ttls internal\n\treverse_proxy {upstream}\n}}\n")
    proc = await asyncio.create_subprocess_exec(binary, "run", "--config", str(out / "Caddyfile"), "--adapter",
                                                "caddyfile", stdout=(out / "caddy.log").open("w"),
                                                stderr=asyncio.subprocess.STDOUT,
                                                env={"HOME": str(out), "PATH": "/usr/bin:/bin"})
    try:
        async with asyncio.timeout(30):
            while True:
                with contextlib.suppress(OSError):
                    _, writer = await asyncio.open_connection("127.0.0.1", https_port)
                    writer.close()
                    break
                await asyncio.sleep(0.2)
        yield f"https://localhost:{https_port}"
    finally:
        proc.terminate()
        await proc.wait()


STAGE = """played => {
  if (document.getElementById('completion-code')) return 'done';
  const form = document.getElementById('page');
  if (form && !form.dataset.answered && form.querySelector('fieldset.item')) return 'questionnaire';
  const frame = document.getElementById('game');
  if (frame && !frame.hidden && frame.src.includes('/play#') && !played.includes(frame.src)) return 'game';
  return null;
}"""
"""What the participant's page shows now: a questionnaire page not answered yet, a game not played
yet, or the completion (or screen-out) code; null while it changes."""


async def stage(page: Any, played: list[str], timeout_s: float) -> str:
    try:
        handle = await page.wait_for_function(STAGE, arg=played, timeout=timeout_s * 1000, polling=250)
    except Exception as exc:
        shown = ""
        with contextlib.suppress(Exception):
            shown = (await page.locator("#card").inner_text(timeout=2000))[:300]
        raise StepTimeout(f"waited {timeout_s:.0f} s for the next page, a game or the code; the page shows: "
                          f"{shown!r}") from exc
    return str(await handle.json_value())


async def participant(browser: Any, link: str, persona: Persona, out: Path, turns: int, step_s: float,
                      turn_timeout: float, q: Questionnaires | None = None,
                      answered: Answered | None = None) -> dict[str, Any]:
    """One participant's whole visit: consent, each questionnaire page (``q``; answered as
    ``persona`` says, into ``answered``) and each game, until the completion or screen-out code."""
    name = persona.name
    answered = answered if answered is not None else Answered()
    context = await browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, ignore_https_errors=True)
    await context.add_init_script(socket_hook(None))
    page = await context.new_page()
    rec = Recorder(EventLog(out / f"{name}-events.jsonl"), ImageStore(None, 0))
    rec.on_page(page)
    games = 0
    continued: list[int] = []
    pages: list[str] = []
    played: list[str] = []
    failure = None
    try:
        await page.goto(link, timeout=step_s * 1000)
        since = rec.cursor
        await page.locator("#buttons button.primary").click(timeout=step_s * 1000)  # agree, in any language
        while True:
            now = await stage(page, played, step_s * 3)
            if now == "done":
                break
            if now == "questionnaire":
                if q is None:
                    raise StepTimeout("a questionnaire page in a study without questionnaires")
                since = rec.cursor
                pages.append(await answer_page(page, q, persona, games, answered, step_s))
                continue
            played.append(await page.locator("#game").get_attribute("src") or "")
            await rec.until(lambda e: e.src == "console" and e.text.startswith("[runner] websocket open"), since,
                            step_s * 3, "the game's socket to open")
            frame = page.frame_locator("#game")
            await frame.locator("canvas").wait_for(timeout=step_s * 1000)
            game_frame = next(f for f in page.frames if f.url.endswith("/play") or "/play#" in f.url)
            human = Human(FramePage(page, game_frame), rec, out / f"{name}-shots", step_s)
            await human.find_canvas()
            await play_game(human, rec, plan(turns, None), turn_timeout, games + 1)
            await human.click(STAR_5)
            await human.click(SUBMIT)
            # The form's stars are hidden in the game's current sources, so Submit stays grey and the
            # engine never quits: the participant's page offers Continue instead (docs/online-study.md).
            since = rec.cursor
            with contextlib.suppress(Exception):
                await page.locator("#continue").click(timeout=10_000)
            with contextlib.suppress(Exception):  # the click may land and still raise (its frame leaves the game)
                await page.wait_for_function("src => document.getElementById('game').src !== src", arg=played[-1],
                                             timeout=10_000)
                continued.append(games + 1)
            games += 1
        code = await page.locator("#completion-code").text_content()
    except (StepTimeout, TimeoutError, Exception) as exc:  # a failed step is reported, not raised
        failure = f"{type(exc).__name__}: {exc}"
        code = None
        with contextlib.suppress(Exception):
            await page.screenshot(path=str(out / f"{name}-failed.png"))
    finally:
        await context.close()
    return {"participant": name, "games_played": games, "ended_by_continue": continued, "pages": pages,
            "completion_code": code, "failure": failure}


async def downloaded(pw: Any, link: str, profile: Path, step_s: float) -> tuple[int, int]:
    """Bytes a participant's browser downloads (on the wire: compressed, headers included) until the
    game's socket opens: at the first visit, and at a reload. A profile on disk, as a participant's
    browser has (a private window's memory cache keeps no file this large)."""
    context = await pw.chromium.launch_persistent_context(
        str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
        viewport={"width": WIDTH, "height": HEIGHT}, ignore_https_errors=True)
    try:
        page = context.pages[0] if context.pages else await context.new_page()
        cdp = await context.new_cdp_session(page)
        await cdp.send("Network.enable")
        total = [0]
        cdp.on("Network.loadingFinished",
               lambda event: total.__setitem__(0, total[0] + int(event["encodedDataLength"])))
        opened = asyncio.Event()
        page.on("websocket", lambda _socket: opened.set())
        await page.goto(link, timeout=step_s * 1000)
        await page.get_by_role("button", name="I agree and want to take part").click(timeout=step_s * 1000)
        await asyncio.wait_for(opened.wait(), step_s * 3)
        first, total[0] = total[0], 0
        opened.clear()
        await page.reload(timeout=step_s * 1000)
        await asyncio.wait_for(opened.wait(), step_s * 3)
        return first, total[0]
    finally:
        await context.close()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gaips", type=Path, required=True)
    ap.add_argument("--template", type=Path, required=True)
    ap.add_argument("--turns", type=int, default=2, help="AI turns per game before Finish (at least 2)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--step-timeout", type=float, default=90.0)
    ap.add_argument("--turn-timeout", type=float, default=300.0)
    ap.add_argument("--bytes-only", action="store_true", help="only measure what a participant downloads")
    ap.add_argument("--questionnaires", action="store_true",
                    help="the online example study's questionnaires (configs/study-online-example.yaml) around "
                         "three participants' games, the exports compared with what the browsers entered")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="real-online-"))
    out.mkdir(parents=True, exist_ok=True)
    if args.questionnaires:
        raise SystemExit(await with_questionnaires(args, out))
    from playwright.async_api import async_playwright

    from agent.core.studies.online import OnlineRun
    from agent.core.studies.run import StudyRun
    from agent.games import read_study

    async with agent(out, args.gaips, args.template) as upstream, caddy(out, upstream) as base:
        async with await StudyRun.open(read_study(out / "study.yaml")) as run:
            invites = await OnlineRun(run).invite(3)
        async with async_playwright() as pw:
            # On the agent's own address: Chromium caches nothing from a site with an untrusted certificate
            # (Caddy's local CA here), which a participant's browser, trusting the real one, does.
            first, reload = await downloaded(pw, invites[2].link(f"http://{upstream}"), out / "profile",
                                             args.step_timeout)
            print(f"downloaded until the game's socket opened: first visit {first:,} bytes, reload {reload:,} bytes")
            if args.bytes_only:
                return
            browser = await pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            try:
                results = await asyncio.gather(*(
                    participant(browser, invite.link(base), Persona(f"L{invite.number:04d}"), out, args.turns,
                                args.step_timeout, args.turn_timeout) for invite in invites[:2]))
            finally:
                await browser.close()
    print_tables(out, results)


def print_tables(out: Path, results: list[dict[str, Any]]) -> None:
    with sqlite3.connect(out / "study.db") as db:
        people = db.execute("SELECT id, sequence, conditions, state, outcome, consent, finished_page_at "
                            "FROM participants ORDER BY number").fetchall()
        games = db.execute("SELECT participant, position, condition, attempt, ai_turns, completed, end_reason, "
                           "transcript FROM games ORDER BY id").fetchall()
    for r in results:
        print(json.dumps(r, ensure_ascii=False))
    print("participants:")
    for row in people:
        print("  ", row)
    print("games:")
    for row in games:
        print("  ", row)
    print(f"out: {out}")


async def with_questionnaires(args: argparse.Namespace, out: Path) -> int:
    """The three participants of PERSONAS through the online example's questionnaires and the real
    game; the export checked against what their browsers entered. 0 when everything held."""
    from playwright.async_api import async_playwright

    from agent.core.studies.online import OnlineRun
    from agent.core.studies.run import StudyRun
    from agent.games import read_study

    started = time.monotonic()
    answered = {p.name: Answered() for p in PERSONAS}
    async with agent(out, args.gaips, args.template, questionnaire_study()) as upstream, \
            caddy(out, upstream) as base:
        study = read_study(out / "study.yaml")
        q = study.questionnaires
        assert q is not None, "the example study has no questionnaires"
        async with await StudyRun.open(study) as run:
            invites = await OnlineRun(run).invite(len(PERSONAS))
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            try:
                results = await asyncio.gather(*(
                    participant(browser, invite.link(base) + (f"?lang={p.language}" if p.language else ""), p, out,
                                args.turns, args.step_timeout, args.turn_timeout, q, answered[p.name])
                    for p, invite in zip(PERSONAS, invites, strict=True)))
            finally:
                await browser.close()
    print_tables(out, results)
    entries = [e for p in PERSONAS for e in answered[p.name].entries]
    comparison, validity = await export_and_check(out / "study.yaml", out / "export", entries)
    with sqlite3.connect(out / "study.db") as db:
        states = {pid: (state, outcome) for pid, state, outcome in
                  db.execute("SELECT id, state, outcome FROM participants")}
    spec = yaml.safe_load((out / "study.yaml").read_text(encoding="utf-8"))["online"]
    lines, ok = verdict(PERSONAS, results, answered, states, comparison, validity, spec["completion_code"],
                        spec["screen_out_code"])
    print(f"summary ({time.monotonic() - started:.0f} s, --turns {args.turns}):")
    for line in lines:
        print("  " + line)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    asyncio.run(main())
