"""Reading Tavily's GET /usage answer: only credits certainly used up stop a run."""

from typing import Any

import pytest

from deskresearch.services.search.checks import credits_left, credits_used_up

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


@pytest.mark.parametrize(
    ("usage", "left"),
    [
        ({"key": {"usage": 995, "limit": 1000}}, (5, "this key: 995 of 1,000 used", True)),
        ({"account": ACCOUNT | {"plan_usage": 990, "paygo_usage": 5, "paygo_limit": 20}},
         (25, "plan: 990 of 1,000 used, pay-as-you-go: 5 of 20", True)),
        ({"account": ACCOUNT | {"plan_usage": 997, "paygo_limit": None}},  # the free plan
         (3, "plan: 997 of 1,000 used, no pay-as-you-go limit stated", False)),
        ({"key": {"usage": 10, "limit": 100},  # the fewer of the key's and the account's
          "account": ACCOUNT | {"plan_usage": 996}},
         (4, "plan: 996 of 1,000 used, no pay-as-you-go limit stated", False)),
        ({"key": {"usage": 1003, "limit": 1000}}, (-3, "this key: 1,003 of 1,000 used", True)),
    ],
)  # fmt: skip
def test_the_credits_left_are_the_fewest_the_answer_states(
    usage: dict[str, Any], left: tuple[float, str, bool]
) -> None:
    assert credits_left(usage) == left


@pytest.mark.parametrize(
    "usage",
    [{"key": {"usage": 12, "limit": None}}, {"key": {"usage": 3, "limit": 0}},
     {"account": {"plan_usage": 5, "plan_limit": 0}}, {"key": "x"}, None],
)  # fmt: skip
def test_no_limit_stated_no_credits_left_known(usage: Any) -> None:
    assert credits_left(usage) is None
