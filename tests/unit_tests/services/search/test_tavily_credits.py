"""Reading Tavily's GET /usage answer: only credits certainly used up stop a run."""

from typing import Any

import pytest

from deskresearch.services.search.checks import credits_used_up

ACCOUNT = {"current_plan": "Researcher", "plan_usage": 1000, "plan_limit": 1000}


@pytest.mark.parametrize(
    ("usage", "why"),
    [
        ({"key": {"usage": 500, "limit": 500}},
         "this key's limit is reached (500 of 500 credits used). Raise the key's limit at app.tavily.com"),
        ({"key": {"usage": 1204.5, "limit": 1200}},
         "this key's limit is reached (1,204 of 1,200 credits used). Raise the key's limit at app.tavily.com"),
        ({"account": ACCOUNT | {"paygo_usage": 20, "paygo_limit": 20}},
         "the account's credits are used up (plan: 1,000 of 1,000; pay-as-you-go: 20 of 20). Add "
         "credits at app.tavily.com"),
    ],
)  # fmt: skip
def test_a_limit_reached_is_named_with_its_numbers(usage: dict[str, Any], why: str) -> None:
    assert credits_used_up(usage) == why


@pytest.mark.parametrize(
    "usage",
    [
        {"key": {"usage": 499, "limit": 500}},
        {"key": {"usage": 12, "limit": None}},  # no limit on the key
        {"key": {"usage": 3, "limit": 0}},  # 0: not a limit anyone sets to be refused
        {"account": ACCOUNT | {"paygo_usage": 5, "paygo_limit": 20}},  # pay-as-you-go left
        {"account": ACCOUNT | {"paygo_usage": 5, "paygo_limit": None}},  # the free plan's answer
        {"account": ACCOUNT | {"paygo_usage": 25, "paygo_limit": 0}},  # 0: may mean no cap
        {"account": ACCOUNT | {"plan_limit": 0, "paygo_usage": 20, "paygo_limit": 20}},
        {"account": ACCOUNT},  # no pay-as-you-go figures
        {"key": {"usage": True, "limit": True}},
        {"key": "spent"},
        None,
        [],
    ],
)
def test_anything_less_certain_never_stops_a_run(usage: Any) -> None:
    assert credits_used_up(usage) is None
