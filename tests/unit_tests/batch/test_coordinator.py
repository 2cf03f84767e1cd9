"""The Coordinator's slots, leases and pacing, as plain asyncio (Ray only carries the calls)."""

import asyncio

import pytest

from deskresearch.batch import coordinator as coord
from deskresearch.batch.coordinator import Coordinator

pytestmark = pytest.mark.anyio


async def test_a_slot_waits_for_a_release_when_the_limit_is_held() -> None:
    c = Coordinator(find_dead=set)
    first = await c.acquire("model x", 2, "n1")
    await c.acquire("model x", 2, "n2")
    third = asyncio.ensure_future(c.acquire("model x", 2, "n1"))
    await asyncio.sleep(0.05)
    assert not third.done() and c.held() == {"model x": 2}
    await c.release("model x", first)
    assert await asyncio.wait_for(third, 1) and c.held() == {"model x": 2}
    assert await c.acquire("host example.org", 1, "n1")  # another name, other slots


async def test_leases_of_a_dead_node_are_freed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coord, "REAP_EVERY_S", 0.05)
    dead: set[str] = set()
    c = Coordinator(find_dead=lambda: set(dead))
    await c.acquire("model x", 1, "lost-node")
    waiting = asyncio.ensure_future(c.acquire("model x", 1, "n2"))
    await asyncio.sleep(0.15)
    assert not waiting.done()
    dead.add("lost-node")  # Ray reports the node dead: its slot comes back without a release
    assert await asyncio.wait_for(waiting, 2)


async def test_a_lease_expires_after_its_ttl(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coord, "REAP_EVERY_S", 0.05)
    monkeypatch.setattr(coord, "LEASE_TTL_S", 0.2)
    c = Coordinator(find_dead=set)
    await c.acquire("host h", 1, "n1")  # its worker process was killed: never released
    assert await asyncio.wait_for(c.acquire("host h", 1, "n1"), 2)


def test_pacing_spaces_requests_and_a_cool_down_holds_everyone() -> None:
    c = Coordinator(find_dead=set)
    waits = [c.pace("model x", 10.0) for _ in range(3)]
    assert waits[0] == 0 and waits[1] == pytest.approx(0.1, abs=0.01)
    assert waits[2] == pytest.approx(0.2, abs=0.01)
    c.cool_down("model y", 5.0)
    assert c.pace("model y", 0.0) == pytest.approx(5.0, abs=0.05)
    assert c.pace("model z", 0.0) == 0


def test_events_are_handed_over_once() -> None:
    c = Coordinator(find_dead=set)
    c.report("t1", {"stage": "start_run"})
    assert c.drain() == [("t1", {"stage": "start_run"})] and c.drain() == []


class _Handle:
    """Stands in for a Ray actor handle: ``handle.method.remote(...)`` runs on a Coordinator."""

    def __init__(self, target: Coordinator) -> None:
        self.target = target
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> object:
        outer = self

        class Method:
            def remote(self, *args: object) -> object:
                outer.calls.append(name)
                result = getattr(outer.target, name)(*args)
                if asyncio.iscoroutine(result):
                    return asyncio.ensure_future(result)
                future = asyncio.get_running_loop().create_future()
                future.set_result(result)
                return future

        return Method()


async def test_the_cluster_limiter_takes_provider_slots_from_the_coordinator() -> None:
    from deskresearch.batch.cluster_limits import ClusterLimiter

    target = Coordinator(find_dead=set)
    handle = _Handle(target)
    limiter = ClusterLimiter(handle, "node-1")
    async with limiter.slot("model http://x/v1", 2):
        assert target.held() == {"model http://x/v1": 1}
        async with limiter.slot("host example.org", 1), limiter.slot("fetch", 4):
            assert target.held()["host example.org"] == 1 and "fetch" not in target.held()
    await asyncio.sleep(0.01)  # releases are sent without waiting
    assert target.held() == {"model http://x/v1": 0, "host example.org": 0}
    limiter.cool_down("model http://x/v1", 0.2)
    await asyncio.sleep(0.01)
    start = asyncio.get_running_loop().time()
    await limiter.pace("model http://x/v1", 0.0)  # another node's 429 holds this one back
    assert asyncio.get_running_loop().time() - start >= 0.15
    assert handle.calls.count("acquire") == 2 and "cool_down" in handle.calls


async def test_a_node_s_own_local_server_keeps_its_slots_on_the_node() -> None:
    """A node's Ollama (a loopback endpoint) is one server per node, not one for the cluster."""
    from deskresearch.batch.cluster_limits import ClusterLimiter, shared

    target = Coordinator(find_dead=set)
    handle = _Handle(target)
    limiter = ClusterLimiter(handle, "node-1")
    own = "model http://localhost:11434/v1"
    async with limiter.slot(own, 2), limiter.slot("model http://127.0.0.1:8080/v1", 2):
        assert target.held() == {}, "held on the node, not leased from the coordinator"
    limiter.cool_down(own, 0.2)  # this node's server said 429: this node holds back
    start = asyncio.get_running_loop().time()
    await limiter.pace(own, 0.0)
    assert asyncio.get_running_loop().time() - start >= 0.15
    assert handle.calls == [], "the coordinator was not asked"
    assert shared("model http://gpu-box:11434/v1") and shared("model https://api.openai.com/v1")
    assert shared("host localhost") and not shared("fetch")
