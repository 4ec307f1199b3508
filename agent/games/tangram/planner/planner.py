"""The offline planner: one object per game session that plays a library figure with the human.

It keeps the session's plan (figure, anchor, the changes the partner asked for) and turns each board
into a move and one line saying it. Everything here is synchronous and pure computation. It knows no
language: its lines come through the :class:`Wording` it is given (the conversation's, in
``agent.games.tangram.dialogue``, which also reads the partner's chat and changes the plan's state
through this planner's narrow interface); ``agent.games.tangram.offline`` puts the two together.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Protocol

from agent.games.tangram.contract import Decision
from agent.games.tangram.geometry.collide import CLEARANCE_PX
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.relations import resolve_relation
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.anchor import MATCH_TOLERANCE_PX, Fit, fit_anchor
from agent.games.tangram.planner.library import Figure, FigureLibrary, load_library, normalize_text
from agent.games.tangram.planner.matching import find_figure, match_objective
from agent.games.tangram.planner.plan_state import Pending, PlanState
from agent.games.tangram.planner.search import nearest_valid
from agent.games.tangram.planner.steps import Step, build_order, next_step
from agent.games.tangram.protocol import PARTNER_LINE_CHARS, clean_chat_text

SOURCE = "planner"
_REQUEST_SLACK_PX = 4.0
_TURN_SLACK_PX = 15.0
_TURN_ROOM_PX = 45.0
"""How far a turned piece may shift to find room when it cannot turn where it is."""
_LARGE = "large triangle"


class Wording(Protocol):
    """Where the planner's lines come from: ``raw("turn", key, index, **values)`` is the ``index``-th
    wording of the line ``key`` (``turn`` group: what a move does and why), with ``values`` filled in,
    in the language the partner is spoken to in."""

    def raw(self, group: str, key: str, index: int = 0, **values: Any) -> str: ...


class Planner:
    """Plans moves for one session. ``words`` words its lines; ``default_figure`` is used for unknown
    objectives."""

    def __init__(self, library: FigureLibrary | None = None, default_figure: str | None = None, *,
                 words: Wording) -> None:
        self.words = words
        self.library = library or load_library()
        self.default_figure = default_figure
        self.state = PlanState()
        self.last_step: Step | None = None
        self.last_fit: Fit | None = None

    # ------------------------------------------------------------ plan bookkeeping

    def skip(self, board: Mapping[str, Pose]) -> frozenset[str]:
        """Pieces the partner asked to leave where they are ("leave Red where it is"): never moved."""
        return frozenset(self.state.frozen)

    def fixed(self, board: Mapping[str, Pose], movers: Mapping[str, str] | None = None) -> frozenset[str]:
        """The pieces the partner asked never to be moved: the ones asked by name (on the board, or in
        the drawer and so never placed: "I'll do the roof"), and all of theirs on ``board`` (by
        ``movers``, else by this planner's own record) after "don't move my pieces"."""
        st = self.state
        out = set(st.frozen)
        if st.keep_human:
            out |= {p for p in board if movers.get(p) != "agent"} if movers else set(board) - set(st.ours)
        return frozenset(out)

    def constraints(self) -> list[str]:
        """What the partner asked the planner never to do, for the transcript and the console."""
        st = self.state
        out = ["never move the partner's pieces"] if st.keep_human else []
        out += [f"leave {p} where it is" for p in sorted(st.frozen)]
        return out

    @property
    def figure(self) -> Figure:
        assert self.state.figure is not None
        return self.state.figure

    def set_figure(self, figure: Figure, exact: bool, announced: bool) -> None:
        st = self.state
        st.figure, st.exact, st.announced = figure, exact, announced
        st.anchor, st.around_said = None, False
        st.pins.clear()
        st.overrides.clear()
        st.pending = None
        st.queued.clear()
        st.after_place = None
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
            self.set_figure(figure, exact, announced=False)
            st.ours.clear()
            st.skip_turns = 0
            st.keep_human = False
            st.frozen.clear()
            st.size_first = ""
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
            prefix = self.words.raw("turn", "unknown_objective", objective=objective.strip() or "that",
                                      figure=self.figure.name, related=related)
            st.announced = True
        later = st.after_place
        if later is not None and (later.piece in board or st.first != later.piece):
            # The drawer piece is on the board now: its move or turn is this turn's; a piece that
            # was not placed after all (the figure changed) takes its request with it.
            st.after_place = None
            if later.piece in board and st.pending is None:
                st.pending = later
        if st.pending is None and st.queued:
            head = st.queued[0]
            if not head.anchor or head.anchor in board:
                st.pending = st.queued.pop(0)
            elif st.first != head.anchor:  # its anchor was to be placed first and was not: the request lapses
                st.queued.pop(0)
        if st.skip_turns > 0:
            st.skip_turns -= 1
            return self._decision(None, prefix + self.words.raw("turn", "waiting"), "passing on request")
        if st.pending is not None:
            done, text = self._honour(st.pending, board)
            st.pending = None
            if done is not None:
                return done
            prefix += text
        fit = self.fit(board)
        if st.size_first and (st.first is None or st.first in fit.matched or st.first in self.keep(board)):
            st.first = None  # the promised piece was taken: the strategy picks again
            self.promise(self.by_size(self.open_pieces(fit, board), st.size_first)[:3], fit, board)
        step = next_step(self.figure, fit, board, self.ours(board), keep=self.keep(board), first=st.first,
                         skip=self.skip(board))
        if step.piece is not None and step.piece == st.first:
            st.first = None
        return self._from_step(step, fit, board, prefix)

    def promise(self, choices: list[str], fit: Fit, board: Mapping[str, Pose]) -> Step | None:
        """The first of ``choices`` the planner can really play next on this board, made the piece
        it plays next (``first``): what the chat then says is what the next turn does."""
        st = self.state
        for piece in choices:
            step = next_step(self.figure, fit, board, self.ours(board), keep=self.keep(board), first=piece,
                             skip=self.skip(board))
            if step.piece == piece and step.action in ("place", "move"):
                st.first = piece
                return step
        return None

    def open_pieces(self, fit: Fit, board: Mapping[str, Pose]) -> list[str]:
        """Pieces still to put in place that the planner may touch, drawer pieces first, in build order."""
        barred = self.skip(board) | self.keep(board)
        todo = [p for p in build_order(self.figure, fit) if p not in fit.matched and p not in barred]
        return [p for p in todo if p not in board] + [p for p in todo if p in board]

    @staticmethod
    def by_size(pieces: list[str], size: str) -> list[str]:
        """``pieces`` biggest first (``size`` "big") or smallest first, in their order within a size
        (sizes in small triangles, 1, 2 or 4: the square and the medium triangle are one size)."""
        unit = shapes.piece_area("Green")
        sizes = {p: round(shapes.piece_area(p) / unit) for p in pieces}
        return sorted(pieces, key=lambda p: -sizes[p] if size == "big" else sizes[p])

    def promised(self) -> bool:
        """Whether a chat answer promised something for the agent's next turns: a move or turn of a
        piece, a piece next, a pass, another figure. A player that let this planner answer the chat
        lets it play those turns too, so that the promise is kept."""
        st = self.state
        return (st.pending is not None or st.after_place is not None or st.first is not None or st.skip_turns > 0
                or st.switched)

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
            self._remember(pose, board)
            return self._decision(pose, self.words.raw("turn", "adjusted", piece=bad.piece, what=what),
                                  f"adjusted {bad.piece} after collisions with {what}")
        rest = {n: p for n, p in board.items() if n != bad.piece}
        fit = self.fit(rest)
        step = next_step(self.figure, fit, rest, self.ours(rest), clearance=clearance, avoid=bad,
                         skip=frozenset({bad.piece}) | self.skip(rest), keep=self.keep(rest))
        return self._from_step(step, fit, rest, "")

    def _remember(self, pose: Pose, board: Mapping[str, Pose]) -> None:
        """``pose`` is the agent's move on ``board`` (the board before it)."""
        self.state.ours[pose.piece] = pose
        self.state.last_piece = pose.piece
        self.state.last_from = board.get(pose.piece)

    def _decision(self, pose: Pose | None, text: str, reasoning: str) -> Decision:
        line = _line(text)
        self.state.last_line = line
        self.state.announced_pose = pose
        kept = self.constraints()
        if kept:
            reasoning += " | partner's constraints: " + "; ".join(kept)
        return Decision(pose=pose, chat=line, reasoning=reasoning, source=SOURCE)

    def _honour(self, req: Pending, board: Mapping[str, Pose]) -> tuple[Decision | None, str]:
        st = self.state
        if req.kind == "place":
            return self._honour_place(req, board)
        if req.piece not in board:
            return None, ""
        current = board[req.piece]
        if req.kind == "restore" and req.pose is not None:  # back where it was before the agent's last move
            wanted = [req.pose]
            slack = _REQUEST_SLACK_PX
        elif req.kind == "move":
            wanted = [shapes.translate_board(current, req.dx, req.dy),
                      shapes.translate_board(current, req.dx / 2, req.dy / 2)]
            slack = _REQUEST_SLACK_PX
        else:  # a turned piece no longer fits flush: let it shift a little to make room
            cx, cy = shapes.vertex_centroid(current)
            # The turn asked for, then the other ways round, then with more room: a promised turn is
            # made whenever the piece can turn at all.
            turns = dict.fromkeys([req.degrees, -req.degrees, 90.0, -90.0, 180.0])
            wanted = [shapes.rotate_about(current, d, (cx, cy)) for d in turns]
            wanted += [shapes.rotate_about(current, d, (cx, cy)) for d in turns]
            slack = _TURN_SLACK_PX
        for i, cand in enumerate(wanted):
            far = req.kind == "rotate" and i >= len(wanted) // 2
            pose = nearest_valid(cand, board, max_px=_TURN_ROOM_PX if far else slack)
            if pose is not None:
                st.overrides[req.piece] = pose
                self._remember(pose, board)
                key = {"move": "request_moved", "restore": "request_restored"}.get(req.kind, "request_turned")
                text = self.words.raw("turn", key, piece=req.piece, direction=req.direction)
                return self._decision(pose, text, f"chat request: {req.kind} {req.piece}"), ""
        key = {"rotate": "request_turn_failed", "restore": "request_restore_failed"}.get(req.kind, "request_failed")
        return None, self.words.raw("turn", key, piece=req.piece, direction=req.direction)

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
                self._remember(pose, board)
                st.asked_done = req
                text = self.words.raw("turn", "request_placed", **values)
                return self._decision(pose, text, f"chat request: put {req.piece} {req.relation} {req.anchor}"), ""
        return None, self.words.raw("turn", "request_place_failed", **values)

    def _from_step(self, step: Step, fit: Fit, board: Mapping[str, Pose], prefix: str) -> Decision:
        self.last_step, self.last_fit = step, fit
        st = self.state
        fig = self.figure
        ph = self.words
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
        self._remember(step.pose, board)
        return self._decision(step.pose, prefix + text, reasoning)



def _line(text: str) -> str:
    return clean_chat_text(text, PARTNER_LINE_CHARS)
