"""A tiny DOM over the standard library's html.parser, for checking rendered pages."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)
    parent: Node | None = field(default=None, repr=False)

    def iter(self) -> Iterator[Node]:
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.iter()

    def find_all(self, tag: str, **attrs: str) -> list[Node]:
        """Descendants with this tag; ``class_`` matches one of the element's classes."""
        found = []
        for node in self.iter():
            if node.tag != tag:
                continue
            if all(self._has(node, key, value) for key, value in attrs.items()):
                found.append(node)
        return found

    def find(self, tag: str, **attrs: str) -> Node:
        found = self.find_all(tag, **attrs)
        assert found, f"no <{tag} {attrs}> in <{self.tag} {self.attrs}>"
        return found[0]

    @staticmethod
    def _has(node: Node, key: str, value: str) -> bool:
        if key == "class_":
            return value in node.attrs.get("class", "").split()
        return node.attrs.get(key.replace("_", "-")) == value

    @property
    def raw_text(self) -> str:
        return "".join(c if isinstance(c, str) else c.raw_text for c in self.children)

    @property
    def text(self) -> str:
        """The text content, whitespace collapsed."""
        return " ".join(self.raw_text.split())

    def cells(self) -> list[Node]:
        """The th/td children of a <tr>."""
        return [c for c in self.children if isinstance(c, Node) and c.tag in ("th", "td")]

    def links(self) -> list[str]:
        return [a.attrs["href"] for a in self.find_all("a") if "href" in a.attrs]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]
        self.doctype = ""

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, parent=self.stack[-1])
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, parent=self.stack[-1])
        self.stack[-1].children.append(node)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return
        raise AssertionError(f"stray </{tag}>")

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(source: str | Path) -> Node:
    text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    builder = _Builder()
    builder.feed(text)
    builder.close()
    assert len(builder.stack) == 1, f"unclosed elements: {[n.tag for n in builder.stack[1:]]}"
    return builder.root


def table_rows(table: Node) -> list[list[Node]]:
    """The cells of each body row of a table."""
    body = table.find("tbody")
    return [row.cells() for row in body.find_all("tr")]


def header_texts(table: Node) -> list[str]:
    return [cell.text for cell in table.find("thead").find("tr").cells()]


def pct(value: float | None) -> str:
    return "" if value is None else f"{value:.0%}"


def num(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def polyline_points(svg: Node, class_: str) -> list[tuple[float, float]]:
    line = svg.find("polyline", class_=class_)
    points = []
    for pair in line.attrs["points"].split():
        x, y = pair.split(",")
        points.append((float(x), float(y)))
    return points

