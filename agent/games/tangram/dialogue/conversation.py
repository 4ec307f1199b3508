"""The offline agent's chat: one line for each message, read by :mod:`.understand`, worded by
``words/phrases.yaml`` (and ``phrases.<lang>.yaml``). :class:`Conversation` sees the planner
(:class:`~agent.games.tangram.planner.planner.Planner`) through the narrow :class:`Plan`: it answers
from, and for requests changes, the plan
(:class:`~agent.games.tangram.planner.plan_state.PlanState`). It also words the planner's own lines
(:meth:`Conversation.raw`), in the partner's language."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from agent.games.tangram.dialogue.declared import by_name
from agent.games.tangram.dialogue.fallback import MeaningReader, request_for
from agent.games.tangram.dialogue.intents import IntentModel, load_intents
from agent.games.tangram.dialogue.language import Languages, load_languages
from agent.games.tangram.dialogue.meanings import load_meanings
from agent.games.tangram.dialogue.phrases import Phrases, load_phrases
from agent.games.tangram.dialogue.requests import Request, offset
from agent.games.tangram.dialogue.understand import Understood, understand
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.anchor import Fit
from agent.games.tangram.planner.library import Figure, FigureLibrary
from agent.games.tangram.planner.plan_state import Pending, PlanState
from agent.games.tangram.planner.steps import Step, build_order, next_step
from agent.games.tangram.protocol import PARTNER_LINE_CHARS, clean_chat_text

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


class Plan(Protocol):
    """What the conversation needs of the planner: its plan and figure, the figure library, and the
    board as the plan sees it (fit, whose pieces, what may not be moved). The conversation reads
    these and, for requests, changes the plan's state; it never plans a move itself."""

    state: PlanState
    library: FigureLibrary

    @property
    def figure(self) -> Figure: ...

    def sync(self, objective: str, board: Mapping[str, Pose], movers: Mapping[str, str] | None = None) -> None:
        ...

    def fit(self, board: Mapping[str, Pose], commit: bool = True) -> Fit: ...

    def ours(self, board: Mapping[str, Pose]) -> frozenset[str]: ...

    def keep(self, board: Mapping[str, Pose]) -> frozenset[str]: ...

    def skip(self, board: Mapping[str, Pose]) -> frozenset[str]: ...

    def set_figure(self, figure: Figure, exact: bool, announced: bool) -> None: ...

    def promise(self, choices: list[str], fit: Fit, board: Mapping[str, Pose]) -> Step | None: ...

    def open_pieces(self, fit: Fit, board: Mapping[str, Pose]) -> list[str]: ...

    def by_size(self, pieces: list[str], size: str) -> list[str]: ...


