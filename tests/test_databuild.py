"""Problems and runbook in real builds of the mini book: planted defects fail the build at their YAML line;
a good build shows collapsed answers on the site and an "Answers" section before Sources in the PDF and EPUB."""

import shutil
import zipfile

import pytest
from lxml import html as lhtml
from pypdf import PdfReader

from conftest import FIXTURES, ROOT, build_site

pytestmark = pytest.mark.slow

THEME = (ROOT / "build" / "mlbook" / "theme").as_posix()
PROBLEMS = """\
- id: copy-time
  title: How long does a copy take?
  statement: >-
    Copy {size_gb} over a link of {link}.
    How long does it take?
  given:
    size_gb: {value: 63, unit: GB}
    link: {spec: interconnects/PCIe 5.0 x16/per_direction_gbps}
  solve:
    seconds: {formula: "size_gb / link", unit: s, answer: 1.0}
  answer: >-
    {size_gb} at {link} takes {seconds}.
  see: [part-one/alpha.md#summary]
"""
RUNBOOK = """\
categories:
  - id: hangs
    title: Hangs
entries:
  - id: first-entry
    category: hangs
    title: The first symptom
    seen: Nothing is printed after start-up.
    command:
      lang: bash
      needs: needs-multi-node
      code: |
        srun hostname
    means: Every node answers with its name when the allocation works.
    section: part-one/alpha.md#summary
    script: scripts/hello.sh
"""


def make_book(tmp_path, problems=PROBLEMS, runbook=RUNBOOK):
    root = tmp_path / "book"
    shutil.copytree(FIXTURES / "mini", root)
    shutil.copytree(ROOT / "scripts" / "calc", root / "scripts" / "calc")
    data = root / "book" / "data"
    (data / "problems").mkdir(parents=True)
    shutil.copy(ROOT / "book" / "data" / "interconnects.yaml", data)
    (data / "problems" / "part-one-beta.yaml").write_text(problems)
    (data / "runbook.yaml").write_text(runbook)
    (root / "book" / "runbook.md").write_text("# Runbook\n\nWhat to run.\n\n/// runbook\n///\n")
    beta = root / "book" / "part-one" / "beta.md"
    beta.write_text(beta.read_text() + "\n## Problems\n\n/// problems\n///\n\n## Sources\n\n- A source.\n")
    cfg = root / "mkdocs.yml"
    text = cfg.read_text().replace("../../../build/mlbook/theme", THEME)
    cfg.write_text(text.replace("  - Preface: index.md\n", "  - Preface: index.md\n  - Runbook: runbook.md\n"))
    return root


def _line(text, needle):
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def test_planted_defects_fail_the_build_at_their_data_lines(tmp_path):
    runbook = RUNBOOK.replace("alpha.md#summary", "alpha.md#nowhere").replace("scripts/hello.sh", "scripts/gone.sh")
    problems = PROBLEMS.replace("answer: 1.0}", "answer: 1.5}")
    root = make_book(tmp_path, problems, runbook)
    result = build_site(root, tmp_path / "site")
    out = result.stdout + result.stderr
    assert result.returncode != 0
    rb, pb = "book/data/runbook.yaml", "book/data/problems/part-one-beta.yaml"
    assert (
        f"{rb}:{_line(runbook, 'section:')}: broken anchor: '#nowhere' is not an id of book/part-one/alpha.md; "
        "use the id of one of its headings"
    ) in out
    assert f"{rb}:{_line(runbook, 'script:')}: missing script: 'scripts/gone.sh' does not exist" in out
    wrong = f"{pb}:{_line(problems, 'answer: 1.5')}: wrong answer: seconds: the inputs give 1 s, the data says 1.5"
    assert wrong in out
    assert "Traceback" not in out


def test_good_build_renders_answers_in_all_three_editions(tmp_path):
    root = make_book(tmp_path)
    site = tmp_path / "site"
    result = build_site(root, site)
    assert result.returncode == 0, result.stdout + result.stderr
    page = lhtml.parse(str(site / "part-one" / "beta" / "index.html"))
    (details,) = page.xpath('//details[contains(@class, "mlbook-answer")]')
    assert details.get("open") is None and "63 GB at 63 GB/s takes 1.0 s." in details.text_content()
    runbook = lhtml.parse(str(site / "runbook" / "index.html"))
    assert runbook.xpath('//h3[@id="first-entry"]') and runbook.xpath('//div[contains(@class, "needs-multi-node")]')
    assert runbook.xpath('//a[contains(@href, "scripts/hello.sh")]')
    downloads = site / "downloads"
    (epub,) = downloads.glob("*.epub")
    with zipfile.ZipFile(epub) as z:
        name = next(n for n in z.namelist() if n.endswith("part-one-beta.xhtml"))
        chapter = z.read(name).decode()
        assert "<details" not in chapter
        assert chapter.index(">Answers<") < chapter.index(">Sources<")
        assert chapter.index("63 GB at 63 GB/s takes 1.0 s.") > chapter.index(">Answers<")
        assert any(n.endswith("runbook.xhtml") for n in z.namelist())
    (pdf,) = downloads.glob("*.pdf")
    text = "\n".join(p.extract_text() for p in PdfReader(pdf).pages)
    answers, sources = text.rindex("Answers"), text.rindex("Sources")
    assert answers < text.index("63 GB at 63 GB/s takes 1.0 s.") < sources
    assert "The first symptom" in text
