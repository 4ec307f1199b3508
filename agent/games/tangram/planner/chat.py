"""The offline planner's chat: one line for each message, read by :mod:`.requests`, worded by
``phrases.yaml``. A mixin of :class:`~agent.games.tangram.planner.planner.Planner`: it answers from,
and for requests changes, the planner's plan (:class:`~agent.games.tangram.planner.plan_state.PlanState`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.anchor import Fit
from agent.games.tangram.planner.intents import IntentModel
from agent.games.tangram.planner.language import Languages
from agent.games.tangram.planner.library import Figure, FigureLibrary
from agent.games.tangram.planner.phrases import MAX_LINE_CHARS, Phrases
from agent.games.tangram.planner.plan_state import Pending, PlanState
from agent.games.tangram.planner.requests import Request
from agent.games.tangram.planner.steps import Step, build_order, next_step
from agent.games.tangram.planner.understand import understand
from agent.games.tangram.protocol import clean_chat_text

_TRIES = 3
"""How many pieces a strategy or a vague request tries before it says what the planner does anyway."""
_RESUMES = frozenset({"vague", "prefer", "move", "rotate", "place_near", "assign", "strategy", "switch", "yes"})
"""Requests that ask the agent to play again after the partner took over the rest of the game."""
HANDOVER_TURNS = 1000
"""Turns passed after "leave the rest to me": the rest of the game, until the partner asks again."""
SHOWCASE = 10
"""How many figure names the chat lists when asked for one it does not know."""
_GAME_OBJECTIVES = ("house", "fish", "human", "rocket", "cat", "robot")


def _showcase(names: tuple[str, ...]) -> list[str]:
    """The game's own objectives first, then the rest in library order, cut to SHOWCASE names."""
    first = [n for n in _GAME_OBJECTIVES if n in names]
    return (first + [n for n in names if n not in first])[:SHOWCASE]