class Conversation:
    """One session's chat with the partner, beside its :class:`Plan`: it owns the language resources
    (the lines, the language markers, the meanings' model) and answers each line from the plan."""

    def __init__(self, plan: Plan, phrases: Phrases | None = None, languages: Languages | None = None,
                 intents: IntentModel | None = None, reader: MeaningReader | None = None) -> None:
        self.plan = plan
        self.reader = reader
        """A second reading of the lines the rules could not read (:mod:`.fallback`); None: the rules alone."""
        self.phrases = phrases or load_phrases()
        """The English lines and the words the conversation understands."""
        self.languages = languages or load_languages()
        self.intents = intents or load_intents()
        self.last_reply_kind = ""
        """The kind (phrase key) of the last chat reply, for tests and records."""
        self.last_change: Request | None = None
        """The partner's last request of a change to a piece that was answered."""

    @property
    def lines(self) -> Phrases:
        """The lines in the partner's language (the language of their last chat line)."""
        lang = self.plan.state.lang
        return self.phrases if lang == self.phrases.lang else load_phrases(lang=lang)

    def raw(self, group: str, key: str, index: int = 0, **values: Any) -> str:
        """One line in the partner's language: the planner's :class:`~agent.games.tangram.planner.planner.Wording`."""
        return self.lines.raw(group, key, index, **values)

    def chat(self, objective: str, board: Mapping[str, Pose], message: str,
             movers: Mapping[str, str] | None = None) -> str:
        """One reply to ``message``; :attr:`last_reply_kind` says which kind of answer it is."""
        reply, greeted = self._reply(objective, board, message, movers)
        if greeted and self.last_reply_kind not in _GREETS:
            # "hello :) who goes first": greeted back, then answered (when both fit one chat line)
            hello = self.lines.raw("chat", "greet_back")
            if len(hello) + 1 + len(reply) <= PARTNER_LINE_CHARS:
                reply = f"{hello} {reply}"
        return _line(reply)

    def _reply(self, objective: str, board: Mapping[str, Pose], message: str,
               movers: Mapping[str, str] | None) -> tuple[str, bool]:
        """The reply to ``message`` and whether the line greeted."""
        st = self.plan.state
        made = st.announced_pose
        if made is not None and made.piece in board and shapes.placement_error(board[made.piece], made) <= 1.0:
            made = st.announced_pose = None  # the game shows it
        if made is not None:
            board = {**board, made.piece: made}
            movers = {**(movers or {}), made.piece: "agent"} if movers else None
        self.plan.sync(objective, board, movers)
        fig = self.plan.figure
        fit = self.plan.fit(board, commit=False)
        order = build_order(fig, fit)
        todo_first = [p for p in order if p not in fit.matched] + [p for p in order if p in fit.matched]
        slot_order = [fit.slot_of[p] for p in todo_first]
        def read(line: str, it: str | None = None) -> Understood:
            """``line`` understood; "it" is ``it`` (the piece the line's first half named), else the agent's last."""
            return understand(line, fig, self.plan.library, self.phrases, self.languages, self.intents,
                              order=slot_order, prefer=todo_first, last_piece=it or st.last_piece,
                              offer=st.offer is not None)

        heard = read(message)
        req = heard.request
        if self.reader is not None and req.intent == "other":
            meaning = self.reader(message)
            second = request_for(meaning, heard.text, req, fig, self.plan.library, self.phrases, st.last_piece) \
                if meaning else None
            req = second or req
        two = _two_asks(message, read) if req.intent in _CHANGES | _QUESTIONS else None
        if req.intent == "other_language":
            self.last_reply_kind = "other_language"
            return self.languages.other_language_line(heard.lang), False
        st.lang = heard.lang
        self._resume_if_asked(req)
        if req.intent not in ("yes", "no", "switch_offer", "unknown_figure"):
            st.offer = None  # an offer is answered at once or not at all
        if made is not None and _interrupts(req, made):
            return self._interrupted(req, made, fit, board, heard.text), req.greeted
        if two is not None and not {two[0].intent, two[1].intent} <= _CHANGES:
            # "place the square and tell me what the brown one is for": a change and a question, both answered
            first, second = two
            reply = self._answer(first, fit, board)
            kind = self.last_reply_kind
            then = self._answer(second, fit, board)
            self.last_reply_kind = kind
            # "move the tail up and tell me whats next": the change is what comes next, said once
            return (reply if then == reply else f"{reply} {then}"), req.greeted
        if two is not None:  # "turn blue and move brown left": the first taken up, the second not dropped
            first, second = two
            before = (st.pending, st.after_place, st.skip_turns, st.first)
            reply = self._answer(first, fit, board)
            kind, taken = self.last_reply_kind, st.pending
            if (st.pending, st.after_place, st.skip_turns, st.first) == before:  # the first changed nothing
                return f"{reply} {self._answer(second, fit, board)}", req.greeted
            queued = None
            # a move or turn of a piece on the board only sets the pending change (one of a piece in the
            # drawer promises its placing too): that one can wait its turn in the queue
            if taken is not None and (second.intent == "place_near" or (
                    second.intent in ("move", "rotate") and second.piece in board)):
                self._answer(second, fit, board)  # its own reply is replaced: it comes a turn later
                queued = st.pending if st.pending is not taken else None
                st.pending = taken
            if queued is not None:
                st.queued.append(queued)
            then = self._say("one_change_a_turn", piece=second.piece or "", intent=second.intent,
                             queued=queued is not None)
            self.last_reply_kind = kind
            return f"{reply} {then}", req.greeted
        return self._while_moving(req, self._answer(req, fit, board), fit, message), req.greeted

    def _while_moving(self, req: Request, reply: str, fit: Fit, message: str) -> str:
        """A question asked while the agent's move is under way ("where is that one going?", "isso é a
        porta?", "are you doing the flames?") is first about that move: the reply says which piece is on
        its way and as what, before (or, for a line it could not read, instead of) its own answer."""
        moving = self._moving(fit)
        asked = req.question or message.rstrip().endswith("?") or req.intent == "unclear"  # "dont put red there"
        if moving is None or not asked or self.last_reply_kind in _SPEAKS_OF_MOVE or req.piece == moving:
            return reply
        kind = self.last_reply_kind
        now = self._say("playing_now", piece=moving, part=self.plan.figure.parts[fit.slot_of[moving]])
        if (req.intent in _UNREAD_WHILE_MOVING and req.piece is None) or kind in ("unclear_question", "fallback"):
            return now
        if len(now) + 1 + len(reply) > PARTNER_LINE_CHARS:
            return now  # the move said whole rather than both cut
        self.last_reply_kind = kind
        return f"{now} {reply}"

    def hear(self, objective: str, board: Mapping[str, Pose], message: str,
             movers: Mapping[str, str] | None = None) -> None:
        """A line another speaker (the model) answered: a pass this planner agreed to for the rest of
        the game ("leave the rest to me") ends when the line asks the agent to play again."""
        st = self.plan.state
        if st.skip_turns <= 1:
            return
        self.plan.sync(objective, board, movers)
        self._resume_if_asked(understand(message, self.plan.figure, self.plan.library, self.phrases, self.languages,
                                         self.intents, last_piece=st.last_piece).request)

    def _resume_if_asked(self, req: Request) -> None:
        """After "leave the rest to me", a request to play ends the pass."""
        if self.plan.state.skip_turns > 1 and (req.intent in _RESUMES or (
                req.intent == "declared" and req.what in load_meanings().resuming)):
            self.plan.state.skip_turns = 0

    def _say(self, key: str, **values: Any) -> str:
        """A chat line by key, in the partner's language, remembered as the kind of the last reply
        (the tests read it)."""
        self.last_reply_kind = key
        return self.lines.raw("chat", key, **values)

    def _progress(self, fit: Fit, board: Mapping[str, Pose], parts: int = 4) -> str:
        """How far the figure is, naming at most ``parts`` of the parts still to do."""
        fig = self.plan.figure
        missing = [fig.parts[fit.slot_of[p]] for p in build_order(fig, fit) if p not in fit.matched]
        return self.lines.raw("chat", "progress", placed=len(fit.matched), on_board=len(board),
                              missing=missing[:parts], more=max(0, len(missing) - parts), figure=fig.name)

    def _say_within(self, key: str, options: list[dict[str, Any]]) -> str:
        """The chat line ``key`` with the first of ``options`` (its values, fullest first) whose line
        fits the chat line's length: a shorter line said whole, rather than a long one cut."""
        for values in options:
            text = self.lines.raw("chat", key, **values)
            if len(text) <= PARTNER_LINE_CHARS:
                break
        self.last_reply_kind = key
        return text

    def _place_word(self, fit: Fit, piece: str) -> str:
        x0, y0, x1, y1 = shapes.bounds(fit.targets.values())
        cx, cy = shapes.vertex_centroid(fit.targets[piece])
        col = min(2, max(0, int(3 * (cx - x0) / max(1.0, x1 - x0))))
        row = min(2, max(0, int(3 * (cy - y0) / max(1.0, y1 - y0))))
        return self.phrases.words.places[row][col]

    def _piece_facts(self, piece: str, fit: Fit, board: Mapping[str, Pose]) -> dict[str, Any]:
        """What is true of ``piece`` now: its part, where that is, whether it is in place, who moved it."""
        fig = self.plan.figure
        return {"piece": piece, "part": fig.parts[fit.slot_of[piece]], "place": self._place_word(fit, piece),
                "in_place": piece in fit.matched, "on_board": piece in board,
                "mover": self.plan.state.movers.get(piece, "") if piece in board else ""}

    def _moving(self, fit: Fit) -> str | None:
        """The piece the agent's move under way puts in place (sent, not yet shown by the game), or None."""
        made = self.plan.state.announced_pose
        return made.piece if made is not None and made.piece in fit.matched else None

    def _leave(self, pieces: list[str]) -> None:
        """``pieces`` left to the partner: never placed or moved, and no longer the agent's next move."""
        st = self.plan.state
        st.frozen.update(pieces)
        if st.first in pieces:
            st.first = None
        if st.pending is not None and st.pending.piece in pieces:
            st.pending = None
        if st.after_place is not None and st.after_place.piece in pieces:
            st.after_place = None

    def _trade_parts(self, piece: str, slot: str, fit: Fit) -> str:
        """``piece`` pinned to ``slot`` and the piece there now to ``piece``'s part; that piece."""
        st = self.plan.state
        other = fit.piece_for_slot(slot)
        st.pins[piece], st.pins[other] = slot, fit.slot_of[piece]
        st.overrides.pop(piece, None)
        st.overrides.pop(other, None)
        return other

    def _switch(self, figure: Figure) -> str:
        previous = self.plan.figure.name
        self.plan.set_figure(figure, exact=True, announced=True)
        self.plan.state.switched = True
        return self._say("switch", figure=figure.name, description=figure.description, previous=previous)

    def _answer(self, req: Request, fit: Fit, board: Mapping[str, Pose]) -> str:
        """The reply of the meaning's handler (:data:`HANDLERS`); a handler that cannot answer this
        line (None: no piece named, no offer open) leaves it to the question or fallback line."""
        fig = self.plan.figure
        piece = req.piece
        if piece is None and req.slot is not None and req.intent in ("move", "rotate", "where", "unclear", "for_you"):
            piece = fit.piece_for_slot(req.slot)
        heard = Heard(req, fit, board, piece, {"figure": fig.name, "description": fig.description})
        handler = HANDLERS.get(req.intent)
        reply = handler(self, heard) if handler is not None else None
        if reply is not None:
            if req.intent in _CHANGES - {"wait"} and req.piece is not None:
                self.last_change = req  # for "sorry, I meant the cream one"
            return reply
        if req.question:
            return self._say_within("unclear_question", [{"progress": self._progress(fit, board, n), **heard.base}
                                                         for n in (4, 2, 0)])
        return self._say("fallback", placed=len(fit.matched), on_board=len(board), complete=_complete(fit),
                         **heard.base)  # on a complete figure, a remark it cannot read ("missão cumprida 🤖")

    def _interrupted(self, req: Request, made: Pose, fit: Fit, board: Mapping[str, Pose], text: str) -> str:
        """A stop, an objection or "let me do this one" while the agent's move is under way: the move was
        sent and cannot be called back, so the reply says so, then takes the line up: the next turn
        passed (a stop, a hand-over), or what to change asked (an objection). "Don't move my pieces" is
        kept as always."""
        st = self.plan.state
        piece = made.piece
        part = self.plan.figure.parts[fit.slot_of[piece]] if piece in fit.matched else ""
        under_way = self.lines.raw("chat", "under_way", piece=piece, part=part)
        if req.intent == "wait":
            st.skip_turns = max(st.skip_turns, 1)
            rest = self._say("handover_ok", rest=False) if req.what else self._say("interrupt_wait", piece=piece)
        elif req.intent == "keep" and _names_mine(text):
            rest = self._answer(req, fit, board)
        else:
            rest = self._say("interrupt_change", piece=piece)
        return f"{under_way} {rest}"

    def _from_drawer(self, req: Request, piece: str, fit: Fit, board: Mapping[str, Pose]) -> str:
        """A move or turn of a piece still in the drawer: placed next where the figure has it, then
        moved or turned on the turn after (or, when it cannot be placed next, said so)."""
        step = self.plan.promise([piece], fit, board)
        if step is None or step.slot is None or step.action != "place":
            return self._say(f"{req.intent}_not_on_board", piece=piece)
        self.plan.state.after_place = Pending(req.intent, piece, req.dx, req.dy, req.degrees, req.direction)
        return self._say(f"{req.intent}_place_first", piece=piece, part=self.plan.figure.parts[step.slot],
                         direction=req.direction)

    def _next(self, fit: Fit, board: Mapping[str, Pose]) -> str:
        st = self.plan.state
        fig = self.plan.figure
        moving = self._moving(fit)
        if moving is not None:  # asked while the agent's move is under way: that move
            return self._say("playing_now", piece=moving, part=fig.parts[fit.slot_of[moving]])
        if st.pending is not None:
            if st.pending.kind == "place":
                return self._say("place_near_ok", piece=st.pending.piece, relation=st.pending.direction,
                                 owner="", anchor=st.pending.anchor)
            key = "move_ok" if st.pending.kind == "move" else "rotate_ok"
            return self._say(key, piece=st.pending.piece, direction=st.pending.direction)
        step = next_step(fig, fit, board, self.plan.ours(board), keep=self.plan.keep(board), first=st.first,
                         skip=self.plan.skip(board))
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
        fig = self.plan.figure
        todo = [p for p in build_order(fig, fit) if p not in fit.matched]
        choice = piece if piece is not None and piece not in fit.matched else (todo[0] if todo else None)
        if choice is None:
            return self._say("for_you", piece="", figure=fig.name)
        facts = self._piece_facts(choice, fit, board)
        return self._say("for_you", piece=choice, part=facts["part"], place=facts["place"], figure=fig.name)

    def _place_near(self, req: Request, piece: str, fit: Fit, board: Mapping[str, Pose]) -> str:
        """Put ``piece`` against the piece the partner named (or "my piece": the partner's last); an
        anchor still in the drawer is placed first, where the figure has it, when the agent may."""
        st = self.plan.state
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
            step = self.plan.promise([anchor], fit, board)
            if step is None or step.slot is None or step.action != "place":
                return self._say("place_near_off_board", anchor=anchor, **values)
            # "put green next to the square" with the square in the drawer: the square next, green beside it after
            st.queued.append(Pending("place", piece, direction=req.relation_words, relation=req.relation,
                                     anchor=anchor))
            return self._say("place_near_anchor_first", anchor=anchor, part=self.plan.figure.parts[step.slot], **values)
        if not owner:
            owner = st.movers.get(anchor, "")
        st.pending = Pending("place", piece, direction=req.relation_words, relation=req.relation, anchor=anchor)
        return self._say("place_near_ok", anchor=anchor, **{**values, "owner": owner})

    def _strategy(self, req: Request, fit: Fit, board: Mapping[str, Pose]) -> str:
        """"Start with the big ones", "the roof first", "from the bottom": the next piece follows it."""
        fig = self.plan.figure
        todo = self.plan.open_pieces(fit, board)
        if req.what == "theirs" and req.slot is not None:  # "I'll do the tail": its pieces are left to the partner
            # "the tail": that part, not the tail roots too; "the walls": both
            slots = [s for s in fig.order if fig.parts[s] == req.part.rstrip("s")] or \
                fig.pieces_with_part(req.part) or [req.slot]
            pieces = [fit.piece_for_slot(s) for s in slots]
            st = self.plan.state
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
            step = self.plan.promise([piece], fit, board)
            if step is not None:
                return self._say("strategy_part", piece=piece, part=part, move=step.action == "move")
        if req.what == "where":
            return self._vague(req.direction, fit, board, key="strategy_where")
        size = req.what if req.what in ("big", "small") else "big"
        self.plan.state.size_first = size  # kept: a piece the partner takes meanwhile is replaced by the next
        ranked = self.plan.by_size(todo, size)
        wanted = "large triangle" if size == "big" else "small triangle"
        step = self.plan.promise(ranked[:_TRIES], fit, board)
        if step is None or step.piece is None:
            return self._next(fit, board)
        values = {"piece": step.piece, "part": fig.parts[step.slot] if step.slot else "", "move": step.action == "move"}
        if shapes.kind(step.piece) == wanted:
            return self._say(f"strategy_{size}", **values)
        return self._say("strategy_done", size=size, **values)

    def _vague(self, region: str, fit: Fit, board: Mapping[str, Pose], key: str = "vague_ok", kind: str = "") -> str:
        """"Put a piece near the top": the piece still to place whose part lies most that way (a
        triangle when the partner said one)."""
        fig = self.plan.figure
        todo = self.plan.open_pieces(fit, board)
        if kind:
            named = [p for p in fit.slot_of if kind in shapes.kind(p)]
            todo = [p for p in todo if p in named] or todo
            done = [p for p in named if p in fit.matched]
            if done and len(done) == len(named):  # "do something with the big triangle": both are in place
                plan = self.plan
                then = next_step(fig, fit, board, plan.ours(board), keep=plan.keep(board), first=plan.state.first,
                                 skip=plan.skip(board))
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

        step = self.plan.promise(sorted(todo, key=score)[:_TRIES], fit, board)
        if step is None or step.piece is None or step.slot is None:
            return self._next(fit, board)
        if key == "vague_ok" and step.action == "move":
            key = "vague_move"
        return self._say(key, piece=step.piece, part=fig.parts[step.slot], place=self._place_word(fit, step.piece),
                         figure=fig.name, move=step.action == "move")

    def _spatial(self, req: Request, fit: Fit, board: Mapping[str, Pose]) -> str:
        """Space, symmetry or a part of the figure: what the figure does there, and how to change it."""
        fig = self.plan.figure
        example = req.piece or self.plan.state.last_piece or fig.order[0]
        base = {"figure": fig.name, "description": fig.description, "piece": example}
        if req.what == "space":
            return self._say("spatial_space", **base)
        if req.what == "symmetry" or not req.pieces:
            return self._say("spatial_symmetry", **base)
        facts = ["; ".join(self.lines.raw("chat", "spatial_fact", piece=p, part=fig.parts[fit.slot_of[p]],
                                          place=self._place_word(fit, p)) for p in req.pieces[:n]) for n in (3, 2, 1)]
        other = next((p for p in board if p != example), next(p for p in fig.order if p != example))
        # The pieces the partner named are the ones played next, each where the figure has it.
        open_named = [p for p in self.plan.open_pieces(fit, board) if p in req.pieces]
        step = self.plan.promise(open_named[:_TRIES], fit, board)
        promised = {"next": step.piece, "next_part": fig.parts[step.slot], "move": step.action == "move"} \
            if step is not None and step.piece is not None and step.slot is not None else {"next": ""}
        facts.append("")  # the promise and the layout alone: said whole rather than cut
        return self._say_within("spatial_part", [{"facts": f, "other": other, **promised, **base} for f in facts])

    def _assign(self, piece: str, req: Request, fit: Fit) -> str:
        fig = self.plan.figure
        ph = self.phrases
        st = self.plan.state
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
            return self._say("assign_already", piece=piece, part=part, in_place=piece in fit.matched)
        self._trade_parts(piece, slot, fit)
        if req.what == "place" and piece not in st.frozen:
            st.first = piece  # "put yellow in the tail": played next, as that part
        return self._say("assign_ok", piece=piece, part=part)


