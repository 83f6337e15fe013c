"""Secret redaction, applied to every message before it leaves the stage.

Rules are data: ``(name, regex, replacement)``; ``Redactor(rules)`` takes any list of them, the
defaults cover Hugging Face, OpenAI-style, AWS, GitHub, bearer tokens, ``password=``, passwords in
URLs and wandb API keys. A cheap substring pre-check skips the regexes on most lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

DEFAULT_RULES: tuple[tuple[str, str, str], ...] = (
    ("hf_token", r"\bhf_[A-Za-z0-9]{30,}\b", "hf_[REDACTED]"),
    ("openai_key", r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}", "sk-[REDACTED]"),
    ("aws_access_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "[REDACTED_AWS_KEY]"),
    ("aws_secret_key", r"(?i)(aws_secret_access_key\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{40}", r"\1[REDACTED]"),
    ("github_token", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b", "gh_[REDACTED]"),
    ("bearer", r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}", r"\1[REDACTED]"),
    ("wandb_key", r"(WANDB_API_KEY\s*[=:]\s*[\"']?)[A-Za-z0-9]{20,}", r"\1[REDACTED]"),
    ("password_kv", r"(?i)(\b(?:password|passwd|pwd)\s*[=:]\s*[\"']?)[^\s\"'&,;]+", r"\1[REDACTED]"),
    # Any key naming a password, secret, API key or credential, in env, YAML, JSON or k=v form:
    # ELASTIC_PASSWORD=, SLUICE_KAFKA__SASL_PASSWORD=, "api_key": "...", client_secret: ...
    ("secret_kv", r"(?i)(\b[\w.-]*(?:password|passwd|secret|api[_-]?key|credential)[\w.-]*[\"']?\s*[=:]\s*[\"']?)"
                  r"(?!(?:\[REDACTED|None\b|null\b|nil\b|False\b|True\b|false\b|true\b|<))[^\s\"'&,;)]+",
     r"\1[REDACTED]"),
    # Tokens only when the value looks like one (16+ token characters): `pad_token: <pad>` and
    # `max_tokens=512` are training configuration, not secrets.
    # ...and mixes letters and digits: `token: android.os.BinderProxy@...` is a class name.
    ("token_kv", r"(?i)(\b[\w.-]*token[\"']?\s*[=:]\s*[\"']?)(?!\[REDACTED)"
                 r"(?=[A-Za-z0-9_\-.]*\d)(?=[A-Za-z0-9_\-.]*[A-Za-z])[A-Za-z0-9_\-.]{16,}", r"\1[REDACTED]"),
    ("auth_header", r"(?i)(\bauthorization[\"']?\s*[=:]\s*[\"']?(?:basic|apikey|api-key|token)\s+)"
                    r"[A-Za-z0-9._~+/=-]{6,}", r"\1[REDACTED]"),
    ("url_password", r"([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:)[^@\s/]+@", r"\1[REDACTED]@"),
)


# Literals a default rule cannot match without, in lower case: a rule none of whose literals is in the
# line lowered once is skipped, and a line holding none of them all (97% of the corpus's events) skips
# every rule. Looking in the lowered line is safe for the case-sensitive rules too: it can only make a
# rule run for nothing. Without the second kind of skip, the six (?i) rules ran on every line that passed
# the gate: 24% of an assemble worker (py-spy).
_NEEDLES: dict[str, tuple[str, ...]] = {
    "hf_token": ("hf_",), "openai_key": ("sk-",), "aws_access_key": ("akia", "asia"),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "wandb_key": ("wandb_api_key",),
    "url_password": ("://",), "aws_secret_key": ("aws_secret_access_key",), "bearer": ("bearer",),
    "password_kv": ("password", "passwd", "pwd"),
    "secret_kv": ("password", "passwd", "secret", "apikey", "api_key", "api-key", "credential"),
    "token_kv": ("token",), "auth_header": ("authorization",),
}


# What a (?i) rule matches that str.lower() does not make ASCII: the long s (ſ) and the dotless i (ı)
# stand for s and i, and İ lowers to i and a combining dot. "paſsword=x" and "credentıal: x" are
# redacted by the rules, so the gate must let them through. (The Kelvin sign lowers to k.)
_FOLDS = str.maketrans({"\u017f": "s", "\u0131": "i", "\u0307": ""})


def _gate(needles: Iterable[str]) -> Callable[[str], bool]:
    """``low -> bool``: is any of ``needles`` in it? One ``or`` chain (a loop over them costs twice as much),
    without the needles that hold another one (``aws_secret_access_key`` goes, ``secret`` stays)."""
    kept = sorted({n for n in needles if not any(o != n and o in n for o in needles)})
    return eval("lambda low: " + " or ".join(f"{n!r} in low" for n in kept))  # noqa: S307 - literals of our own


class Redactor:
    def __init__(self, rules: Iterable[tuple[str, str, str]] | None = None) -> None:
        custom = rules is not None
        chosen = DEFAULT_RULES if rules is None else rules
        self.rules = [(n, re.compile(rx), rep) for n, rx, rep in chosen]
        # A rule without needles gets "", which every line holds: it always runs, and so does the gate.
        self._steps = [(_NEEDLES.get(n) or ("",), rx.sub, rep) for n, rx, rep in self.rules]
        self._gate = None if custom else _gate([n for needles, _sub, _rep in self._steps for n in needles])

    def __call__(self, text: str) -> str:
        if self._gate is None:  # custom rules: no needles, every rule runs
            for _needles, sub, rep in self._steps:
                text = sub(rep, text)
            return text
        # Lowered once, before any rule replaced anything: a replacement only ever removes a needle (it
        # writes "[REDACTED]"), so the stale copy can only make a rule run for nothing.
        low = text.lower()
        if not text.isascii():  # answered from the string's header: the translation costs ASCII lines nothing
            low = low.translate(_FOLDS)
        if not self._gate(low):
            return text
        for needles, sub, rep in self._steps:
            for n in needles:
                if n in low:
                    text = sub(rep, text)
                    break
        return text
