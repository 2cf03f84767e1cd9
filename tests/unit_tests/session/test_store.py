"""The runs of a store: a run's status as read back from the checkpointer."""

import asyncio
from pathlib import Path

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from deskresearch.services.storage.checkpoints import open_checkpointer
from deskresearch.session.store import list_runs

pytestmark = pytest.mark.anyio


async def _saved_run(location: str, thread: str, error: BaseException) -> None:
    """A run saved as LangGraph saves one that stopped mid-step: its input, a task's error."""
    async with open_checkpointer(location) as saver:
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"__start__": {"topic": f"topic {thread}"}}
        config = await saver.aput(
            {"configurable": {"thread_id": thread, "checkpoint_ns": ""}},
            checkpoint,
            {"source": "input", "step": -1, "parents": {}},
            {},
        )
        await saver.aput_writes(config, [("__error__", error)], task_id=f"task-{thread}")


async def test_a_cancelled_task_leaves_a_run_unfinished_and_an_error_fails_it(
    tmp_path: Path,
) -> None:
    # A Ctrl-C cancels the running tasks; LangGraph may save a CancelledError for each.
    location = str(tmp_path / "runs.sqlite")
    await _saved_run(location, "cancelled", asyncio.CancelledError())
    await _saved_run(location, "broken", ValueError("the page parser broke"))
    async with open_checkpointer(location) as saver:
        rows = {r.thread_id: r for r in await list_runs(saver, 10)}
    assert rows["cancelled"].status == "unfinished"
    assert rows["broken"].status == "failed"
    assert rows["cancelled"].topic == "topic cancelled"


async def test_a_run_lists_the_tokens_it_spent_and_their_cost_unknown_for_an_unpriced_model(
    tmp_path: Path,
) -> None:
    location = str(tmp_path / "runs.sqlite")

    def row(model: str) -> dict[str, object]:
        return {"stage": "write_report", "model": model, "input_tokens": 1_000_000,
                "output_tokens": 100_000, "calls": 1}  # fmt: skip

    async with open_checkpointer(location) as saver:
        for thread, usage in (("priced", [row("gpt-4o")]), ("local", [row("llama3.1")])):
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"__start__": {"topic": thread}, "usage": usage}
            await saver.aput({"configurable": {"thread_id": thread, "checkpoint_ns": ""}},
                             checkpoint, {"source": "input", "step": -1, "parents": {}}, {})  # fmt: skip
        rows = {r.thread_id: r for r in await list_runs(saver, 10)}
    assert (rows["priced"].tokens, rows["priced"].cost_usd) == (1_100_000, 3.5)  # 2.50 + 1.00
    assert (rows["local"].tokens, rows["local"].cost_usd) == (1_100_000, None)