# ---------------------------------------------------------------- one handler per meaning


@dataclass(frozen=True)
class Heard:
    """A line's request on its board: what every handler reads."""

    req: Request
    fit: Fit
    board: Mapping[str, Pose]
    piece: str | None
    """The piece the line is about: named, or the one of the part it named."""
    base: dict[str, Any]
    """The figure's name and description, which many lines say."""


Handler = Callable[[Conversation, Heard], "str | None"]
HANDLERS: dict[str, Handler] = {}
"""The handler of each meaning (``Request.intent``): its reply, or None when it cannot answer."""


meaning = by_name(HANDLERS, "meaning {name} has two handlers")
"""``@meaning(*intents)``: the decorated handler answers ``intents`` (each meaning has one handler)."""


@meaning("switch")
def _switch_to(c: Conversation, h: Heard) -> str | None:
    return c._switch(h.req.figure) if h.req.figure is not None else None


@meaning("switch_offer")
def _switch_offer(c: Conversation, h: Heard) -> str | None:
    if h.req.figure is None:
        return None
    c.plan.state.offer = h.req.figure
    key = "switch_offer" if h.req.exact else "switch_related"
    return c._say(key, figure=h.req.figure.name, previous=c.plan.figure.name, what=h.req.what)


@meaning("switch_slip")
def _switch_slip(c: Conversation, h: Heard) -> str | None:
    # The game's objective is what the pair builds: another figure named in passing is asked about, not built.
    if h.req.figure is None:
        return None
    return c._say("switch_slip", figure=h.req.figure.name, previous=c.plan.figure.name, what=h.req.what,
                  greeted=h.req.greeted)


