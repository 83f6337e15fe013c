"""Secret redaction, applied to every message before it leaves the stage.

Rules are data: ``(name, regex, replacement)``; ``Redactor(rules)`` takes any list of them, the
defaults cover Hugging Face, OpenAI-style, AWS, GitHub, bearer tokens, ``password=``, passwords in
URLs and wandb API keys. A cheap substring pre-check skips the regexes on most lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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


# Literals a default rule cannot match without: a rule whose literals are all absent is skipped, which
# saves most of the regex passes over lines that passed the gate. Case-sensitive rules look in the line;
# case-insensitive ones (``(?i)``) look, in lower case, in the line lowered once. Without the second
# kind the six (?i) rules ran on every line that passed the gate: 24% of an assemble worker (py-spy).
_NEEDLES: dict[str, tuple[str, ...]] = {
    "hf_token": ("hf_",), "openai_key": ("sk-",), "aws_access_key": ("AKIA", "ASIA"), "github_token": ("gh",),
    "wandb_key": ("WANDB_API_KEY",), "url_password": ("://",),
}
_NEEDLES_ANY_CASE: dict[str, tuple[str, ...]] = {
    "aws_secret_key": ("aws_secret_access_key",), "bearer": ("bearer",), "password_kv": ("password", "passwd", "pwd"),
    "secret_kv": ("password", "passwd", "secret", "api", "credential"), "token_kv": ("token",),
    "auth_header": ("authorization",),
}


def _may_hold_secret(t: str) -> bool:
    """Cheap gate: one of these substrings is needed by every default rule (plain ``in`` is fast)."""
    return ("hf_" in t or "sk-" in t or "AKIA" in t or "ASIA" in t or "ecret" in t or "ECRET" in t
            or "gh" in t or "earer" in t or "EARER" in t or "WANDB" in t or "ass" in t or "ASS" in t
            or "wd" in t or "WD" in t or "://" in t or "ey" in t or "EY" in t or "oken" in t or "OKEN" in t
            or "redential" in t or "REDENTIAL" in t or "uthoriz" in t or "UTHORIZ" in t)


class Redactor:
    def __init__(self, rules: Iterable[tuple[str, str, str]] | None = None) -> None:
        custom = rules is not None
        chosen = DEFAULT_RULES if rules is None else rules
        self.rules = [(n, re.compile(rx), rep) for n, rx, rep in chosen]
        self._gate = None if custom else _may_hold_secret
        needles, lowered = ({}, {}) if custom else (_NEEDLES, _NEEDLES_ANY_CASE)
        self._steps = [(needles.get(n, ()), lowered.get(n, ()), rx.sub, rep) for n, rx, rep in self.rules]

    def __call__(self, text: str) -> str:
        if self._gate is not None and not self._gate(text):
            return text
        low = None
        for needles, lowered, sub, rep in self._steps:
            if needles and not any(n in text for n in needles):
                continue
            if lowered:
                # Lowered once, before any rule replaced anything: a replacement only ever removes a
                # needle (it writes "[REDACTED]"), so the stale copy can only make a rule run for nothing.
                low = text.lower() if low is None else low
                if not any(n in low for n in lowered):
                    continue
            text = sub(rep, text)
        return text
