"""The offline planner: one object per game session that plays a library figure with the human.

It keeps the session's plan (figure, anchor, chat requests) and turns each board into a move and
one chat line. Everything here is synchronous and pure computation; the async player in
``agent.games.tangram.players.planner`` only adapts a
:class:`~agent.games.tangram.players.base.TurnView` to these calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent.games.tangram.geometry.collide import CLEARANCE_PX
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.relations import resolve_relation
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.anchor import MATCH_TOLERANCE_PX, Anchor, Fit, fit_anchor
from agent.games.tangram.planner.library import (
    Figure,
    FigureLibrary,
    find_figure,
    load_library,
    match_objective,
    normalize_text,
)
from agent.games.tangram.planner.phrases import MAX_LINE_CHARS, Phrases, load_phrases
from agent.games.tangram.planner.requests import Request, parse_request
from agent.games.tangram.planner.search import nearest_valid
from agent.games.tangram.planner.steps import Step, build_order, next_step
from agent.games.tangram.players.base import Decision
from agent.games.tangram.protocol import clean_chat_text

SOURCE = "planner"
_REQUEST_SLACK_PX = 4.0
_TURN_SLACK_PX = 15.0
_LARGE = "large triangle"


@dataclass
class Pending:
    """A move the human asked for, done on our next turn."""

    kind: str  # "move" | "rotate" | "place"
    piece: str
    dx: float = 0.0
    dy: float = 0.0
    degrees: float = 0.0
    direction: str = ""
    relation: str = ""
    """For "place": the geometry engine's relation to ``anchor``; ``direction`` holds its words."""
    anchor: str = ""


@dataclass
class PlanState:
    objective: str | None = None
    figure: Figure | None = None
    exact: bool = True
    announced: bool = False
    anchor: Anchor | None = None
    around_said: bool = False
    pins: dict[str, str] = field(default_factory=dict)
    overrides: dict[str, Pose] = field(default_factory=dict)
    ours: dict[str, Pose] = field(default_factory=dict)
    pending: Pending | None = None
    first: str | None = None
    """A piece the human asked us to place next."""
    keep_human: bool = False
    """The human asked us not to move their pieces (unless they are in the way)."""
    last_line: str = ""
    skip_turns: int = 0
    turns: int = 0
    last_piece: str | None = None
    offer: Figure | None = None
    """Another figure the agent asked the partner about; a "yes" switches to it."""
    announced_pose: Pose | None = None
    """This turn's move, already announced in the chat: a chat answered before the game shows it
    speaks of it as made."""
    switched: bool = False
    """The partner asked for another figure than the game's objective and was told it is built."""
    movers: dict[str, str] = field(default_factory=dict)
    """Who moved each piece last ("agent"/"partner"), newest last, when the session tracks it."""


SHOWCASE = 10
"""How many figure names the chat lists when asked for one it does not know."""
_GAME_OBJECTIVES = ("house", "fish", "human", "rocket", "cat", "robot")


def _showcase(names: tuple[str, ...]) -> list[str]:
    """The game's own objectives first, then the rest in library order, cut to SHOWCASE names."""
    first = [n for n in _GAME_OBJECTIVES if n in names]
    return (first + [n for n in names if n not in first])[:SHOWCASE]