@meaning("yes")
def _yes(c: Conversation, h: Heard) -> str | None:
    offer = c.plan.state.offer
    return c._switch(offer) if offer is not None else None


@meaning("no")
def _no(c: Conversation, h: Heard) -> str | None:
    if c.plan.state.offer is None:
        return None
    c.plan.state.offer = None
    return c._say("switch_declined", **h.base)


@meaning("switch_same")
def _switch_same(c: Conversation, h: Heard) -> str | None:
    return c._say("switch_same", **h.base)


@meaning("pieces_question")
def _pieces_question(c: Conversation, h: Heard) -> str | None:
    piece = h.piece
    facts = c._piece_facts(piece, h.fit, h.board) if piece is not None else {"mover": "", "part": ""}
    return c._say("pieces_question", what=h.req.what, piece=piece or "", named=bool(h.req.pieces),
                  kept=c.plan.state.keep_human,
                  mover=facts["mover"], part=facts["part"], **h.base)


@meaning("switch_unknown")
def _switch_unknown(c: Conversation, h: Heard) -> str | None:
    library = c.plan.library
    return c._say("switch_unknown", what=h.req.what, names=", ".join(_showcase(library.names)),
                  more=max(0, len(library) - SHOWCASE), **h.base)


@meaning("assign")
def _assign(c: Conversation, h: Heard) -> str | None:
    if h.piece is not None and h.req.what == "idea":
        return _idea(c, h)
    return c._assign(h.piece, h.req, h.fit) if h.piece is not None else None


