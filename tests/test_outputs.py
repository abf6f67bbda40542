import pytest

from mlbook.writers.outputs import atomic_path


def test_success_replaces_the_file(tmp_path):
    out = tmp_path / "book.pdf"
    out.write_text("old")
    with atomic_path(out) as tmp:
        tmp.write_text("new")
    assert out.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book.pdf"]


def test_failure_keeps_the_previous_file_and_leaves_no_temp(tmp_path):
    out = tmp_path / "book.pdf"
    out.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(out) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer failed")
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book.pdf"]
