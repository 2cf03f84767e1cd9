"""A cancelled step is redone on resume, not taken for finished (a fix to LangGraph 1.2's loop).

When a run is cancelled (Ctrl-C in the CLI, a task cancelled by an embedding app, a cancelled
served run), LangGraph saves each cancelled task's writes so far together with the
``CancelledError``. A task cancelled after its node returned but before its edges were
evaluated has saved its state writes and none of its routing. On resume the loop hands those
partial writes back to the task as if it had finished (``_reapply_writes_to_succeeded_nodes``
reapplies the output of every task that wrote, errors included, although its docstring says
unfinished tasks keep empty writes), so the task is not run again, its edges never fire and the
run ends right there: seen as a resume that "finished" with no report.

The fix keeps a cancelled task's saved writes from being reapplied, so the runner runs it again
(LangGraph's at-least-once contract for unfinished tasks). Finished tasks, failed tasks routed
to error handlers and interrupts are untouched. ``tests/integration_tests/test_interrupt_resume.py``
fails without it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from langgraph.pregel import _loop
from langgraph.pregel._task_status import read_task_statuses

_PATCHED = "_deskresearch_redoes_cancelled_tasks"


def is_cancellation(error: object) -> bool:
    """Whether a saved task error is a cancellation (stored as the exception or its repr)."""
    return isinstance(error, asyncio.CancelledError) or str(error).startswith("CancelledError(")


def _cancelled(pending: Any, tasks: Mapping[str, Any]) -> set[str]:
    writes = (w for w in pending if w[0] in tasks)
    return {tid for tid, s in read_task_statuses(writes).items() if is_cancellation(s.error)}


def install() -> None:
    """Patch the loop once; a LangGraph without the method is left alone (the test tells)."""
    loop = getattr(_loop, "PregelLoop", None)
    original = getattr(loop, "_reapply_writes_to_succeeded_nodes", None)
    if loop is None or original is None or getattr(original, _PATCHED, False):
        return

    def reapply_finished_only(self: Any, tasks: Mapping[str, Any]) -> None:
        skip = _cancelled(self.checkpoint_pending_writes, tasks)
        original(self, {tid: t for tid, t in tasks.items() if tid not in skip})

    setattr(reapply_finished_only, _PATCHED, True)
    loop._reapply_writes_to_succeeded_nodes = reapply_finished_only