def _idea(c: Conversation, h: Heard) -> str:
    """The partner's view of which piece is which part ("is the square ok as the head?", "the two small
    ones are the windows"): agreed when the plan has it so, taken on (pinned) when the kinds fit, else
    declined with the reason; nothing is played for it."""
    fig, fit = c.plan.figure, h.fit
    candidates = fig.pieces_with_part(h.req.part) or [s for s in (h.req.slot,) if s is not None]
    pieces = [p for p in (h.req.pieces or (h.piece,)) if p is not None]
    if not candidates:  # no part named: as "use yellow for the eye" is answered
        return c._assign(pieces[0], h.req, fit)
    pairs: list[tuple[str, str]] = []
    for piece in pieces:
        fitting = [s for s in candidates if shapes.same_kind(piece, s) and s not in (t for _, t in pairs)]
        if not fitting:
            slot = candidates[0]
            kinds = c.phrases.words.kinds
            return c._say("idea_kind", piece=piece, part=fig.parts[slot], needed=kinds[shapes.kind(slot)],
                          kind=kinds[shapes.kind(piece)], own=fig.parts[fit.slot_of[piece]])
        own = fit.slot_of[piece]
        pairs.append((piece, own if own in fitting else fitting[0]))
    chosen = [{"piece": p, "part": fig.parts[s]} for p, s in pairs]
    if all(fit.slot_of[p] == s for p, s in pairs):
        off = next((p for p, _ in pairs if p in h.board and p not in fit.matched), "")
        return c._say("idea_agree", chosen=chosen, question=h.req.question, unplaced=off,
                      place=c._place_word(fit, off) if off else "", all_on_board=all(p in h.board for p, _ in pairs),
                      figure=fig.name)
    others = []
    for piece, slot in pairs:
        if fit.piece_for_slot(slot) in (p for p, _ in pairs):
            continue
        others.append({"piece": c._trade_parts(piece, slot, fit), "part": fig.parts[fit.slot_of[piece]]})
    return c._say("idea_ok", chosen=chosen, others=others)


@meaning("move", "rotate")
def _move_or_turn(c: Conversation, h: Heard) -> str | None:
    req, piece = h.req, h.piece
    if piece is None:
        return None
    if piece not in h.board:
        return c._from_drawer(req, piece, h.fit, h.board)
    c.plan.state.pending = Pending(req.intent, piece, req.dx, req.dy, req.degrees, req.direction)
    if req.intent == "move":
        return c._say("move_ok", piece=piece, direction=req.direction)
    return c._say("rotate_ok", piece=piece)


@meaning("place_near")
def _place_near(c: Conversation, h: Heard) -> str | None:
    return c._place_near(h.req, h.piece, h.fit, h.board) if h.piece is not None else None


@meaning("where", "unclear")
def _about_piece(c: Conversation, h: Heard) -> str | None:
    if h.piece is None and h.req.intent == "where" and c._moving(h.fit) is not None:
        return c._next(h.fit, h.board)  # "where is that one going?" while the agent's move is under way: that move
    if h.piece is None:
        return None
    # a question about a piece no rule read ("I put the head, is it ok?"): what is true of it, not "what do you want?"
    key = "where" if h.req.intent == "where" or h.req.question else "unclear"
    return c._say(key, **{**h.base, **c._piece_facts(h.piece, h.fit, h.board)})


