"""The offline strategy: one command for the active bee from the world model and the plan.

Pure decision logic (no I/O, no clock): foraging with path planning and per-bee flower claims,
exploring what nobody has seen, delivering to our hive only, and the tactical moves the rules
allow: knocking flowers off enemy carriers, breaking walls in our way, walling the enemy hive's
entrances (raiders), and clearing our own hive's surroundings (defenders).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from agent.games.hive.protocol import BeeView
from agent.games.hive.rules import (
    BEES,
    CELLS,
    COLS,
    OFFSETS,
    Action,
    Cell,
    is_hive,
)
from agent.games.hive.strategy import blockade, guard, relay
from agent.games.hive.strategy.moves import Decision, Mover
from agent.games.hive.strategy.paths import (
    BLOCKED,
    COST_WALL,
    INF,
    NEIGHBOURS,
    distance_field,
)
from agent.games.hive.strategy.plan import Plan, Role
from agent.games.hive.strategy.world import FRESH_BEE, new_world

STALE_FLOWER = 600
"""A flower not seen for this long is worth less: an enemy may have picked it."""
EXPLORE_AGE = 150
"""Cells not seen for this long are worth another look when no flower is known."""
CLAIM_PENALTY = 40
CARRY_FACTOR = 1.5
"""A carrier's move fails one time in three: each step home costs 1.5 turns on average."""

DEFAULT_RAIDERS: dict[int, frozenset[int]] = {0: frozenset({0, 3, 4}), 1: frozenset({2, 3, 4})}
"""Without a plan, three bees blockade the enemy hive (blockade.py) and two forage, by seat.
Measured on the real arena against the 2022 agents (docs/hive.md): three raiders at posts by the
enemy hive beat one raider walling from outside; two leaked more, four left too few foragers.
The two foragers are bees whose turns follow each other (1 and 2 as player 0, 0 and 1 as player
1: one enemy bee, their bee 1, acts between them), so that the first, our guard, can open a
wall of our sealed ring for the second on the turn before it walks in (relay.py). Against a
sealer the timed relay and the walk-in need that; with foragers 1 and 3 (raiders 0, 2 and 4, the
strategy before) two or three enemy bees acted in the gap, their rebuilder among them."""

DEFAULT_AGGRESSION = 0.5
RAID_AGGRESSION = 0.2
"""Below this, bees left out of a plan all forage (no default raider)."""
HOLD_AGGRESSION = 0.5
"""From this on, a raider whose enemy hive is walled in stays beside it to rebuild what is broken."""

GUARDS = 1
"""How many empty-handed bees turn guard while our hive is threatened: against the 2022 wall
builders one guard and two did equally well (seeds 3000-3011), and one leaves more foragers."""

STUCK_TURNS = 6
"""A carrier that has not moved for this many of its turns (six rounds) is breaking walls that
are rebuilt as fast (a wall builder's bees stand beside them): it walks around walls instead, for
AROUND_WALLS_TURNS. Seen against tribe13's own agent: a carrier guarded the same rebuilt wall next
to our hive for 2,000 turns while a free cell of the ring was a dozen steps around."""
AROUND_WALLS_TURNS = 300
COST_WALL_AVOIDED = 16

HOLDER_TURNS = 40
"""An enemy bee standing in a cell of its own hive's ring for this long (four rounds) holds it:
their guard, a receiver of flowers passed over our walls. A carrier about to deliver stays one turn."""


