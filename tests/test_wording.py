"""Counts agree with their nouns and words take their article (saber.errors.counted,
with_article): every message that counts or names a type goes through them."""

from __future__ import annotations

import pytest

from saber.errors import counted, with_article


@pytest.mark.parametrize(
    ("count", "noun", "said"),
    [
        (1, "episode", "1 episode"),
        (0, "episode", "0 episodes"),
        (2, "new episode", "2 new episodes"),
        (1, "worker process", "1 worker process"),
        (3, "worker process", "3 worker processes"),
        (1, "entry", "1 entry"),
        (5, "entry", "5 entries"),
        (2, "day", "2 days"),
        (1, "integer action", "1 integer action"),
        (4, "match", "4 matches"),
    ],
)
def test_a_count_agrees_with_its_noun(count: int, noun: str, said: str) -> None:
    assert counted(count, noun) == said


def test_an_irregular_plural_is_given() -> None:
    assert counted(2, "child", "children") == "2 children"
    assert counted(1, "child", "children") == "1 child"


@pytest.mark.parametrize(
    ("word", "said"),
    [
        ("int", "an int"),
        ("str", "a str"),
        ("list", "a list"),
        ("ellipsis", "an ellipsis"),
        ("object", "an object"),
        ("ndarray", "an ndarray"),
        ("NoneType", "a NoneType"),
        ("uniform", "a uniform"),
        ("float", "a float"),
    ],
)
def test_a_word_takes_the_article_it_is_read_with(word: str, said: str) -> None:
    assert with_article(word) == said