@meaning("prefer")
def _prefer(c: Conversation, h: Heard) -> str | None:
    piece = h.piece
    if piece is None:
        return None
    part = c.plan.figure.parts[h.fit.slot_of[piece]]
    if piece in c.plan.state.frozen:  # "afinal podes usar o azul" after "eu fico com o azul": the agent's again
        c.plan.state.frozen.discard(piece)
        if piece not in h.fit.matched:
            c.plan.state.first = piece
        then = c.raw("chat", "prefer_done" if piece in h.fit.matched else "next", piece=piece, part=part)
        return c._say("release_piece", piece=piece, then=then)
    made = c.plan.state.announced_pose
    if made is not None and made.piece == piece:  # "use the purple one" while Purple is on its way
        return c._say("playing_now", piece=piece, part=part)
    if piece in h.fit.matched:
        return c._say("prefer_done", piece=piece, part=part)
    c.plan.state.first = piece
    return c._say("prefer_move" if piece in h.board else "prefer_ok", piece=piece, part=part)


@meaning("keep")
def _keep(c: Conversation, h: Heard) -> str | None:
    c.plan.state.keep_human = True
    return c._say("keep_ok", **h.base)


@meaning("keep_piece")
def _keep_piece(c: Conversation, h: Heard) -> str | None:
    piece = h.piece
    if piece is None:
        return None
    c._leave([piece])
    key = "keep_piece_theirs" if h.req.what == "theirs" else "keep_piece_ok"
    return c._say(key, piece=piece, on_board=piece in h.board)


@meaning("claim")
def _claim(c: Conversation, h: Heard) -> str | None:
    """Pieces the partner says are theirs ("i made the hull with red", "fico com o amarelo") are left to
    them; what they leave to the agent ("you do the sail", "tu fazes a outra", "the rest") is its next
    piece: the piece named, else the part's piece that is not theirs, else its plan's next."""
    fig, fit = c.plan.figure, h.fit
    theirs = list(h.req.pieces)
    c._leave(theirs)
    choices: list[str] = []
    if h.req.piece is not None:
        choices = [h.req.piece]
    elif h.req.slot is not None:  # the part named first, then its twins ("the sail": either sail)
        slots = [h.req.slot, *(s for s in fig.pieces_with_part(h.req.part) if s != h.req.slot)]
        choices = [fit.piece_for_slot(s) for s in slots]
    choices = [p for p in choices if p not in theirs]
    done = next((p for p in choices if p in fit.matched), None)
    step = c.plan.promise([p for p in choices if p not in fit.matched], fit, h.board)
    if step is not None and step.piece is not None and step.slot is not None:
        then = c.raw("chat", "claim_then", piece=step.piece, part=fig.parts[step.slot])
    elif done is not None:
        then = c.raw("chat", "prefer_done", piece=done, part=fig.parts[fit.slot_of[done]])
    else:
        then = c._next(fit, h.board)
    return c._say("claim_ok", theirs=theirs, placed=all(p in h.board for p in theirs), then=then)


@meaning("fix")
def _fix(c: Conversation, h: Heard) -> str | None:
    """A part the partner finds out of shape or facing the wrong way: turned round when asked so, else
    set where the figure has it as the agent's next move; a piece already there is asked about."""
    st, fig, fit = c.plan.state, c.plan.figure, h.fit
    if h.req.slot is None:
        return None
    piece = fit.piece_for_slot(h.req.slot)
    values = {"piece": piece, "part": fig.parts[h.req.slot], "figure": fig.name}
    if piece in c.plan.skip(h.board) | c.plan.keep(h.board):
        return c._say("fix_theirs", **values)
    if h.req.what == "round" and piece in h.board:
        st.pending = Pending("rotate", piece, degrees=180.0)
        return c._say("fix_round", **values)
    if piece not in fit.matched:
        step = c.plan.promise([piece], fit, h.board)
        if step is not None:
            return c._say("fix_next", move=step.action == "move", **values)
    return c._say("fix_in_place", **values)


@meaning("strategy")
def _strategy(c: Conversation, h: Heard) -> str | None:
    return c._strategy(h.req, h.fit, h.board)


@meaning("vague")
def _vague(c: Conversation, h: Heard) -> str | None:
    return c._vague(h.req.direction, h.fit, h.board, kind=h.req.what)


@meaning("spatial")
def _spatial(c: Conversation, h: Heard) -> str | None:
    return c._spatial(h.req, h.fit, h.board)


@meaning("swap")
def _swap(c: Conversation, h: Heard) -> str | None:
    """Two pieces' places swapped: each pinned to the other's part, played one piece a turn (pieces of
    two kinds cannot take each other's places; a piece the partner asked to keep is not moved)."""
    if len(h.req.pieces) < 2:
        return None
    a, b = h.req.pieces[:2]
    fig, fit = c.plan.figure, h.fit
    kinds = c.phrases.words.kinds
    if not shapes.same_kind(a, b):
        return c._say("swap_kind", piece=a, other=b, kind=kinds[shapes.kind(a)], other_kind=kinds[shapes.kind(b)],
                      figure=fig.name)
    barred = [p for p in (a, b) if p in c.plan.keep(h.board) | c.plan.skip(h.board)]
    if barred:
        return c._say("swap_kept", piece=barred[0])
    slot_a, slot_b = fit.slot_of[a], fit.slot_of[b]
    c._trade_parts(a, slot_b, fit)
    return c._say("swap_ok", piece=a, other=b, part=fig.parts[slot_b], other_part=fig.parts[slot_a])


@meaning("check")
def _check(c: Conversation, h: Heard) -> str | None:
    """"Is this right?": each of the partner's pieces on the board (at most two, those out of place
    first) in its place or not, and where it goes; the progress when they placed none."""
    st, fit = c.plan.state, h.fit
    theirs = sorted((p for p in h.board if st.movers.get(p) == "partner"), key=lambda p: p in fit.matched)[:2]
    if not theirs:
        return c._say("check_nothing", progress=c._progress(fit, h.board))
    facts = [c._piece_facts(p, fit, h.board) for p in theirs]
    return c._say("check", good=[f for f in facts if f["in_place"]], off=[f for f in facts if not f["in_place"]],
                  figure=c.plan.figure.name)


@meaning("unknown_figure")
def _unknown_figure(c: Conversation, h: Heard) -> str | None:
    req, fig = h.req, c.plan.figure
    nearest = req.figure if req.figure is not None and req.figure.name != fig.name else None
    c.plan.state.offer = nearest
    return c._say("unknown_figure", what=req.what, nearest=nearest.name if nearest else "",
                  same=req.figure is not None and req.figure.name == fig.name, **h.base)