class ChatMixin:
    """The chat half of the planner (the other half plays turns)."""

    state: PlanState
    phrases: Phrases
    library: FigureLibrary
    languages: Languages
    intents: IntentModel
    last_reply_kind: str

    if TYPE_CHECKING:  # the planner's own, used here
        @property
        def figure(self) -> Figure: ...

        def sync(self, objective: str, board: Mapping[str, Pose], movers: Mapping[str, str] | None = None) -> None:
            ...

        def fit(self, board: Mapping[str, Pose], commit: bool = True) -> Fit: ...

        def ours(self, board: Mapping[str, Pose]) -> frozenset[str]: ...

        def keep(self, board: Mapping[str, Pose]) -> frozenset[str]: ...

        def _set_figure(self, figure: Figure, exact: bool, announced: bool) -> None: ...

        @property
        def lines(self) -> Phrases: ...

        def skip(self, board: Mapping[str, Pose]) -> frozenset[str]: ...

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
        heard = understand(message, fig, self.library, self.phrases, self.languages, self.intents,
                           order=slot_order, prefer=todo_first, last_piece=st.last_piece, offer=st.offer is not None)
        req = heard.request
        if req.intent == "other_language":
            self.last_reply_kind = "other_language"
            return _line(self.languages.other_language_line(heard.lang))
        st.lang = heard.lang
        self._resume_if_asked(req)
        if req.intent not in ("yes", "no", "switch_offer", "unknown_figure"):
            st.offer = None  # an offer is answered at once or not at all
        return _line(self._answer(req, fit, board))

    def hear(self, objective: str, board: Mapping[str, Pose], message: str,
             movers: Mapping[str, str] | None = None) -> None:
        """A line another speaker (the model) answered: a pass this planner agreed to for the rest of
        the game ("leave the rest to me") ends when the line asks the agent to play again."""
        st = self.state
        if st.skip_turns <= 1:
            return
        self.sync(objective, board, movers)
        self._resume_if_asked(understand(message, self.figure, self.library, self.phrases, self.languages,
                                         self.intents, last_piece=st.last_piece).request)

    def _resume_if_asked(self, req: Request) -> None:
        """After "leave the rest to me", a request to play ends the pass."""
        if self.state.skip_turns > 1 and req.intent in _RESUMES:
            self.state.skip_turns = 0

    def _say(self, key: str, **values: Any) -> str:
        """A chat line by key, in the partner's language, remembered as the kind of the last reply
        (the tests read it)."""
        self.last_reply_kind = key
        return self.lines.raw("chat", key, **values)

    def _progress(self, fit: Fit, board: Mapping[str, Pose]) -> str:
        fig = self.figure
        missing = [fig.parts[fit.slot_of[p]] for p in build_order(fig, fit) if p not in fit.matched]
        return self.lines.raw("chat", "progress", placed=len(fit.matched), on_board=len(board), missing=missing[:4],
                              more=max(0, len(missing) - 4), figure=fig.name)

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
        if req.intent == "pieces_question":
            return say("pieces_question", what=req.what, piece=piece or "", kept=st.keep_human,
                       mover=self._piece_facts(piece, fit, board)["mover"] if piece is not None else "", **base)
        if req.intent == "switch_unknown":
            return say("switch_unknown", what=req.what, names=", ".join(_showcase(self.library.names)),
                       more=max(0, len(self.library) - SHOWCASE), **base)
        if req.intent == "assign" and piece is not None:
            return self._assign(piece, req, fit)
        if req.intent in ("move", "rotate") and piece is not None:
            if piece not in board:
                return self._from_drawer(req, piece, fit, board)
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
            return say("keep_ok", **base)
        if req.intent == "keep_piece" and piece is not None:
            st.frozen.add(piece)
            if st.first == piece:
                st.first = None
            if st.pending is not None and st.pending.piece == piece:
                st.pending = None
            if st.after_place is not None and st.after_place.piece == piece:
                st.after_place = None
            return say("keep_piece_ok", piece=piece, on_board=piece in board)
        if req.intent == "strategy":
            return self._strategy(req, fit, board)
        if req.intent == "vague":
            return self._vague(req.direction, fit, board, kind=req.what)
        if req.intent == "spatial":
            return self._spatial(req, fit, board)
        if req.intent == "unknown_figure":
            nearest = req.figure if req.figure is not None and req.figure.name != fig.name else None
            st.offer = nearest
            return say("unknown_figure", what=req.what, nearest=nearest.name if nearest else "",
                       same=req.figure is not None and req.figure.name == fig.name, **base)
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
        if req.intent == "wait" and req.what:  # the partner plays the next piece, or the rest
            st.skip_turns = HANDOVER_TURNS if req.what == "rest" else 1
            return say("handover_ok", rest=req.what == "rest")
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
            if len(fit.matched) == len(fit.slot_of):  # "are we done?" on a finished figure: yes
                return say("next_done", **base)
            self.last_reply_kind = "progress"
            return self._progress(fit, board)
        if req.intent in ("thanks", "praise", "how_are_you", "ack", "smalltalk"):
            return say(req.intent, progress=self._progress(fit, board))
        if req.intent in ("greeting", "bye", "identity", "help"):
            return say(req.intent, **base)
        if req.intent == "unknown_piece":
            return say("unknown_piece", direction=req.direction)
        if req.question:
            return say("unclear_question", progress=self._progress(fit, board), **base)
        return say("fallback", placed=len(fit.matched), on_board=len(board), **base)

    def _from_drawer(self, req: Request, piece: str, fit: Fit, board: Mapping[str, Pose]) -> str:
        """A move or turn of a piece still in the drawer: placed next where the figure has it, then
        moved or turned on the turn after (or, when it cannot be placed next, said so)."""
        step = self._promise([piece], fit, board)
        if step is None or step.slot is None or step.action != "place":
            return self._say(f"{req.intent}_not_on_board", piece=piece)
        self.state.after_place = Pending(req.intent, piece, req.dx, req.dy, req.degrees, req.direction)
        return self._say(f"{req.intent}_place_first", piece=piece, part=self.figure.parts[step.slot],
                         direction=req.direction)

    def _next(self, fit: Fit, board: Mapping[str, Pose]) -> str:
        st = self.state
        fig = self.figure
        if st.pending is not None:
            if st.pending.kind == "place":
                return self._say("place_near_ok", piece=st.pending.piece, relation=st.pending.direction,
                                 owner="", anchor=st.pending.anchor)
            key = "move_ok" if st.pending.kind == "move" else "rotate_ok"
            return self._say(key, piece=st.pending.piece, direction=st.pending.direction)
        step = next_step(fig, fit, board, self.ours(board), keep=self.keep(board), first=st.first,
                         skip=self.skip(board))
        if step.action == "complete":
            return self._say("next_done", figure=fig.name, description=fig.description)
        if step.piece is None or step.slot is None:
            self.last_reply_kind = "stuck"
            return self.lines.raw("turn", "stuck", figure=fig.name)
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
        owner = req.anchor_owner
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
            owner = st.movers.get(anchor, "")
        st.pending = Pending("place", piece, direction=req.relation_words, relation=req.relation, anchor=anchor)
        return self._say("place_near_ok", anchor=anchor, **{**values, "owner": owner})

    def _promise(self, choices: list[str], fit: Fit, board: Mapping[str, Pose]) -> Step | None:
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

    def _open(self, fit: Fit, board: Mapping[str, Pose]) -> list[str]:
        """Pieces still to put in place that the planner may touch, drawer pieces first, in build order."""
        barred = self.skip(board) | self.keep(board)
        todo = [p for p in build_order(self.figure, fit) if p not in fit.matched and p not in barred]
        return [p for p in todo if p not in board] + [p for p in todo if p in board]

    @staticmethod
    def _by_size(pieces: list[str], size: str) -> list[str]:
        """``pieces`` biggest first (``size`` "big") or smallest first, in their order within a size
        (sizes in small triangles, 1, 2 or 4: the square and the medium triangle are one size)."""
        unit = shapes.piece_area("Green")
        sizes = {p: round(shapes.piece_area(p) / unit) for p in pieces}
        return sorted(pieces, key=lambda p: -sizes[p] if size == "big" else sizes[p])

    def _strategy(self, req: Request, fit: Fit, board: Mapping[str, Pose]) -> str:
        """"Start with the big ones", "the roof first", "from the bottom": the next piece follows it."""
        fig = self.figure
        todo = self._open(fit, board)
        if req.what == "theirs" and req.slot is not None:  # "I'll do the tail": its pieces are left to the partner
            # "the tail": that part, not the tail roots too; "the walls": both
            slots = [s for s in fig.order if fig.parts[s] == req.part.rstrip("s")] or \
                fig.pieces_with_part(req.part) or [req.slot]
            pieces = [fit.piece_for_slot(s) for s in slots]
            st = self.state
            st.frozen.update(pieces)
            if st.first in pieces:
                st.first = None
            several = len(slots) > 1
            common = [w for w in fig.parts[slots[0]].split() if all(w in fig.parts[s].split() for s in slots)]
            part = " ".join(common) if several and common else fig.parts[slots[0]]
            return self._say("strategy_theirs", part=part, several=several, pieces=pieces)
        if req.what == "part" and req.slot is not None:
            piece = fit.piece_for_slot(req.slot)
            part = fig.parts[fit.slot_of[piece]]
            if piece in fit.matched:
                return self._say("prefer_done", piece=piece, part=part)
            step = self._promise([piece], fit, board)
            if step is not None:
                return self._say("strategy_part", piece=piece, part=part, move=step.action == "move")
        if req.what == "where":
            return self._vague(req.direction, fit, board, key="strategy_where")
        size = req.what if req.what in ("big", "small") else "big"
        self.state.size_first = size  # kept: a piece the partner takes meanwhile is replaced by the next
        ranked = self._by_size(todo, size)
        wanted = "large triangle" if size == "big" else "small triangle"
        step = self._promise(ranked[:_TRIES], fit, board)
        if step is None or step.piece is None:
            return self._next(fit, board)
        values = {"piece": step.piece, "part": fig.parts[step.slot] if step.slot else "", "move": step.action == "move"}
        if shapes.kind(step.piece) == wanted:
            return self._say(f"strategy_{size}", **values)
        return self._say("strategy_done", size=size, **values)

    def _vague(self, region: str, fit: Fit, board: Mapping[str, Pose], key: str = "vague_ok", kind: str = "") -> str:
        """"Put a piece near the top": the piece still to place whose part lies most that way (a
        triangle when the partner said one)."""
        fig = self.figure
        todo = self._open(fit, board)
        if kind:
            named = [p for p in fit.slot_of if kind in shapes.kind(p)]
            todo = [p for p in todo if p in named] or todo
            done = [p for p in named if p in fit.matched]
            if done and len(done) == len(named):  # "do something with the big triangle": both are in place
                then = next_step(fig, fit, board, self.ours(board), keep=self.keep(board), first=self.state.first,
                                 skip=self.skip(board))
                return self._say("vague_in_place", pieces=done, done_parts=[fig.parts[fit.slot_of[p]] for p in done],
                                 figure=fig.name, piece=then.piece or "", move=then.action == "move",
                                 part=fig.parts[then.slot] if then.slot else "")
        if not todo:
            return self._say("vague_done", figure=fig.name)
        x0, y0, x1, y1 = shapes.bounds(fit.targets.values())
        mid = ((x0 + x1) / 2, (y0 + y1) / 2)

        def score(p: str) -> float:
            cx, cy = shapes.vertex_centroid(fit.targets[p])
            return {"top": cy, "bottom": -cy, "left": cx, "right": -cx,
                    "middle": abs(cx - mid[0]) + abs(cy - mid[1])}.get(region, 0.0)

        step = self._promise(sorted(todo, key=score)[:_TRIES], fit, board)
        if step is None or step.piece is None or step.slot is None:
            return self._next(fit, board)
        if key == "vague_ok" and step.action == "move":
            key = "vague_move"
        return self._say(key, piece=step.piece, part=fig.parts[step.slot], place=self._place_word(fit, step.piece),
                         figure=fig.name, move=step.action == "move")

    def _spatial(self, req: Request, fit: Fit, board: Mapping[str, Pose]) -> str:
        """Space, symmetry or a part of the figure: what the figure does there, and how to change it."""
        fig = self.figure
        example = req.piece or self.state.last_piece or fig.order[0]
        base = {"figure": fig.name, "description": fig.description, "piece": example}
        if req.what == "space":
            return self._say("spatial_space", **base)
        if req.what == "symmetry" or not req.pieces:
            return self._say("spatial_symmetry", **base)
        facts = "; ".join(self.lines.raw("chat", "spatial_fact", piece=p, part=fig.parts[fit.slot_of[p]],
                                         place=self._place_word(fit, p)) for p in req.pieces[:3])
        other = next((p for p in board if p != example), next(p for p in fig.order if p != example))
        # The pieces the partner named are the ones played next, each where the figure has it.
        open_named = [p for p in self._open(fit, board) if p in req.pieces]
        step = self._promise(open_named[:_TRIES], fit, board)
        promised = {"next": step.piece, "next_part": fig.parts[step.slot], "move": step.action == "move"} \
            if step is not None and step.piece is not None and step.slot is not None else {"next": ""}
        return self._say("spatial_part", facts=facts, other=other, **promised, **base)

    def _assign(self, piece: str, req: Request, fit: Fit) -> str:
        fig = self.figure
        ph = self.phrases
        st = self.state
        if req.slot is None:
            parts = ", ".join(fig.parts[s] for s in fig.order)
            if req.what == "place" and req.part and piece not in fit.matched and piece not in st.frozen:
                st.first = piece  # "use a small triangle as the eye": no eye, but that piece is played next
                return self._say("assign_no_part_next", figure=fig.name, part=req.part, piece=piece,
                                 own=fig.parts[fit.slot_of[piece]])
            return self._say("assign_no_part", figure=fig.name, part=req.part or "such part", parts=parts)
        candidates = fig.pieces_with_part(req.part) or [req.slot]
        slot = next((s for s in candidates if shapes.same_kind(piece, s)), req.slot)
        part = fig.parts[slot]
        if not shapes.same_kind(piece, slot):
            kinds = ph.words.kinds
            words = {"piece": piece, "part": part, "needed": kinds[shapes.kind(slot)],
                     "kind": kinds[shapes.kind(piece)]}
            if piece in fit.matched or piece in st.frozen or req.what != "place":
                return self._say("assign_kind", **words)
            # The part needs another kind; what the partner wants played, that piece, goes in next where it fits.
            st.first = piece
            return self._say("assign_kind_next", own=fig.parts[fit.slot_of[piece]], **words)
        if fit.slot_of.get(piece) == slot:
            st.pins[piece] = slot
            return self._say("assign_already", piece=piece, part=part)
        other = fit.piece_for_slot(slot)
        st.pins[piece] = slot
        st.pins[other] = fit.slot_of[piece]
        st.overrides.pop(piece, None)
        st.overrides.pop(other, None)
        if req.what == "place" and piece not in st.frozen:
            st.first = piece  # "put yellow in the tail": played next, as that part
        return self._say("assign_ok", piece=piece, part=part)


def _line(text: str) -> str:
    return clean_chat_text(text, MAX_LINE_CHARS)
