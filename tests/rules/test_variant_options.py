"""The variants as rule options ("Variants" preamble of docs/rules.md): one field each, off by
default, combinable unless the rulebook says otherwise, named in logs and season files."""

from __future__ import annotations

import pytest

from arena.rules.options import (
    OFFICIAL,
    VARIANT_SECTIONS,
    VARIANTS,
    RuleOptions,
    missing_variants,
    unsupported_message,
)


def test_every_variant_is_a_field_off_by_default() -> None:
    fields = OFFICIAL.to_dict()
    assert all(fields[name] is False for name in VARIANTS)
    assert OFFICIAL.variants == ()
    assert list(VARIANT_SECTIONS) == list(VARIANTS)
    assert sorted(set(VARIANT_SECTIONS.values())) == [f"§{n}" for n in range(21, 33)]


def test_variants_combine_and_are_listed_in_rulebook_order() -> None:
    options = RuleOptions(jump_in=True, stacking=True, seven_o=True)
    assert options.variants == ("stacking", "seven_o", "jump_in")
    every = RuleOptions(**dict.fromkeys(VARIANTS, True))
    assert every.variants == VARIANTS
    assert RuleOptions.from_dict(every.to_dict()) == every


@pytest.mark.parametrize(("settings", "message"), [
    pytest.param({"stack_two_on_four": True}, "stack_two_on_four is a kind of stacking (§21)",
                 id="§21 stack_two_on_four needs stacking"),
    pytest.param({"lazy_scoring": True, "alternative_scoring": True},
                 "lazy_scoring (§31) scores no points", id="§31 lazy scoring has no points"),
    pytest.param({"rounds": 5}, "rounds = 5 only means something with lazy_scoring",
                 id="§31 rounds belongs to lazy scoring"),
    pytest.param({"lazy_scoring": True, "rounds": 0}, "rounds must be at least 1",
                 id="§31 at least one round"),
    pytest.param({"stacking": 1}, "stacking must be true or false, not 1",
                 id="a variant is true or false"),
])
def test_impossible_combinations_are_refused_clearly(settings: dict[str, object],
                                                     message: str) -> None:
    with pytest.raises(ValueError) as caught:
        RuleOptions(**settings)  # type: ignore[arg-type]
    assert message in str(caught.value)


def test_an_unknown_option_names_the_closest_one() -> None:
    with pytest.raises(ValueError) as caught:
        RuleOptions.from_dict({"jumpin": True})
    assert "unknown rule option(s) jumpin (did you mean jump_in?)" in str(caught.value)


def test_old_logs_without_variant_fields_read_as_official() -> None:
    old = {"target_score": 500, "alternative_scoring": False,
           "two_player_reverse_is_skip": True, "turn_limit": 1000, "round_limit": 100,
           "hand_size": 7}
    assert RuleOptions.from_dict(old) == OFFICIAL


def test_support_is_checked_by_name() -> None:
    options = RuleOptions(stacking=True, jump_in=True)
    assert missing_variants(options, ["stacking"]) == ("jump_in",)
    assert missing_variants(options, list(VARIANTS)) == ()
    assert missing_variants(OFFICIAL, []) == ()
    assert unsupported_message("bot b 1", options, ["stacking", "jump_in"]) == ""
    message = unsupported_message("bot b 1", options, [])
    assert message.startswith("bot b 1 does not support the variant(s) stacking, jump_in in "
                              "force; its bot.toml declares none")