class Planner:
    """Plans moves and chat for one session. ``default_figure`` is used for unknown objectives."""

    def __init__(self, library: FigureLibrary | None = None, phrases: Phrases | None = None,
                 default_figure: str | None = None) -> None:
        self.library = library or load_library()
        self.phrases = phrases or load_phrases()
        self.default_figure = default_figure
        self.state = PlanState()
        self.last_step: Step | None = None
        self.last_fit: Fit | None = None
        self.last_reply_kind = ""
        """The kind (phrase key) of the last chat reply, for tests and records."""

    # ------------------------------------------------------------ plan bookkeeping

    @property
    def figure(self) -> Figure:
        assert self.state.figure is not None
        return self.state.figure

    def _set_figure(self, figure: Figure, exact: bool, announced: bool) -> None:
        st = self.state
        st.figure, st.exact, st.announced = figure, exact, announced
        st.anchor, st.around_said = None, False
        st.pins.clear()
        st.overrides.clear()
        st.pending = None
        st.first = None
        st.offer = None

    def sync(self, objective: str, board: Mapping[str, Pose], movers: Mapping[str, str] | None = None) -> None:
        """Follow the game: a new objective or a board emptied of our pieces starts a new plan.

        ``movers`` (who moved each piece last, from the session's ledger) decides which pieces are
        ours; without it, a piece is ours while it stands where this planner last put it."""
        st = self.state
        key = normalize_text(objective)
        restarted = not board and bool(st.ours)
        if st.figure is None or key != st.objective or restarted:
            st.objective = key
            figure, exact = match_objective(objective, self.library, self.default_figure)
            self._set_figure(figure, exact, announced=False)
            st.ours.clear()
            st.skip_turns = 0
            st.keep_human = False
            st.switched = False
        if movers:
            st.movers = {n: m for n, m in movers.items() if n in board}
            st.ours = {n: board[n] for n, m in st.movers.items() if m == "agent"}
            return
        # A piece we placed that the human has since moved is theirs now.
        for name in list(st.ours):
            if name not in board or shapes.placement_error(board[name], st.ours[name]) > 1.0:
                del st.ours[name]
        st.movers = {n: ("agent" if n in st.ours else "partner") for n in board}

    def ours(self, board: Mapping[str, Pose]) -> frozenset[str]:
        return frozenset(n for n in board if n in self.state.ours)

    def fit(self, board: Mapping[str, Pose], commit: bool = True) -> Fit:
        st = self.state
        fit = fit_anchor(self.figure, board, st.anchor, st.pins)
        if st.anchor is not None and fit.anchor.distance(st.anchor) > 0.5 and commit:
            st.overrides.clear()
            st.around_said = False
        if commit:
            st.anchor = fit.anchor
        if st.overrides:
            targets = dict(fit.targets)
            matched = set(fit.matched)
            for piece, pose in st.overrides.items():
                targets[piece] = pose
                matched.discard(piece)
                if piece in board and shapes.placement_error(board[piece], pose) <= MATCH_TOLERANCE_PX:
                    matched.add(piece)
            fit = dataclasses.replace(fit, targets=targets, matched=frozenset(matched))
        return fit

    # ------------------------------------------------------------ turns

    def play(self, objective: str, board: Mapping[str, Pose], movers: Mapping[str, str] | None = None) -> Decision:
        self.sync(objective, board, movers)
        self.last_step, self.last_fit = None, None
        st = self.state
        st.announced_pose = None
        st.turns += 1
        prefix = ""
        if not st.exact and not st.announced:
            related = find_figure(objective, self.library)[0] is self.figure
            prefix = self.phrases.raw("turn", "unknown_objective", objective=objective.strip() or "that",
                                      figure=self.figure.name, related=related)
            st.announced = True
        if st.skip_turns > 0:
            st.skip_turns -= 1
            return self._decision(None, prefix + self.phrases.raw("turn", "waiting"), "passing on request")
        if st.pending is not None:
            done, text = self._honour(st.pending, board)
            st.pending = None
            if done is not None:
                return done
            prefix += text
        fit = self.fit(board)
        step = next_step(self.figure, fit, board, self.ours(board), keep=self.keep(board), first=st.first)
        if step.piece is not None and step.piece == st.first:
            st.first = None
        return self._from_step(step, fit, board, prefix)

    def promised(self) -> bool:
        """Whether a chat answer promised something for the agent's next turns: a move or turn of a
        piece, a piece next, a pass, another figure. A player that let this planner answer the chat
        lets it play those turns too, so that the promise is kept."""
        st = self.state
        return st.pending is not None or st.first is not None or st.skip_turns > 0 or st.switched

    def keep(self, board: Mapping[str, Pose]) -> frozenset[str]:
        """The human's pieces, when they asked us to leave them alone."""
        return frozenset(board) - self.ours(board) if self.state.keep_human else frozenset()

    def adjust(self, objective: str, board: Mapping[str, Pose], previous: Decision | None,
               collisions: list[str], attempt: int = 0, movers: Mapping[str, str] | None = None) -> Decision:
        """The game reported ``collisions`` for ``previous``: the same piece a bit further off, else
        another piece, else pass."""
        self.sync(objective, board, movers)
        if previous is None or previous.pose is None:
            return self.play(objective, board, movers)
        bad = previous.pose
        clearance = CLEARANCE_PX + 1.0 + attempt
        what = ", ".join(collisions) or "something"
        pose = nearest_valid(bad, board, max_px=10.0, clearance=clearance, avoid=bad)
        if pose is not None:
            self._remember(pose)
            return self._decision(pose, self.phrases.raw("turn", "adjusted", piece=bad.piece, what=what),
                                  f"adjusted {bad.piece} after collisions with {what}")
        rest = {n: p for n, p in board.items() if n != bad.piece}
        fit = self.fit(rest)
        step = next_step(self.figure, fit, rest, self.ours(rest), clearance=clearance, avoid=bad,
                         skip=frozenset({bad.piece}))
        return self._from_step(step, fit, rest, "")

    def _remember(self, pose: Pose) -> None:
        self.state.ours[pose.piece] = pose
        self.state.last_piece = pose.piece

    def _decision(self, pose: Pose | None, text: str, reasoning: str) -> Decision:
        line = _line(text)
        self.state.last_line = line
        self.state.announced_pose = pose
        return Decision(pose=pose, chat=line, reasoning=reasoning, source=SOURCE)

    def _honour(self, req: Pending, board: Mapping[str, Pose]) -> tuple[Decision | None, str]:
        st = self.state
        if req.kind == "place":
            return self._honour_place(req, board)
        if req.piece not in board:
            return None, ""
        current = board[req.piece]
        if req.kind == "move":
            wanted = [shapes.translate_board(current, req.dx, req.dy),
                      shapes.translate_board(current, req.dx / 2, req.dy / 2)]
            slack = _REQUEST_SLACK_PX
        else:  # a turned piece no longer fits flush: let it shift a little to make room
            cx, cy = shapes.vertex_centroid(current)
            wanted = [shapes.rotate_about(current, req.degrees, (cx, cy))]
            slack = _TURN_SLACK_PX
        for cand in wanted:
            pose = nearest_valid(cand, board, max_px=slack)
            if pose is not None:
                st.overrides[req.piece] = pose
                self._remember(pose)
                key = "request_moved" if req.kind == "move" else "request_turned"
                text = self.phrases.raw("turn", key, piece=req.piece, direction=req.direction)
                return self._decision(pose, text, f"chat request: {req.kind} {req.piece}"), ""
        key = "request_failed" if req.kind == "move" else "request_turn_failed"
        return None, self.phrases.raw("turn", key, piece=req.piece, direction=req.direction)

    def _honour_place(self, req: Pending, board: Mapping[str, Pose]) -> tuple[Decision | None, str]:
        """Put the piece flush against the anchor the partner named, if there is room."""
        st = self.state
        values: dict[str, Any] = {"piece": req.piece, "relation": req.direction, "anchor": req.anchor}
        if req.anchor in board and req.anchor != req.piece:
            others = {n: p for n, p in board.items() if n != req.piece}
            pose = resolve_relation(req.piece, req.relation, req.anchor, others)
            if pose is None and req.relation != "touching":
                pose = resolve_relation(req.piece, "touching", req.anchor, others)
            if pose is not None:
                st.overrides[req.piece] = pose
                self._remember(pose)
                text = self.phrases.raw("turn", "request_placed", **values)
                return self._decision(pose, text, f"chat request: put {req.piece} {req.relation} {req.anchor}"), ""
        return None, self.phrases.raw("turn", "request_place_failed", **values)

    def _from_step(self, step: Step, fit: Fit, board: Mapping[str, Pose], prefix: str) -> Decision:
        self.last_step, self.last_fit = step, fit
        st = self.state
        fig = self.figure
        ph = self.phrases
        idx = st.turns
        reasoning = (f"figure={fig.name} variant={fig.variants[fit.anchor.variant].label} "
                     f"shift=({fit.anchor.dx:.1f},{fit.anchor.dy:.1f})px in place={sorted(fit.matched)} "
                     f"step={step.action} {step.piece or ''}")
        if step.action == "complete":
            return self._decision(None, prefix + ph.raw("turn", "complete", idx, figure=fig.name), reasoning)
        if step.action == "stuck" or step.pose is None or step.piece is None:
            key = "leave_yours" if self.keep(board) else "stuck"
            return self._decision(None, prefix + ph.raw("turn", key, idx, figure=fig.name), reasoning)
        piece = step.piece
        part = fig.parts[step.slot] if step.slot else ""
        values = {"figure": fig.name, "piece": piece, "part": part,
                  "neighbour": fig.parts[step.neighbour] if step.neighbour else "",
                  "blocking": fig.parts[step.blocking] if step.blocking else ""}
        ours = self.ours(board)
        human_in_place = [p for p in fit.matched if p not in ours and p in board]
        if step.action == "clear":
            text = ph.raw("turn", "clear", idx, **values)
        elif step.action == "move":
            if st.pins.get(piece) == step.slot and step.slot != piece:
                key = "move_asked"
            elif piece in ours:
                key = "move_ours"
            else:
                key = "move_blocking" if step.blocking else "move_needed"
            text = ph.raw("turn", key, idx, **values)
        elif human_in_place and not st.around_said and not ours:
            human_piece = max(human_in_place, key=shapes.piece_area)
            text = ph.raw("turn", "around_human", idx, human_piece=human_piece, **values)
            st.around_said = True
        elif not board:
            text = ph.raw("turn", "start", idx, **values)
        elif step.neighbour:
            text = ph.raw("turn", "place_next_to", idx, **values)
        elif shapes.kind(piece) == _LARGE:
            text = ph.raw("turn", "place_big", idx, **values)
        else:
            text = ph.raw("turn", "place", idx, **values)
        if step.nudged:
            text += ph.raw("turn", "nudged")
        self._remember(step.pose)
        return self._decision(step.pose, prefix + text, reasoning)

    # ------------------------------------------------------------ chat

    def chat(self, objective: str, board: Mapping[str, Pose], message: str,
             movers: Mapping[str, str] | None = None) -> str:
        """One reply to ``message``; :attr:`last_reply_kind` says which kind of answer it is."""
        st = self.state
        made = st.announced_pose
        if made is not None and made.piece in board and shapes.placement_error(board[made.piece], made) <= 1.0:
            made = st.announced_pose = None  # the game shows it
        if made is not None:
            board = {**board, made.piece: made}
            movers = {**(movers or {}), made.piece: "agent"} if movers else None
        self.sync(objective, board, movers)
        fig = self.figure
        fit = self.fit(board, commit=False)
        order = build_order(fig, fit)
        todo_first = [p for p in order if p not in fit.matched] + [p for p in order if p in fit.matched]
        slot_order = [fit.slot_of[p] for p in todo_first]
        req = parse_request(message, fig, self.library, self.phrases, order=slot_order, prefer=todo_first,
                            last_piece=st.last_piece, offer=st.offer is not None)
        if req.intent not in ("yes", "no", "switch_offer"):
            st.offer = None  # an offer is answered at once or not at all
        return _line(self._answer(req, fit, board))

    def _say(self, key: str, **values: Any) -> str:
        """A chat line by key, remembered as the kind of the last reply (the tests read it)."""
        self.last_reply_kind = key
        return self.phrases.raw("chat", key, **values)

    def _progress(self, fit: Fit, board: Mapping[str, Pose]) -> str:
        fig = self.figure
        missing = [fig.parts[fit.slot_of[p]] for p in build_order(fig, fit) if p not in fit.matched]
        text = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        return self.phrases.raw("chat", "progress", placed=len(fit.matched), on_board=len(board), missing=text,
                                figure=fig.name)

    def _place_word(self, fit: Fit, piece: str) -> str:
        x0, y0, x1, y1 = shapes.bounds(fit.targets.values())
        cx, cy = shapes.vertex_centroid(fit.targets[piece])
        col = min(2, max(0, int(3 * (cx - x0) / max(1.0, x1 - x0))))
        row = min(2, max(0, int(3 * (cy - y0) / max(1.0, y1 - y0))))
        return self.phrases.words.places[row][col]

    def _piece_facts(self, piece: str, fit: Fit, board: Mapping[str, Pose]) -> dict[str, Any]:
        """What is true of ``piece`` now: its part, where that is, whether it is in place, who moved it."""
        fig = self.figure
        return {"piece": piece, "part": fig.parts[fit.slot_of[piece]], "place": self._place_word(fit, piece),
                "in_place": piece in fit.matched, "on_board": piece in board,
                "mover": self.state.movers.get(piece, "") if piece in board else ""}

    def _switch(self, figure: Figure) -> str:
        previous = self.figure.name
        self._set_figure(figure, exact=True, announced=True)
        self.state.switched = True
        return self._say("switch", figure=figure.name, description=figure.description, previous=previous)

    def _answer(self, req: Request, fit: Fit, board: Mapping[str, Pose]) -> str:
        st = self.state
        fig = self.figure
        base: dict[str, Any] = {"figure": fig.name, "description": fig.description}
        say = self._say
        piece = req.piece
        if piece is None and req.slot is not None and req.intent in ("move", "rotate", "where", "unclear", "for_you"):
            piece = fit.piece_for_slot(req.slot)
        if req.intent == "switch" and req.figure is not None:
            return self._switch(req.figure)
        if req.intent == "switch_offer" and req.figure is not None:
            st.offer = req.figure
            key = "switch_offer" if req.exact else "switch_related"
            return say(key, figure=req.figure.name, previous=fig.name, what=req.what)
        if req.intent == "yes" and st.offer is not None:
            return self._switch(st.offer)
        if req.intent == "no" and st.offer is not None:
            st.offer = None
            return say("switch_declined", **base)
        if req.intent == "switch_same":
            return say("switch_same", **base)
        if req.intent == "switch_unknown":
            return say("switch_unknown", what=req.what, names=", ".join(_showcase(self.library.names)),
                       more=max(0, len(self.library) - SHOWCASE), **base)
        if req.intent == "assign" and piece is not None:
            return self._assign(piece, req, fit)
        if req.intent in ("move", "rotate") and piece is not None:
            if piece not in board:
                return say(f"{req.intent}_not_on_board", piece=piece)
            st.pending = Pending(req.intent, piece, req.dx, req.dy, req.degrees, req.direction)
            if req.intent == "move":
                return say("move_ok", piece=piece, direction=req.direction)
            return say("rotate_ok", piece=piece)
        if req.intent == "place_near" and piece is not None:
            return self._place_near(req, piece, board)
        if req.intent == "where" and piece is not None:
            return say("where", **{**base, **self._piece_facts(piece, fit, board)})
        if req.intent == "unclear" and piece is not None:
            return say("unclear", **{**base, **self._piece_facts(piece, fit, board)})
        if req.intent == "prefer" and piece is not None:
            part = fig.parts[fit.slot_of[piece]]
            if piece in fit.matched:
                return say("prefer_done", piece=piece, part=part)
            st.first = piece
            return say("prefer_move" if piece in board else "prefer_ok", piece=piece, part=part)
        if req.intent == "keep":
            st.keep_human = True
            return say("keep_ok")
        if req.intent == "release":
            st.keep_human = False
            return say("release_ok", **base)
        if req.intent == "why":
            return say("why", last=st.last_line) if st.last_line else say("why_nothing")
        if req.intent == "disagree":
            example = piece or st.last_piece or next(iter(fit.slot_of))
            return say("disagree", last=st.last_line, piece=example, part=fig.parts[fit.slot_of[example]])
        if req.intent == "undo":
            example = piece or st.last_piece or next(iter(board), "Red")
            other = next((p for p in board if p != example), next(p for p in fit.slot_of if p != example))
            return say("undo", piece=example, other=other)
        if req.intent == "resize":
            return say("resize", **base)
        if req.intent == "wait":
            st.skip_turns = 1
            return say("wait_ok")
        if req.intent == "next":
            return self._next(fit, board)
        if req.intent == "for_you":
            return self._for_you(piece, fit, board)
        if req.intent == "plan":
            return say("plan", progress=self._progress(fit, board), **base)
        if req.intent == "progress":
            self.last_reply_kind = "progress"
            return self._progress(fit, board)
        if req.intent in ("thanks", "praise", "how_are_you", "ack", "smalltalk"):
            return say(req.intent, progress=self._progress(fit, board))
        if req.intent in ("greeting", "bye", "identity", "help"):
            return say(req.intent, **base)
        if req.intent == "unknown_piece":
            return say("unknown_piece")
        if req.question:
            return say("unclear_question", progress=self._progress(fit, board), **base)
        return say("fallback", placed=len(fit.matched), on_board=len(board), **base)

    def _next(self, fit: Fit, board: Mapping[str, Pose]) -> str:
        st = self.state
        fig = self.figure
        if st.pending is not None:
            if st.pending.kind == "place":
                return self._say("place_near_ok", piece=st.pending.piece, relation=st.pending.direction,
                                 owner="", anchor=st.pending.anchor)
            key = "move_ok" if st.pending.kind == "move" else "rotate_ok"
            return self._say(key, piece=st.pending.piece, direction=st.pending.direction)
        step = next_step(fig, fit, board, self.ours(board), keep=self.keep(board), first=st.first)
        if step.action == "complete":
            return self._say("next_done", figure=fig.name, description=fig.description)
        if step.piece is None or step.slot is None:
            self.last_reply_kind = "stuck"
            return self.phrases.raw("turn", "stuck", figure=fig.name)
        key = "next" if step.action == "place" else "next_move"
        slot = step.slot if step.action != "clear" else fit.slot_of[step.piece]
        return self._say(key, piece=step.piece, part=fig.parts[slot])

    def _for_you(self, piece: str | None, fit: Fit, board: Mapping[str, Pose]) -> str:
        """A suggestion for the partner's own turn: the piece they asked about, else the first piece
        not in place (the agent's own next piece is left for the agent)."""
        fig = self.figure
        todo = [p for p in build_order(fig, fit) if p not in fit.matched]
        choice = piece if piece is not None and piece not in fit.matched else (todo[0] if todo else None)
        if choice is None:
            return self._say("for_you", piece="", figure=fig.name)
        facts = self._piece_facts(choice, fit, board)
        return self._say("for_you", piece=choice, part=facts["part"], place=facts["place"], figure=fig.name)

    def _place_near(self, req: Request, piece: str, board: Mapping[str, Pose]) -> str:
        """Put ``piece`` against the piece the partner named (or "my piece": the partner's last)."""
        st = self.state
        anchor = req.anchor
        owner = {"partner": "your ", "agent": "my "}.get(req.anchor_owner, "")
        if anchor is None and req.anchor_owner:
            theirs = [p for p, m in st.movers.items() if m == req.anchor_owner and p != piece]
            anchor = theirs[-1] if theirs else None
        values = {"piece": piece, "relation": req.relation_words, "owner": owner}
        if anchor is None:
            return self._say("place_near_no_anchor", **values)
        if anchor == piece:
            return self._say("place_near_same", **values)
        if anchor not in board:
            return self._say("place_near_off_board", anchor=anchor, **values)
        if not owner:
            owner = {"partner": "your ", "agent": "my "}.get(st.movers.get(anchor, ""), "")
        st.pending = Pending("place", piece, direction=req.relation_words, relation=req.relation, anchor=anchor)
        return self._say("place_near_ok", anchor=anchor, **{**values, "owner": owner})

    def _assign(self, piece: str, req: Request, fit: Fit) -> str:
        fig = self.figure
        ph = self.phrases
        st = self.state
        if req.slot is None:
            parts = ", ".join(fig.parts[s] for s in fig.order)
            return self._say("assign_no_part", figure=fig.name, part=req.part or "such part", parts=parts)
        candidates = fig.pieces_with_part(req.part) or [req.slot]
        slot = next((s for s in candidates if shapes.same_kind(piece, s)), req.slot)
        part = fig.parts[slot]
        if not shapes.same_kind(piece, slot):
            kinds = ph.words.kinds
            return self._say("assign_kind", piece=piece, part=part, needed=kinds[shapes.kind(slot)],
                          kind=kinds[shapes.kind(piece)])
        if fit.slot_of.get(piece) == slot:
            st.pins[piece] = slot
            return self._say("assign_already", piece=piece, part=part)
        other = fit.piece_for_slot(slot)
        st.pins[piece] = slot
        st.pins[other] = fit.slot_of[piece]
        st.overrides.pop(piece, None)
        st.overrides.pop(other, None)
        return self._say("assign_ok", piece=piece, part=part)

    # ------------------------------------------------------------ hints


def _line(text: str) -> str:
    return clean_chat_text(text, MAX_LINE_CHARS)