@meaning("release")
def _release(c: Conversation, h: Heard) -> str | None:
    st = c.plan.state
    st.keep_human = False
    if h.req.what == "all":  # "never mind what i said, do it your way": back to the agent's own plan
        st.pending, st.after_place, st.first, st.skip_turns = None, None, None, 0
        st.queued.clear()
        st.frozen.clear()
        return c._say("never_mind_ok", plan=c._next(h.fit, h.board))
    return c._say("release_ok", **h.base)


def _last_said(c: Conversation, h: Heard) -> str:
    """The agent's last turn line, to quote in the partner's language: as said when it was said in
    that language; else (said before the partner wrote in another) its move said again in theirs."""
    st = c.plan.state
    last = st.last_line
    if not last:
        return last
    said_in = c.languages.detect(last)  # an English line may read as no language at all: kept
    if said_in == st.lang or (st.lang == c.phrases.lang and said_in not in c.languages.data.answered):
        return last
    piece = st.last_piece
    if piece is None or piece not in h.fit.slot_of:
        return ""
    return c.lines.raw("chat", "last_move", piece=piece, part=c.plan.figure.parts[h.fit.slot_of[piece]])


@meaning("why")
def _why(c: Conversation, h: Heard) -> str | None:
    moving = c._moving(h.fit)
    if moving is not None and h.piece in (None, moving):
        # "why are you moving that one?" while the move is under way: that move, not yet landed, and its reason
        return c._say("why_now", piece=moving, part=c.plan.figure.parts[h.fit.slot_of[moving]],
                      figure=c.plan.figure.name)
    if h.piece is not None and h.piece != c.plan.state.last_piece:
        # "why is the parallelogram there?" about a piece the agent did not just move: that piece's part and place
        return c._say("where", **{**h.base, **c._piece_facts(h.piece, h.fit, h.board)})
    last = _last_said(c, h)
    return c._say("why", last=last) if last else c._say("why_nothing")


@meaning("disagree")
def _disagree(c: Conversation, h: Heard) -> str | None:
    st = c.plan.state
    last = c.last_change
    if h.req.what == "meant" and last is not None and h.piece is not None and last.piece != h.piece:
        # "sorry i meant the cream one not red": the last request again, of the piece meant
        again = c._answer(replace(last, piece=h.piece, pieces=()), h.fit, h.board)
        kind = c.last_reply_kind
        reply = f"{c.lines.raw('chat', 'meant', piece=h.piece, other=last.piece)} {again}"
        c.last_reply_kind = kind
        return reply
    done = st.asked_done
    if h.req.what == "corrected" and done is not None and done.piece == st.last_piece:
        # "I said beside, not on top": the request it carried out, taken up again with the side named
        # (put there on the next turn; moved further that way when it is the side it was put on),
        # else with the side to ask
        side = h.req.relation
        if side and side != done.relation:
            words = c.phrases.words.relations[side][0]
            st.pending = Pending("place", done.piece, direction=words, relation=side, anchor=done.anchor)
            return c._say("corrected_replace", piece=done.piece, relation=words, anchor=done.anchor)
        if side in _SIDE_MOVES:
            direction = _SIDE_MOVES[side]
            step = c.phrases.vocabulary.steps.default
            dx, dy = offset(direction, step)
            st.pending = Pending("move", done.piece, dx, dy, direction=direction)
            return c._say("corrected_move", piece=done.piece, direction=direction,
                          relation=c.phrases.words.relations[side][0], anchor=done.anchor)
        return c._say("corrected_place", piece=done.piece, relation=done.direction, anchor=done.anchor)
    example = h.piece or st.last_piece or next(iter(h.fit.slot_of))
    return c._say("disagree", last=_last_said(c, h), piece=example,
                  part=c.plan.figure.parts[h.fit.slot_of[example]])


_SIDE_MOVES = {"below": "down", "above": "up", "left_of": "left", "right_of": "right"}
"""The way to move a piece that should be further to a side of another than it is."""


@meaning("undo")
def _undo(c: Conversation, h: Heard) -> str | None:
    """"Undo your last move", "put it back where it was": the agent's last piece goes back where it was
    on the next turn; one it took from the drawer cannot go back there (the game has no way), which
    the reply says, naming it. A piece the line names that the agent did not move last is moved as asked."""
    st, board = c.plan.state, h.board
    last = st.last_piece
    if last is not None and last in board and h.piece in (None, last):
        if st.last_from is None:
            return c._say("undo_from_drawer", piece=last, part=c.plan.figure.parts[h.fit.slot_of[last]])
        st.pending = Pending("restore", last, pose=st.last_from)
        return c._say("undo_ok", piece=last)
    example = h.piece or last or next(iter(board), "Red")
    other = next((p for p in board if p != example), next(p for p in h.fit.slot_of if p != example))
    return c._say("undo", piece=example, other=other)


@meaning("resize")
def _resize(c: Conversation, h: Heard) -> str | None:
    return c._say("resize", **h.base)


@meaning("wait")
def _wait(c: Conversation, h: Heard) -> str | None:
    st = c.plan.state
    if h.req.what:  # the partner plays the next piece, or the rest
        st.skip_turns = HANDOVER_TURNS if h.req.what == "rest" else 1
        return c._say("handover_ok", rest=h.req.what == "rest")
    st.skip_turns = 1
    return c._say("wait_ok")


@meaning("next")
def _next(c: Conversation, h: Heard) -> str | None:
    return c._next(h.fit, h.board)


@meaning("for_you")
def _for_you(c: Conversation, h: Heard) -> str | None:
    return c._for_you(h.piece, h.fit, h.board)


