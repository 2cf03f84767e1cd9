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


async def test_a_machine_s_own_local_server_is_held_per_machine() -> None:
    """A loopback endpoint (each machine's Ollama) is one server a machine, not one a cluster."""
    from deskresearch.batch.cluster_limits import ClusterLimiter, on_machine

    target = Coordinator(find_dead=set)
    one, same = (ClusterLimiter(_Handle(target), n, machine="10.0.0.1") for n in ("a", "b"))
    other = ClusterLimiter(_Handle(target), "c", machine="10.0.0.2")
    own = "model http://localhost:11434/v1"
    async with one.slot(own, 1):
        async with asyncio.timeout(5), other.slot(own, 1):  # two machines: a call each at once
            assert target.held() == {f"{own} on 10.0.0.1": 1, f"{own} on 10.0.0.2": 1}
        waiting = asyncio.ensure_future(same.slot(own, 1).__aenter__())  # the same machine
        await asyncio.sleep(0.05)
        assert not waiting.done(), "a node on the same machine waits for its server's slot"
    await asyncio.wait_for(waiting, 5)
    async with one.slot("model https://api.openai.com/v1", 2):
        assert target.held()["model https://api.openai.com/v1"] == 1, "a hosted API: cluster-wide"
    other.cool_down(own, 0.2)  # machine 2's server said 429: only its nodes hold back
    await asyncio.sleep(0.01)
    start = asyncio.get_running_loop().time()
    await one.pace(own, 0.0)
    assert asyncio.get_running_loop().time() - start < 0.1
    assert on_machine("model http://127.0.0.1:8080/v1") and not on_machine(
        "model http://gpu:11434/v1"
    )
    assert not on_machine("host localhost")
