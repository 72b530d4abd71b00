"""The knowledge-free oracle: the fewest steps an honest agent needs, on average, to find what is hidden.

Taught in ``notebooks/08_evaluation.ipynb``, beside :mod:`lares_kit.bench.judging.oracle`.
"Turn on the light for my dog": the omniscient oracle says 2 steps (switch
on the bedroom light, halt) because it *knows* Bruno is in the bedroom. An
honest agent does not: the dog could be in any room, so it must send the
robot to look, lighting dark rooms first: the omniscient number is only a
lower bound. This module asks the fairer question: what is the best any
agent can do *on average*, knowing all about the home but where the thing is?

The agent learns only "found" or "not found" each time the robot looks in
a room, so for one hidden item a policy is just an order of rooms to
inspect. Inspecting a room costs the moves to get there (one call per
exit, along a shortest path), a light call if the room is dark, and one
``look_with_robot``. When the item turns up -- or one room is left, so it
must be there -- the rest is the omniscient completion from that state (a
breadth-first search over the real tools, as in :mod:`~lares_kit.bench.judging.oracle`):
light the item's room, leave the robot there, switch off lights the task
does not let change... and the final ``halt``. Every room is as likely
(nothing in the home says otherwise), so the expected cost of an order is
the average over the rooms of its cost when the item is there.

Which order is best? Dynamic programming over (rooms inspected so far,
robot's room) finds it exactly for up to :data:`EXACT_ROOMS` rooms. A
bigger home gets greedy orders (the cheapest room to look in next, since
every room is as likely) improved by local search -- swapping rooms,
moving or reversing stretches while that helps: an upper bound, achieved
by a real policy. Asking the user "Where is Bruno?" is a policy too, when
the task's user would say.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache
from itertools import permutations, product
from typing import Any

import networkx as nx

from ...home.graph import Home
from ...tools.toolbox import ToolError, default_tools
from ...tools.users import NoAnswer, ScriptedUser
from ..scene import Scene, copy_home, room_pattern, set_stage
from ..suites.tasks import Task
from ..suites.validate import PLACEHOLDER
from .checks import Outcome, matches_forbidden, run_checks, value_ok
from .oracle import TOOLS, OracleError, _candidates, _goal, _key, _set_calls, oracle_steps

__all__ = ["EXACT_ROOMS", "SearchOracle", "hidden_items", "knowledge_free_oracle"]

EXACT_ROOMS = 12  # candidate rooms up to which the dynamic programme runs (~0.06 s at 12; it doubles per room)
BUDGET = 20_000  # search nodes one completion may expand
# Local search budgets, in orders scored (not seconds: the same answer on any machine). One item: LOCAL_WORK / rooms
# per improvement (an order costs its length to score); several items: each order averages every placement.
LOCAL_WORK, MULTI_EVALUATIONS = 100_000, 300
CONSTRUCT_ROOMS = 30  # above this many rooms only the cheap starting orders are built (the others cost n^3, n^4)
QUESTION = "Where is {}?"  # what an agent asks the user, with the item's name


@dataclass(frozen=True)
class SearchOracle:
    """What the knowledge-free oracle says about one task and seed.

    ``expected`` is the smallest expected number of steps (tool calls, the final ``halt`` and any question, counted
    as :func:`~lares_kit.bench.judging.oracle.oracle_steps` counts them), every room as likely to hold the hidden item.
    ``worst`` is the minimax value: the fewest steps that solve the task *whatever* the placement (the best
    policy's worst case). ``omniscient`` is the oracle that knows this seed's placement; ``omniscient_mean`` is its
    average over the placements, a lower bound on ``expected``.
    """

    items: tuple[str, ...]  # the hidden items the task names
    rooms: tuple[str, ...]  # where they could be (every room the robot can reach and see into)
    expected: float
    worst: int
    exact: bool  # True: both values are optima; False: upper bounds, each achieved by a real policy
    omniscient: int
    omniscient_mean: float
    order: tuple[str, ...]  # the expected-optimal order to look in (its last room may be deduced); () if it asks
    worst_order: tuple[str, ...]  # the minimax policy's order; () if asking (or lighting every room) is better
    policy: str  # the expected-optimal policy: "search", "ask" (the user says where) or "light-all"
    expected_fraction: Fraction  # ``expected``, exactly


def hidden_items(task: Task, home: Home) -> list[str]:
    """The items the agent must locate: named in ``seen``, ``lit``, ``robot`` or a ``{item.room}`` mention.

    Args:
        task: The task.
        home: Its home (to tell items from rooms).

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.bench.suites.tasks import Expect, Task
        >>> task = Task("t", "demo", "lares-home", "search", "Light for Sally and say where Bruno is.",
        ...             expect=Expect(lit=["sally", "hallway"], mentions=["{bruno.room}"]))
        >>> hidden_items(task, load_world("lares-home"))
        ['sally', 'bruno']
    """
    e = task.expect
    named = [*e.seen, *e.lit, *([e.robot] if e.robot else []),
             *(m.group(1) for p in e.mentions for m in PLACEHOLDER.finditer(p) if m.group(2))]
    return [i for i in dict.fromkeys(named) if i in home.items]


def _bfs(scene: Scene, start: Home, tools: set[str]) -> int | None:
    # oracle_plan's search from any home, plus calls that switch back a light the search for the item switched
    # on (the oracle itself only touches lights in rooms that matter); None: no way to finish.
    def moved(home: Home) -> list[Any]:
        return [d for d in home.lights() if d.state.get("on") != scene.start[d.id].get("on")]

    def calls(home: Home) -> list[Any]:
        back = [c for d in moved(home) for c in _set_calls(d, "on", scene.start[d.id].get("on"), tools)
                if not any(matches_forbidden(r, *c) for r in scene.task.expect.forbidden)]
        return _candidates(scene, home, tools) + back

    def key(home: Home) -> str:
        return _key(scene, home) + json.dumps(sorted(d.id for d in moved(home)))

    if _goal(scene, start):
        return 0
    frontier, visited = deque([(start, 0)]), {key(start)}
    while frontier and len(visited) < BUDGET:
        home, depth = frontier.popleft()
        for name, args in calls(home):
            child = copy_home(home)
            try:
                TOOLS[name](child, **args)
            except ToolError:
                continue
            if (k := key(child)) not in visited:
                if _goal(scene, child):
                    return depth + 1
                visited.add(k)
                frontier.append((child, depth + 1))
    return None


class _Model:
    """A task's home as the searching agent sees it: what looking costs, and what finishing costs per placement."""

    def __init__(self, task: Task, world: Home, seed: int) -> None:
        self.task, self.world, self.seed = task, world, seed
        self.base = base = set_stage(task, world, seed)
        self.items = hidden_items(task, base.home)
        self.tools = {fn.__name__ for fn in default_tools(base.home)}
        self.start = base.home.robot.room
        self.dist = dict(nx.all_pairs_shortest_path_length(base.home.graph))
        self.tail = 1 + bool(task.expect.must_ask)  # the halt, and the question a task must ask
        self.scenes: dict[tuple[str, ...], Scene] = {}
        self.memo: dict[Any, int | None] = {}
        # room -> (the light to switch on, None if lit; must it go off again?), for the rooms the robot can see into
        self.light = {r: v for r in base.home.graph.nodes if (v := self._light(r)) is not None}
        e, devices = task.expect, base.home.devices
        wanted = {p for p in e.lit if p not in base.home.items} | {
            devices[d].room for d in e.states if devices[d].type == "light"}
        self.helps = any(self.light[r][0] for r in wanted & set(self.light))  # a search's light may save a call

    def _light(self, room: str) -> tuple[str | None, bool] | None:
        home, expect = self.base.home, self.task.expect
        if home.is_lit(room):
            return None, False
        options = []  # (must it go off again?, light id): a light the task lets stay on first
        for d in home.devices_in(room, "light"):
            if d.exposed and any(not self.forbidden(*c) for c in _set_calls(d, "on", True, self.tools)):
                lit = copy_home(home)
                lit.update_device(d.id, {"on": True})
                want = expect.states.get(d.id, {}).get("on", True)
                options.append((not self.passes(("unchanged",), lit) or not value_ok(True, want), d.id))
        return (min(options)[1], min(options)[0]) if options else None

    def forbidden(self, tool: str, args: dict[str, Any]) -> bool:
        return any(matches_forbidden(r, tool, args) for r in self.task.expect.forbidden)

    def passes(self, kinds: tuple[str, ...], home: Home | None = None, asked: tuple[str, ...] = ()) -> bool:
        """Whether these checks pass on a home (default: the start) after these questions."""
        outcome = Outcome(home or self.base.home, self.base.start, self.base.context, asked=list(asked))
        return all(r.passed for r in run_checks(self.task.expect, outcome, kinds))

    def scene(self, placement: tuple[str, ...]) -> Scene:
        if placement not in self.scenes:
            setup = self.task.setup
            setup = replace(setup, placements={**setup.placements, **dict(zip(self.items, placement))})
            self.scenes[placement] = set_stage(replace(self.task, setup=setup), self.world, self.seed)
        return self.scenes[placement]

    def complete(self, robot: str, placement: tuple[str, ...], seen: frozenset = frozenset(),
                 lit: frozenset = frozenset()) -> int | None:
        """Calls (without the halt) that finish the task from: the robot here, these items seen, these rooms lit."""
        key = (robot, placement, seen, lit)
        if key not in self.memo:
            scene = self.scene(placement)
            home = copy_home(scene.home)
            home.move_robot(robot)
            for light in [self.light[r][0] for r in lit if self.light[r][0]]:
                home.update_device(light, {"on": True})
            for item in seen:
                home.record_sighting(item, home.items[item].room)
            self.memo[key] = _bfs(scene, home, self.tools)
        return self.memo[key]

    def finish(self, robot: str, placement: tuple[str, ...], seen: set[str], lit: set[str]) -> int:
        """Every item located: the calls left. Items still to be seen are looked at in the best order, as the
        omniscient oracle would (from the start, this *is* the omniscient oracle), then the completion."""
        rest = {x for i, x in zip(self.items, placement) if i not in seen and i in self.task.expect.seen}
        best = None
        for visit in permutations(sorted(rest)):
            cost, here = 0, robot
            for r in visit:
                cost, here = cost + self.inspect(here, r), r
            now_seen = seen | {i for i, x in zip(self.items, placement) if x in rest}
            done = self.complete(here, placement, frozenset(now_seen), frozenset(lit | rest))
            if done is not None and (best is None or cost + done < best):
                best = cost + done
        if best is None:
            raise OracleError(f"task {self.task.id!r}: cannot be finished with the items in {', '.join(placement)}")
        return best

    def inspect(self, here: str, room: str) -> int:
        """Moves to the room, a light call if it is dark, one look."""
        return self.dist[here][room] + (self.light[room][0] is not None) + 1

    def off(self, room: str) -> int:
        """The call that switches its light off again, when the item was not there and the task wants it off."""
        return int(self.light[room][1])

    def placed(self, item: str, room: str) -> tuple[str, ...]:
        """The placement with this item in this room, the others where the seed put them."""
        return tuple(room if i == item else self.base.home.items[i].room for i in self.items)

    def reveals(self, item: str, rooms: list[str]) -> bool:
        """Whether the task's user, asked "Where is <item>?", names its room (and no other), wherever it is."""
        question = QUESTION.format(self.base.home.items[item].name)
        if self.forbidden("ask_user", {"question": question}) or not self.passes(("must_not_ask",), asked=(question,)):
            return False
        for room in rooms:
            scene = self.scene(self.placed(item, room))
            try:
                answer = ScriptedUser(rules=list(scene.user.rules), fallback=scene.user.fallback).ask(question)
            except NoAnswer:
                return False
            if [r for r in rooms if re.search(room_pattern(scene.home, r), answer, re.IGNORECASE)] != [room]:
                return False
        return True


def _single(m: _Model, rooms: list[str], exact_rooms: int) -> dict[str, Any]:
    """One hidden item: the best order to look in, for the mean and for the worst case."""
    n, here = len(rooms), [*rooms, m.start]  # index n: the robot's start
    ins = [[m.inspect(q, r) for r in rooms] for q in here]
    found = [m.complete(r, (r,), frozenset(m.items), frozenset({r})) for r in rooms]
    off = [m.off(r) for r in rooms]
    # one room left: the item must be there -- to be seen, or only lit, reached or named
    ded = cache(lambda q, x: m.finish(here[q], (rooms[x],), set(), set()))
    if n <= exact_rooms:
        return _dp(n, ins, found, off, ded, rooms)

    def costs(order: list[int]) -> tuple[int, int]:  # (sum over the rooms the item could be in, the largest)
        total, worst, spent, q = 0, 0, 0, n
        for j, r in enumerate(order):
            cost = spent + (ded(q, r) if j == n - 1 else ins[q][r] + found[r])
            total, worst = total + cost, max(worst, cost)
            spent, q = spent + ins[q][r] + off[r], r
        return total, worst

    def greedy(order: list[int], last: int | None = None) -> list[int]:
        # all rooms as likely: the best probability/cost is the cheapest room to look in; ``last`` is kept for last
        order, left = list(order), set(range(n)) - set(order) - {last}
        while left:
            q = order[-1] if order else n
            order.append(min(left, key=lambda r: (ins[q][r], r)))
            left.remove(order[-1])
        return order + ([last] if last is not None and last not in order else [])

    def starts(score: Any) -> list[list[int]]:
        out = [greedy([]), [rooms.index(r) for r in nx.dfs_preorder_nodes(m.base.home.graph, m.start) if r in rooms]]
        if n <= CONSTRUCT_ROOMS:
            pilot: list[int] = []  # each next room chosen by how well the greedy order goes on from it
            while len(pilot) < n:
                pilot = min((greedy([*pilot, r]) for r in range(n) if r not in pilot), key=score)[:len(pilot) + 1]
            out += [pilot, *(greedy([], x) for x in range(n))]
        return out

    return _heuristic(costs, starts, max(200, LOCAL_WORK // n), rooms)


def _multi(m: _Model, rooms: list[str], placements: list[tuple[str, ...]]) -> dict[str, Any]:
    """Several items sought together: one order of rooms, averaged over every joint placement (an upper bound)."""
    def walk(order: list[str], placement: tuple[str, ...]) -> int:
        cost, q, seen, lit = 0, m.start, set(), set()
        for j, r in enumerate(order):
            if len(seen) == len(m.items) or len(order) - j == 1:
                break  # every item seen, or the rest must all be in the last room
            cost += m.inspect(q, r)
            here = {i for i, x in zip(m.items, placement) if x == r}
            seen, lit, cost, q = seen | here, lit | ({r} if here else set()), cost + (0 if here else m.off(r)), r
        return cost + m.finish(q, placement, seen, lit)

    def costs(order: list[int]) -> tuple[int, int]:
        each = [walk([rooms[r] for r in order], p) for p in placements]
        return sum(each), max(each)

    nearest = sorted(range(len(rooms)), key=lambda r: (m.inspect(m.start, rooms[r]), r))
    return _heuristic(costs, lambda score: [nearest], MULTI_EVALUATIONS, rooms)


def _heuristic(costs: Any, starts: Any, limit: int, rooms: list[str]) -> dict[str, Any]:
    """The best three starting orders, improved by local search: for the mean, then for the worst case."""
    def best(score: Any, *more: list[int]) -> list[int]:
        first = sorted([*starts(score), *more], key=score)[:3]
        return min((_improve(o, score, limit) for o in first), key=score)

    mean = best(costs)
    worst = best(lambda o: costs(o)[::-1], mean)
    if costs(worst)[0] < costs(mean)[0]:
        mean = worst  # so that expected <= worst, as for the exact values
    return {"total": costs(mean)[0], "worst": costs(worst)[1], "order": [rooms[r] for r in mean],
            "worst_order": [rooms[r] for r in worst], "exact": False}


def _dp(n: int, ins: list[list[int]], found: list[int], off: list[int], ded: Any, rooms: list[str]) -> dict[str, Any]:
    # State (mask of rooms inspected, robot's room: the one it last looked in, or index n, its start).
    # W: the sum, over the rooms the item may still be in, of the cost still to pay; M: the largest of them.
    size = n + 1
    W, M, BW, BM = ([0] * ((1 << n) * size) for _ in range(4))
    for mask in range((1 << n) - 2, -1, -1):  # a mask's successors are bigger numbers: already done
        left = [r for r in range(n) if not mask >> r & 1]
        k = len(left)
        for q in ([n] if mask == 0 else [q for q in range(n) if mask >> q & 1]):
            i = mask * size + q
            if k == 1:
                W[i] = M[i] = ded(q, left[0])
                BW[i] = BM[i] = left[0]
                continue
            row, be, bw = ins[q], None, None
            for r in left:
                j = (mask | 1 << r) * size + r
                e = k * row[r] + found[r] + (k - 1) * off[r] + W[j]  # look in r: found there, or go on
                w = row[r] + max(found[r], off[r] + M[j])
                if be is None or e < be:
                    be, BW[i] = e, r
                if bw is None or w < bw:
                    bw, BM[i] = w, r
            W[i], M[i] = be, bw

    def follow(best: list[int]) -> list[str]:
        order, mask, q = [], 0, n
        while len(order) < n:
            q = best[mask * size + q]
            order.append(rooms[q])
            mask |= 1 << q
        return order

    return {"total": W[n], "worst": M[n], "order": follow(BW), "worst_order": follow(BM), "exact": True}


def _improve(order: list[int], score: Any, limit: int) -> list[int]:
    """Swap two rooms, move a stretch elsewhere (reversed or not) or reverse one, while the score gets smaller;
    at most ``limit`` orders scored -- a budget that, unlike a time limit, gives the same answer anywhere."""
    def moves(o: list[int]) -> Any:
        n = len(o)
        for i in range(n):
            for j in range(i + 1, n):
                yield o[:i] + [o[j]] + o[i + 1:j] + [o[i]] + o[j + 1:]
        for size in range(1, n):
            for i in range(n - size + 1):
                seg = o[i:i + size]
                for piece in ((seg, seg[::-1]) if size > 1 else (seg,)):
                    for j in [*range(i), *range(i + size + 1, n + 1)]:
                        yield o[:j] + piece + o[j:i] + o[i + size:] if j < i else o[:i] + o[i + size:j] + piece + o[j:]
        for i in range(n):
            for j in range(i + 2, n + 1):
                yield o[:i] + o[i:j][::-1] + o[j:]

    best, value, tried, better = list(order), score(order), 1, True
    while better and tried < limit:
        better = False
        for candidate in moves(best):
            v, tried = score(candidate), tried + 1
            if v < value:
                best, value, better = candidate, v, True
            if better or tried >= limit:
                break
    return best


def knowledge_free_oracle(task: Task, world: Home, seed: int = 0, *,
                          exact_rooms: int = EXACT_ROOMS) -> SearchOracle | None:
    """The best an agent can do without knowing where the hidden things are: on average, and in the worst case.

    For one hidden item both values are exact up to ``exact_rooms`` candidate rooms (dynamic programming over
    the rooms inspected and the robot's room); beyond, greedy orders improved by local search give upper bounds
    (``exact=False``) that real policies achieve. Several items sought together are searched by one order of
    rooms, averaged over every joint placement: an upper bound on the adaptive optimum, so ``exact=False``.
    ``worst`` is the minimax value: the fewest steps that solve the task whatever the placement. When the task's
    user names the room if asked "Where is <item>?", asking first (one step, unless the task must ask anyway and
    that question passes) and then doing what the omniscient oracle does is a policy too, taken if cheaper.

    Args:
        task: The task; None is returned when it names no hidden item (nothing to locate) or sets up events.
        world: The task's home as loaded; it is copied, never changed.
        seed: The seed of the task's set-up: ``omniscient`` (and where the other items are) depend on it.
        exact_rooms: The most candidate rooms for the exact dynamic programme (its time doubles per room).

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.bench.suites.tasks import Expect, Setup, Task
        >>> task = Task("t", "demo", "lares-home", "search", "Find my dog.", setup=Setup(shuffle=True),
        ...             expect=Expect(seen=["bruno"], mentions=["{bruno.room}"], allow_changes=["*-light"]))
        >>> found = knowledge_free_oracle(task, load_world("lares-home"))
        >>> found.expected, found.worst, found.exact, found.omniscient_mean
        (9.0, 16, True, 3.8)
        >>> found.order  # the robot is in the lit hallway; then the lounge, and the office behind it
        ('hallway', 'lounge', 'office', 'kitchen', 'bedroom')
    """
    if task.events or not hidden_items(task, world):
        return None  # nothing to locate (a persistent command is set up, not searched for)
    m = _Model(task, world, seed)
    # a room the robot cannot reach or see into, or where the task could not be finished, is no candidate
    rooms = [r for r in m.base.home.graph.nodes if r in m.light and r in m.dist[m.start] and all(
        m.complete(r, m.placed(i, r), frozenset({i}), frozenset({r})) is not None for i in m.items)]
    if not rooms:
        raise OracleError(f"task {task.id!r}: no room where {', '.join(m.items)} could be found")
    placements = list(product(rooms, repeat=len(m.items)))
    omni = [m.finish(m.start, p, set(), set()) + m.tail for p in placements]
    search = _single(m, rooms, exact_rooms) if len(m.items) == 1 else _multi(m, rooms, placements)
    policies = [(Fraction(search["total"], len(placements)) + m.tail, search["worst"] + m.tail, "search")]
    if all(m.reveals(i, rooms) for i in m.items):
        # a task that must ask has paid for one question: if a "Where is ...?" passes its check, it is that one
        asks = len(m.items) - any(task.expect.must_ask and m.passes(
            ("must_ask",), asked=(QUESTION.format(world.items[i].name),)) for i in m.items)
        policies.append((Fraction(sum(omni), len(omni)) + asks, max(omni) + asks, "ask"))
    if not set(hidden_items(replace(task, expect=replace(task.expect, lit=[])), world)) & set(m.items) \
            and not any(m.off(r) for r in rooms):  # only "lit" names them: light every room, look nowhere
        each = [m.complete(m.start, p, frozenset(), frozenset(rooms)) for p in placements]
        dark = sum(m.light[r][0] is not None for r in rooms) + m.tail
        if None not in each:
            policies.append((Fraction(sum(each), len(each)) + dark, max(each) + dark, "light-all"))
    value, _, policy = min(policies, key=lambda p: p[0])
    worst = min(p[1] for p in policies)
    return SearchOracle(tuple(m.items), tuple(rooms), float(value), worst, search["exact"] and not m.helps,
                        oracle_steps(task, world, seed), float(Fraction(sum(omni), len(omni))),
                        tuple(search["order"]) if policy == "search" else (),
                        tuple(search["worst_order"]) if worst == policies[0][1] else (), policy, value)
