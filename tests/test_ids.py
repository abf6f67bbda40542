import re

import pytest

from mlbook import ids


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("model-parallelism", "model-parallelism"),
        ("fn:1", "fn:1"),
        ("_1", "_1"),
        ("fn:@#$%", "fn:_40__23__24__25_"),
        ("标题", "_6807__9898_"),
        ("a b", "a_20_b"),
    ],
)
def test_element_ids_become_valid_fragments(raw, safe):
    assert ids.element_id(raw) == safe
    assert re.fullmatch(r"[A-Za-z0-9_.:-]+", ids.element_id(raw))


def test_slugs_never_hold_a_double_dash_so_anchors_split_unambiguously():
    for path in ("a--b.md", "a - b.md", "-a-.md", "分-布.md", "x/-/y.md"):
        slug = ids.slug(path)
        assert "--" not in slug and not slug.startswith("-") and not slug.endswith("-"), slug
        assert ids.is_safe_name(slug)


def test_distinct_cjk_names_get_distinct_slugs():
    assert len({ids.slug(f"{c}.md") for c in "分布式训练一二三"}) == 8
