"""What the later secret probe rounds' generators share (:mod:`devtools.secret_probe_dev13`, ``_dev14``): seeded
draws of values in published shapes, and the fixture rows their cases become."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterable
from pathlib import Path

from devtools.secret_probe_kinds import ALNUM, B64, HEX

# (kind, source, secret, [(context, text with {s})])
Case = tuple[str, str, str, list[tuple[str, str]]]
# (context, source, the value that must stay, text)
LookAlike = tuple[str, str, str, str]


class Draws:
    """Random values from one seeded generator; :meth:`reset` before a round's rows makes them the same each run."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def reset(self) -> None:
        self.rng.seed(self.seed)

    def rand(self, n: int, alphabet: str = ALNUM) -> str:
        """``n`` characters of ``alphabet``, with letters and digits both where the alphabet has them."""
        letters = any(c.isalpha() for c in alphabet)
        digits = any(c.isdigit() for c in alphabet)
        while True:
            s = "".join(self.rng.choice(alphabet) for _ in range(n))
            if n < 8 or not (letters and digits) or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
                return s

    def password(self, n: int = 16) -> str:
        """A password as people choose them for services: letters, digits and a few symbols."""
        return self.rand(n, ALNUM + "!#%^*-_.")

    def url_password(self, n: int = 16) -> str:
        """A password a URL's userinfo holds unescaped."""
        return self.rand(n, ALNUM + "-_.~")

    def pem_body(self, lines: int = 6) -> str:
        """The base64 lines of a PEM block: full lines of 64 characters, then a short padded one."""
        return "\n".join(self.rand(64, B64) for _ in range(lines)) + "\n" + self.rand(24, B64) + "=="

    def uuid4(self) -> str:
        rand = self.rand
        return f"{rand(8, HEX)}-{rand(4, HEX)}-4{rand(3, HEX)}-{self.rng.choice('89ab')}{rand(3, HEX)}-{rand(12, HEX)}"


def case_rows(cases: Iterable[Case]) -> list[dict[str, str]]:
    """A row per context of each case, its secret put in place of ``{s}``."""
    return [{"kind": kind, "source": source, "context": ctx, "secret": secret, "text": text.replace("{s}", secret)}
            for kind, source, secret, contexts in cases for ctx, text in contexts]


def keep_rows(look_alikes: Iterable[LookAlike]) -> list[dict[str, str]]:
    """A row per value that holds no secret and must come out as written."""
    return [{"kind": "not_a_secret", "source": source, "context": ctx, "keep": keep, "text": text}
            for ctx, source, keep, text in look_alikes]


def write_rows(path: Path, rows: list[dict[str, str]]) -> int:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)


def compact_json(obj: object) -> str:
    """``json.dumps`` as a logger writes a record on one line."""
    return json.dumps(obj, separators=(",", ":"))


def b64(raw: str) -> str:
    return base64.b64encode(raw.encode()).decode()