@dataclass
class Strategy(Mover):
    """Decides for one player; keep one per match."""

    plan: Plan | None = None
    claims: dict[int, int] = field(default_factory=dict)
    """bee -> cell it is heading for (flower or exploration target)."""
    around_walls_until: dict[int, int] = field(default_factory=dict)
    """bee -> turn until which this carrier walks around walls instead of breaking them."""
    last_pos: dict[int, int] = field(default_factory=dict)
    adaptive: bool = True
    """Read the opponent's plan from the map and answer it (off: the strategy before issue 31)."""
    held_since: dict[int, int] = field(default_factory=dict)
    """Cell of the enemy hive's ring -> turn since which an enemy bee has been seen standing there."""
    relaying: set[int] = field(default_factory=set)
    """Those of them where the bee standing there was seen with a flower: a receiver of passed flowers."""
    openings: relay.Openings = field(default_factory=relay.Openings)
    """Walls our guard broke for a waiting carrier, and which ones their bees rebuild first."""

    def post_order(self, hive: int) -> list[int]:
        """The raiders' posts by the enemy hive, best first (a counter-bot overrides it)."""
        return blockade.posts(hive)

    # ---- entry point ------------------------------------------------------------------------

    def decide(self, view: BeeView) -> Decision:
        self.world.update(view)
        me = view.row * COLS + view.col
        self.stuck[view.bee] = self.stuck.get(view.bee, 0) + 1 if self.last_pos.get(view.bee) == me else 0
        self.last_pos[view.bee] = me
        decision = self._decide(view, me)
        if decision.action == Action.MOVE:
            dr, dc = OFFSETS[decision.direction]
            target = (view.row + dr) * COLS + view.col + dc
            if 0 <= view.row + dr < 25 and 0 <= view.col + dc < COLS:
                self.world.note_move(view.bee, target)
        return decision

    def role_of(self, bee: int) -> Role:
        order = self.plan.order_for(bee) if self.plan else None
        if order is not None:
            return order.role
        if self.aggression < RAID_AGGRESSION:
            return "forage"
        return "raid" if bee in DEFAULT_RAIDERS[self.world.player] else "forage"

    @property
    def aggression(self) -> float:
        return self.plan.aggression if self.plan else DEFAULT_AGGRESSION

    # ---- the decision -------------------------------------------------------------------------

    def _decide(self, view: BeeView, me: int) -> Decision:
        world = self.world
        around = self._around(view)
        role = self.role_of(view.bee)
        if view.carrying and self.adaptive and role == "raid" and self._at_blockade(me):
            # A raider holding a flower it took from their relay keeps raiding (it may still
            # build and guard) and never delivers it: walking home would open their hive.
            raid = self._raid(view, me, around)
            if raid is not None:
                return raid
        if view.carrying:
            hive_dir = self._adjacent(around, {int(Cell.HIVE_0 + world.player)})
            if hive_dir is not None:
                self.claims.pop(view.bee, None)
                return Decision(Action.FORAGE, hive_dir, "deliver")
            # Against a wall builder (walls at our hive) our bees in its ring hold their cells and
            # never step aside: a way in through one of them is no way in, and passing the flower
            # to one of them is, whenever that is nearer than a free way in. Seen against the 2022
            # wall builders: a carrier stepped back and forth behind our guard for 1,500 turns
            # while a free ring cell was a dozen steps around.
            against_walls = guard.walls_near(world)
            passing = against_walls or guard.walled_out(world, me, self.adaptive)
            receivers = guard.receivers(world, view.bee) if passing else []
            if receivers:
                near = relay.drop_cells(world, receivers)
                walk_in = self._walk_in(view, me, around, receivers, near)
                if walk_in is not None:
                    return walk_in
                for direction, (cell, index) in enumerate(around):
                    if cell == Cell.EMPTY and index in near:
                        return Decision(Action.FORAGE, direction, "pass the flower to a guard at our hive",
                                        world.hive)
                if self.adaptive and relay.sealed(world):
                    waiting = self._wait_for_opening(view, me, around, receivers)
                    if waiting is not None:
                        return waiting
            if self.stuck.get(view.bee, 0) >= STUCK_TURNS:
                # Breaking the same walls for rounds: they are being rebuilt. Walk around.
                self.around_walls_until[view.bee] = view.turn + AROUND_WALLS_TURNS
            walls = COST_WALL_AVOIDED if self.around_walls_until.get(view.bee, -1) > view.turn else COST_WALL
            costs = self._costs(me, walls)
            if against_walls:
                for holder in receivers:
                    costs[holder] = BLOCKED
            if self.adaptive:
                # Their bees holding our ring never step aside: waiting behind one (it looked a
                # cheap way in) kept our carriers outside with their flowers for the whole match.
                for holder in guard.holders(world):
                    costs[holder] = BLOCKED
            field_home = distance_field(costs, [world.hive, *receivers], until=self._settle(me))
            return self._step(view, around, field_home, "carry home", world.hive)

        if role == "raid":
            # A raider goes straight for the blockade and rebuilds before anything else: a
            # knocked flower lands beside their bees, who pick it up again.
            raid = self._raid(view, me, around)
            if raid is not None:
                return raid
        knock = self._knockable(around)
        if knock is not None:
            return Decision(Action.GUARD, knock, "knock the flower off an enemy carrier")

        if role == "forage" and self._is_guard(view.bee):
            guarding = self._guard(view, me, around)
            if guarding is not None:
                return guarding
        if role == "defend":
            defend = self._defend(view, me, around)
            if defend is not None:
                return defend

        flower_dir = self._adjacent(around, {int(Cell.FLOWER)})
        if flower_dir is not None:
            self.claims.pop(view.bee, None)
            return Decision(Action.FORAGE, flower_dir, "pick up a flower")

        costs = self._costs(me)
        field_me = distance_field(costs, [me])
        target, why = self._choose_target(view, me, field_me, costs, role)
        if target is None:
            # Nothing known to fetch and nothing to explore: close the enemy hive instead.
            raid = self._raid(view, me, around)
            if raid is not None:
                return raid
            return self._wait(view, around, "nothing to do")
        self.claims[view.bee] = target
        field_target = distance_field(costs, [target], until=self._settle(me))
        return self._step(view, around, field_target, why, target)

    # ---- pieces -------------------------------------------------------------------------------

    def _choose_target(self, view: BeeView, me: int, field_me: list[int], costs: bytearray,
                       role: Role) -> tuple[int | None, str]:
        world = self.world
        order = self.plan.order_for(view.bee) if self.plan else None
        if order is not None and order.target is not None:
            target = order.target[0] * COLS + order.target[1]
            if not is_hive(world.cells[target]) and target != me:
                return target, "coach's target"
        others = {b: t for b, t in self.claims.items() if b != view.bee}
        claimed = set(others.values())
        if role != "explore":
            flowers = world.flowers()
            if flowers:
                field_home = distance_field(costs, [world.hive])
                best: int | None = None
                best_score = float(INF)
                for f in flowers:
                    reach = min((field_me[n] for n in NEIGHBOURS[f]), default=INF)
                    if reach >= INF:
                        continue
                    home = min((field_home[n] for n in NEIGHBOURS[f]), default=INF)
                    if home >= INF:
                        home = 60
                    score = reach + CARRY_FACTOR * home
                    if f in claimed:
                        score += CLAIM_PENALTY
                    if world.age(f) > STALE_FLOWER:
                        score += 20
                    if role == "defend":
                        score += 3 * reach
                    if score < best_score:
                        best, best_score = f, score
                if best is not None:
                    return best, "fetch a flower"
        return self._explore_target(me, field_me, claimed), "explore"

    def _explore_target(self, me: int, field_me: list[int], claimed: set[int]) -> int | None:
        world = self.world
        seen = world.seen
        turn = world.turn
        best, best_score = None, INF
        claimed_rc = [divmod(c, COLS) for c in claimed]
        for i in range(CELLS):
            age = turn - seen[i]
            if age < EXPLORE_AGE or field_me[i] >= INF or i == me:
                continue
            score = field_me[i] - min(age, 2000) // 100
            r, c = divmod(i, COLS)
            for cr, cc in claimed_rc:
                if abs(cr - r) <= 6 and abs(cc - c) <= 6:
                    score += 30
            if score < best_score:
                best, best_score = i, score
        return best

    def _walk_in(self, view: BeeView, me: int, around: list[tuple[int, int]],
                 receivers: list[int], near: set[int]) -> Decision | None:
        """A carrier kept out of our hive walks in rather than pass its flower where it can
        (relay.py): into a free cell of our ring beside it; sealed in, it waits beside a wall of
        our ring that our guard opens (not one it keeps finding rebuilt, and out of their bees'
        reach when it can), or steps next to one through a cell the guard opened (``near``: the
        cells beside our receivers)."""
        if not self.adaptive:
            return None
        world = self.world
        ring = NEIGHBOURS[world.hive]
        for direction, (cell, index) in enumerate(around):
            if cell == Cell.EMPTY and index in ring:
                return Decision(Action.MOVE, direction, "walk into our hive's ring", world.hive)
        if not relay.sealed(world):
            return None
        self.openings.seen_by_carrier(world, me)
        # A wall the carrier keeps finding rebuilt has a rebuilder of theirs beside it whose turn
        # falls between our guard's and the carrier's: wait by another (the misses counted here).
        avoid = self.openings.avoided(world.turn)
        walls = relay.ring_walls(world, receivers) - avoid
        if relay.beside_ring_wall(world, me, walls):
            # Beside one of their bees, it knocks the flower off every round: wait out of its
            # reach when such a spot exists (walk_in_spots), else here.
            spots = relay.walk_in_spots(world, receivers, me, world.enemy_bees(FRESH_BEE), avoid)
            if me in spots or not spots:
                return self._wait(view, around, "wait beside a wall of our ring")
            return None
        for direction, (cell, index) in enumerate(around):
            if cell == Cell.EMPTY and index in near and relay.beside_ring_wall(world, index, walls):
                return Decision(Action.MOVE, direction, "step beside a wall of our ring", world.hive)
        return None

    def _wait_for_opening(self, view: BeeView, me: int, around: list[tuple[int, int]],
                          receivers: list[int]) -> Decision | None:
        """Sealed out: wait beside a wall next to our guard, out of their reach, until the guard
        breaks it (relay.py); None when no such cell can be reached."""
        enemies = self.world.enemy_bees(FRESH_BEE)
        spots = relay.walk_in_spots(self.world, receivers, me, enemies, self.openings.avoided(self.world.turn))
        if me in spots:
            return self._wait(view, around, "wait for our guard to open a cell")
        if not spots:
            return None
        costs = self._costs(me)
        for enemy in enemies:
            costs[enemy] = BLOCKED
        dist = distance_field(costs, list(spots), until=self._settle(me))
        if dist[me] >= INF:
            return None
        return self._step(view, around, dist, "go wait beside our guard", self.world.hive)

    def _raid(self, view: BeeView, me: int, around: list[tuple[int, int]]) -> Decision | None:
        """Blockade the enemy hive: stand at a post by it, wall the ring cells beside us and
        rebuild those they break (see blockade.py), so their carriers cannot deliver."""
        world = self.world
        ring = set(blockade.ring(world.enemy_hive))
        raiders = {b.index: b.position for b in world.bees if self.role_of(b.index) == "raid"}
        enemy_bees = (int(Cell.BEE_0 + world.opponent), int(Cell.BEE_0_WITH_FLOWER + world.opponent))
        taken = {i for i in ring if world.cells[i] in enemy_bees and world.age(i) <= FRESH_BEE}
        carrying = {i for i in taken if world.cells[i] == enemy_bees[1]}
        candidates = self.post_order(world.enemy_hive)
        holders = self._their_holders(taken, carrying) if self.adaptive else []
        if holders:
            # Their guard holds a ring cell and receives flowers dropped beside it over our walls
            # (against the counter-bots 22 of 28 of their points came through one such guard):
            # a raider stands on the middle one of those cells and walls the others.
            enclosures = [blockade.enclosure(world.enemy_hive, h) for h in holders]
            candidates = list(dict.fromkeys([e for e in enclosures if e is not None] + candidates))
        posts = blockade.assign_posts(world.enemy_hive, raiders, taken, candidates)
        # A post stays open for its raider only once the raider is close: until then, a wall
        # there keeps their carriers out (the raider breaks it when it arrives).
        held = {p for b, p in posts.items() if b == view.bee or blockade.chebyshev(raiders[b], p) <= 2}
        # Enemy bees within two cells: those that can step into or break a hole beside us.
        enemies = {n for i in NEIGHBOURS[me] for n in NEIGHBOURS[i] if world.cells[n] in enemy_bees}
        empty = {index: direction for direction, (cell, index) in enumerate(around) if cell == Cell.EMPTY}
        if self.adaptive:
            # A flower passed over our walls to their bee in the ring is a point on its next turn.
            drops = blockade.relay_drops(world.enemy_hive, me, world.cells, int(Cell.BEE_0 + world.opponent))
            for direction, (_, index) in enumerate(around):
                if index in drops:
                    # Taken, it is gone for sure (a guard breaks it one try in two): the flower
                    # of a timed relay (relay.py) lies there only until their guard's next turn.
                    if view.carrying:
                        return Decision(Action.GUARD, direction, "break a flower passed to their hive",
                                        world.enemy_hive)
                    return Decision(Action.FORAGE, direction, "take a flower passed to their hive", world.enemy_hive)
        for index in blockade.to_wall(world.enemy_hive, me, held, set(raiders.values()), enemies):
            if index in empty:
                return Decision(Action.BUILD, empty[index], "wall the enemy hive", world.enemy_hive)
        if holders:
            closed = held | set(raiders.values())
            for h in holders:
                for index in blockade.drop_cells(world.enemy_hive, h):
                    if index in empty and index not in closed:
                        return Decision(Action.BUILD, empty[index], "wall around their guard", world.enemy_hive)
        post = posts.get(view.bee)
        if post == me:
            # Not in the way of a raider still coming: no wall beside a post it has yet to reach.
            coming = {n for b, p in posts.items() if raiders[b] != p for n in NEIGHBOURS[p]}
            for index in blockade.outer_to_wall(world.enemy_hive, me, enemies):
                if index in empty and index not in coming:
                    return Decision(Action.BUILD, empty[index], "wall the enemy hive's second ring",
                                    world.enemy_hive)
        if post == me or (post is None and me in ring):
            # Nothing to build: knock a carrier beside us. It then spends its next turn picking
            # its flower up again instead of breaking one of our walls.
            knock = self._knockable(around)
            if knock is not None:
                return Decision(Action.GUARD, knock, "knock a carrier at the blockade", world.enemy_hive)
            if self.aggression >= HOLD_AGGRESSION or any(world.cells[i] == Cell.EMPTY for i in ring):
                return self._wait(view, around, "holding the enemy hive")
            return None
        if post is None:
            return None
        costs = self._costs(me)
        dist = distance_field(costs, [post], until=self._settle(me))
        return self._step(view, around, dist, "go blockade the enemy hive", world.enemy_hive)

    def _at_blockade(self, me: int) -> bool:
        """Within two cells of the enemy hive."""
        return blockade.chebyshev(me, self.world.enemy_hive) <= 2

    def _their_holders(self, taken: set[int], carrying: set[int]) -> list[int]:
        """The enemy hive's ring cells where an enemy bee (in ``taken`` now) has stood for
        HOLDER_TURNS or more and was seen with a flower since: it receives passed flowers. A bee
        only boxed in there by our walls (the 2022 racers') never carries: enclosing it took the
        raider off the front post, and the racers won again (real arena, ``epk_final``)."""
        turn = self.world.turn
        for cell in list(self.held_since):
            if cell not in taken:
                del self.held_since[cell]
                self.relaying.discard(cell)
        for cell in taken:
            self.held_since.setdefault(cell, turn)
        old = [c for c, since in self.held_since.items() if turn - since >= HOLDER_TURNS]
        self.relaying.update(c for c in old if c in carrying)
        return sorted(c for c in old if c in self.relaying)

    def _defend(self, view: BeeView, me: int, around: list[tuple[int, int]]) -> Decision | None:
        """Keep our hive open: break walls next to it, stay close."""
        world = self.world
        ring = set(NEIGHBOURS[world.hive])
        for direction, (cell, index) in enumerate(around):
            if index in ring and cell == Cell.WALL:
                return Decision(Action.GUARD, direction, "break a wall at our hive")
        walled = [i for i in ring if world.cells[i] == Cell.WALL]
        if walled:
            costs = self._costs(me)
            dist = distance_field(costs, walled)
            return self._step(view, around, dist, "go clear our hive", world.hive)
        return None

    # ---- hive guard (against wall builders) ------------------------------------------------

    def _is_guard(self, bee: int) -> bool:
        """While our hive is threatened, the empty-handed bees nearest it guard it."""
        if not guard.threat(self.world, self.adaptive):
            return False
        hr, hc = divmod(self.world.hive, COLS)

        def distance(position: int) -> int:
            r, c = divmod(position, COLS)
            return max(abs(r - hr), abs(c - hc))

        if self.adaptive:
            first = self._first_forager()
            if first is not None:
                return bee == first
        free = sorted((distance(b.position), b.index) for b in self.world.bees
                      if not b.carrying and self.role_of(b.index) == "forage")
        return bee in {index for _, index in free[:GUARDS]}

    def _first_forager(self) -> int | None:
        """Of two foragers whose turns follow each other, the first, unless it is carrying away
        from our hive: as our guard it opens a wall of a sealed ring on the turn before the
        other walks in or drops its flower (relay.py). None otherwise."""
        foragers = [b.index for b in self.world.bees if self.role_of(b.index) == "forage"]
        if len(foragers) != 2 or GUARDS != 1:
            return None
        first = next((f for f in foragers if (f + 1) % BEES in foragers), None)
        if first is None:
            return None
        bee = self.world.bees[first]
        if bee.carrying and bee.position not in NEIGHBOURS[self.world.hive]:
            return None
        return first

    def _guard(self, view: BeeView, me: int, around: list[tuple[int, int]]) -> Decision | None:
        """Keep a delivery lane into our hive: break the ring's walls, hold a ring cell."""
        world = self.world
        ring = set(NEIGHBOURS[world.hive])
        if me in ring:
            flower_dir = self._adjacent(around, {int(Cell.FLOWER)})
            if flower_dir is not None:
                return Decision(Action.FORAGE, flower_dir, "take a passed flower", world.hive)
        if self.adaptive:
            # A free cell of the ring beside us first: against a siege a broken wall is rebuilt
            # on a raider's next turn, and a cell we stand in cannot be. The best of them
            # (relay.ring_cell_worth); a guard in the ring moves over to a better one while it can.
            free = [(direction, index) for direction, (cell, index) in enumerate(around)
                    if cell == Cell.EMPTY and index in ring]
            if free:
                enemies = world.enemy_bees(FRESH_BEE)
                here = relay.ring_cell_worth(world, me, enemies) if me in ring else -1
                best_dir, best_worth = None, here
                for direction, index in free:
                    # Moving over, our bee leaves the cell it counted as one of ours.
                    worth = relay.ring_cell_worth(world, index, enemies) - (me in ring)
                    if worth > best_worth:
                        best_dir, best_worth = direction, worth
                if best_dir is not None:
                    return Decision(Action.MOVE, best_dir, "step into our hive's ring", world.hive)
        if self.adaptive and me in ring and relay.sealed(world):
            # Sealed: a broken wall is rebuilt on their next turn unless a carrier of ours drops
            # its flower there first (relay.py), so break only one a carrier is waiting beside.
            wall = relay.wall_to_open(world, me, view.bee, self.openings.avoided(world.turn))
            for direction, (_, index) in enumerate(around):
                if index == wall:
                    self.openings.tried(wall, world.turn)
                    return Decision(Action.GUARD, direction, "open a cell for a waiting carrier", world.hive)
            return self._wait(view, around, "hold a cell at our hive")
        lane = guard.lane_walls(self.world)
        best_dir, best_rank = None, INF
        for direction, (cell, index) in enumerate(around):
            if cell == Cell.WALL and index in lane and lane[index] < best_rank:
                best_dir, best_rank = direction, lane[index]
        if best_dir is not None:
            return Decision(Action.GUARD, best_dir, "break a wall sealing our hive", world.hive)
        if me in ring:
            # A bee of ours here is a cell they cannot wall, and a receiver for passed flowers.
            return self._wait(view, around, "hold a cell at our hive")
        costs = self._costs(me)
        targets = [i for i in ring if world.cells[i] == Cell.EMPTY]
        targets += [n for w in lane for n in NEIGHBOURS[w] if world.cells[n] == Cell.EMPTY]
        if not targets:
            return None
        dist = distance_field(costs, targets, until=self._settle(me))
        return self._step(view, around, dist, "go guard our hive", world.hive)


def new_strategy(player: int, seed: int | None = None, plan: Plan | None = None) -> Strategy:
    return Strategy(world=new_world(player), rng=random.Random(seed), plan=plan)


__all__ = ["Decision", "Strategy", "new_strategy"]
