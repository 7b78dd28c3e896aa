"""A griffe extension: the reStructuredText habits of rstreams' docstrings, read as Markdown.

The docstrings are written for ``help()`` and editors: ``Example::`` followed by an indented block,
Sphinx roles (``:class:`Flowable```, ``:meth:`~x.y```) and double-backquoted literals. On the site the
example becomes a highlighted Python block and a role becomes inline code; nothing else changes.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_LABEL = re.compile(r"^(Backpressure|Scheduler):[ ]", re.M)
_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|attr|obj|exc|data|const):`~?([^`]+)`")


def rst_to_markdown(text: str) -> str:
    """``Example::`` + indented block -> a fenced Python block; Sphinx roles -> inline code;
    the "Backpressure:" and "Scheduler:" notes -> paragraphs of their own."""
    text = _ROLE.sub(lambda m: f"``{m.group(1)}``", text)
    text = _LABEL.sub(lambda m: f"\n**{m.group(1)}:** ", text)  # its own paragraph, as in RxJava's javadoc
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::") and not line.strip().startswith(".."):
            head = line.rstrip()[:-1]  # "Example::" -> "Example:"; "text::" -> "text:"
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            base = len(line) - len(line.lstrip())
            block: list[str] = []
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > base):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            if block:
                indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
                out.append(head)
                out.append("")
                out.append(" " * base + "```python")
                out.extend(" " * base + b[indent:] if b.strip() else "" for b in block)
                out.append(" " * base + "```")
                out.append("")
                i = j
                continue
        out.append(line)
        i += 1
    return "\n".join(out)


class RstDocstrings(griffe.Extension):
    """Rewrites each docstring once, as griffe loads it."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
