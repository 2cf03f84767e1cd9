"""SearchBackend that dispatches each call to the backend the run's settings name."""

from __future__ import annotations

from collections.abc import Mapping

from deskresearch.records import SearchHit, SearchSettings
from deskresearch.services.base import SearchBackend


class SearchRouter:
    """Picks the backend per run (``Context.search``), so one built graph serves every setting."""

    def __init__(self, backends: Mapping[str, SearchBackend]) -> None:
        self._backends = dict(backends)

    def _backend(self, settings: SearchSettings) -> SearchBackend:
        return self._backends[settings.backend]

    def check(self, settings: SearchSettings) -> None:
        """Check the chosen backend's settings."""
        self._backend(settings).check(settings)

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> list[SearchHit]:
        """Search with the chosen backend."""
        return await self._backend(settings).search(
            query, max_results=max_results, settings=settings
        )