@meaning("plan")
def _plan(c: Conversation, h: Heard) -> str | None:
    """The figure and how far it is; asked for the plan itself ("explain your plan"), each piece still to
    place with its part, as many as the chat line holds."""
    fig, fit = c.plan.figure, h.fit
    barred = c.plan.skip(h.board)
    steps = [{"piece": p, "part": fig.parts[fit.slot_of[p]]} for p in build_order(fig, fit)
             if p not in fit.matched and p not in barred] if h.req.what == "steps" else []
    listed = [{"progress": c._progress(fit, h.board, 0), "steps": steps[:n], "more": len(steps) - n, **h.base}
              for n in (len(steps), 3, 2) if n]
    plain = [{"progress": c._progress(fit, h.board, n), "steps": [], "more": 0, **h.base} for n in (4, 2, 0)]
    return c._say_within("plan", [*listed, *plain])


@meaning("progress")
def _progress(c: Conversation, h: Heard) -> str | None:
    if _complete(h.fit):  # "are we done?" on a finished figure: yes
        return c._say("next_done", **h.base)
    c.last_reply_kind = "progress"
    return c._progress(h.fit, h.board)


@meaning("thanks", "praise", "how_are_you", "ack", "smalltalk")
def _remark(c: Conversation, h: Heard) -> str | None:
    # on a complete figure, praise and thanks are the pair's: said so, not answered with a count
    return c._say(h.req.intent, progress=c._progress(h.fit, h.board), complete=_complete(h.fit), **h.base)


def _complete(fit: Fit) -> bool:
    """Every piece of the figure in place."""
    return len(fit.matched) == len(fit.slot_of)


@meaning("greeting", "bye", "identity", "help")
def _social(c: Conversation, h: Heard) -> str | None:
    return c._say(h.req.intent, **h.base)


@meaning("declared")
def _declared(c: Conversation, h: Heard) -> str | None:
    """A meaning declared in dialogue/words/meanings.yaml: its reply, the chat line of its name."""
    drawer = [p for p in h.fit.slot_of if p not in h.board]
    uses = load_meanings().variables.get(h.req.what, frozenset())
    # what the agent plays next (as "what's next?" says it), a piece for the partner (as "what should I do?")
    after = c._next(h.fit, h.board) if "plays_next" in uses else ""
    hint = c._for_you(None, h.fit, h.board) if "for_you" in uses else ""
    moving = c.plan.state.announced_pose
    movers = c.plan.state.movers
    ours = [p for p in h.fit.slot_of if p in h.board and movers.get(p) == "agent"]
    theirs = [p for p in h.fit.slot_of if p in h.board and movers.get(p) == "partner"]
    return c._say(h.req.what, placed=len(h.fit.matched), total=len(h.fit.slot_of), drawer=drawer, plays_next=after,
                  for_you=hint, ours=ours, theirs=theirs,
                  moving=moving.piece if moving is not None and "moving" in uses else "", **h.base)


@meaning("unknown_piece")
def _unknown_piece(c: Conversation, h: Heard) -> str | None:
    return c._say("unknown_piece", direction=h.req.direction)


_INTERRUPTS = frozenset({"wait", "disagree", "undo", "keep", "keep_piece"})
"""Lines that, while the agent's move is under way, are about that move ("stop!", "not that piece",
"let me do this one", "don't touch that one")."""


def _interrupts(req: Request, made: Pose) -> bool:
    """Whether a line read as ``req`` is about the move under way (of ``made``)."""
    if req.intent not in _INTERRUPTS:
        return False
    if req.intent == "wait":
        return req.what != "rest"  # "leave the rest to me" is about the game, not this move
    return req.intent != "keep_piece" or req.piece in (None, made.piece)


def _names_mine(text: str) -> bool:
    """A constraint about the partner's own pieces ("don't move my pieces"), not about one move
    ("don't touch that one"); ``text`` is the line in English words."""
    return bool({"my", "mine"} & set(re.findall(r"[a-z]+", text.lower())))


_SPEAKS_OF_MOVE = frozenset({"playing_now", "why_now", "under_way"})
"""Replies that already say which piece the move under way places."""
_UNREAD_WHILE_MOVING = frozenset({"other", "unclear", "vague"})
"""Questions asked while the agent moves that its move answers alone ("tás a fazer as chamas?")."""
_GREETS = frozenset({"greeting", "switch_slip", "how_are_you", "bye", "other_language"})
"""Replies that greet (or say goodbye) themselves: a greeting line gets no second hello."""
_CHANGES = frozenset({"move", "rotate", "place_near", "wait", "prefer", "assign", "fix"})
"""Requests that change what the agent does next: two of them in one line are both taken up."""
_JOINS = re.compile(r"\s*(?:,\s*)?\b(?:and then|and also|and|then|e depois|e tambem|e também|depois|e)\b\s*", re.I)
"""Where a line asking for two changes is cut in two ("turn blue and move brown left")."""
MAX_CUTS = 2
"""Joins tried per line: each reads both sides again, so a line of many "and"s costs a bounded time."""


_QUESTIONS = frozenset({"where", "why", "next", "plan", "for_you", "progress"})
"""Questions that, asked beside a change in one line, are answered beside it."""


def _two_asks(message: str, read: Callable[[str, str | None], Understood]) -> tuple[Request, Request] | None:
    """The two things ``message`` asks for: two changes, each of its own piece, or a change and a
    question; None when it asks for one. The line is cut at a join, and each side must read as a
    change (or a question) on its own."""
    for cut in itertools.islice(_JOINS.finditer(message), MAX_CUTS):
        left, right = message[:cut.start()].strip(), message[cut.end():].strip()
        if len(left.split()) < 2 or len(right.split()) < 2:
            continue
        a = read(left, None).request
        b = read(right, a.piece).request  # "what is the red one for? and can you turn it": it is the red one
        if a.intent in _CHANGES and b.intent in _CHANGES and (b.piece != a.piece or b.intent != a.intent) \
                and (b.piece is not None or b.intent == "wait"):
            return a, b
        if {a.intent, b.intent} & _CHANGES and {a.intent, b.intent} & _QUESTIONS \
                and all(r.piece is not None or r.slot is not None or r.intent not in ("where", "move", "rotate")
                        for r in (a, b)):  # "move the tail up a bit and tell me whats next": the tail's piece
            return a, b
    return None


def _line(text: str) -> str:
    return clean_chat_text(text, PARTNER_LINE_CHARS)
