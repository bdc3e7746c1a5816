"""The rulebook, docs/rules.md: every rule section the code and the tests cite has its own
``### §N`` heading there, and the rulebook numbers its sections 1 to 32, once each, in order.

A citation is ``§`` and a number; a range is two citations joined by a hyphen or an en dash,
and stands for every section between them.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULEBOOK = ROOT / "docs" / "rules.md"
SECTIONS = 32
CITATION = re.compile("§(\\d+)(?:[-\u2013]§(\\d+))?")
HEADING = re.compile(r"^### §(\d+) ", re.MULTILINE)


def cited_files() -> list[Path]:
    """The Python files of arena/ and tests/, and the pages of docs/ but the rulebook."""
    files = [*sorted((ROOT / "arena").rglob("*.py")), *sorted((ROOT / "tests").rglob("*.py"))]
    return files + sorted(page for page in (ROOT / "docs").rglob("*.md") if page != RULEBOOK)


def citations() -> list[tuple[str, range]]:
    """Each citation as ``path:line: text`` and the sections it names."""
    found = []
    for path in cited_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            for match in CITATION.finditer(line):
                first = int(match[1])
                last = int(match[2]) if match[2] else first
                where = f"{path.relative_to(ROOT)}:{number}: {match[0]}"
                found.append((where, range(first, last + 1)))
    return found


def headings() -> list[int]:
    """The section numbers of the rulebook's ``### §N`` headings, in page order."""
    return [int(number) for number in HEADING.findall(RULEBOOK.read_text(encoding="utf-8"))]


def test_every_rule_section_cited_in_the_code_resolves_to_the_rulebook() -> None:
    found = citations()
    assert found, "no citation found at all: the scan is broken"
    known = set(headings())
    unresolved = [where for where, sections in found
                  if not sections or not known.issuperset(sections)]
    assert not unresolved, (
        f"{len(unresolved)} citation(s) with no `### §N ` heading in docs/rules.md:\n"
        + "\n".join(unresolved))


def test_the_rulebook_has_each_section_once_in_order() -> None:
    numbers = headings()
    assert numbers == list(range(1, SECTIONS + 1)), (
        f"docs/rules.md section headings, in page order: {numbers}")
