"""Printers met in corpus/wild/dev15 (a mixed round of cluster logs pasted into issues). Inputs follow the
printers' own code; each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


# -- huggingface/tokenizers' fork warning ----------------------------------------------------------

def _fork_warning(bullet: str = "\t") -> list[str]:
    """child_after_fork (bindings/python/src/utils/parallelism.rs): three eprintln! calls."""
    return ["huggingface/tokenizers: The current process just got forked, after parallelism has already been used. "
            "Disabling parallelism to avoid deadlocks...",
            "To disable this warning, you can either:",
            f"{bullet}- Avoid using `tokenizers` before the fork if possible",
            f"{bullet}- Explicitly set the environment variable TOKENIZERS_PARALLELISM=(true | false)"]


def test_tokenizers_fork_warning_is_one_event_each():
    # rules: TOKENS "tok_fork"/"tok_fork_more"/"tok_fork_avoid"/"tok_fork_end", STARTS tok_fork -> MODES "tok_fork"
    for bullet in ("\t", " " * 8):
        texts = ["Prompt executed in 98.31 seconds", *_fork_warning(bullet), *_fork_warning(bullet),
                 "Prompt executed in 12.04 seconds"]
        assert spans(texts) == [(0, 0), (1, 4), (5, 8), (9, 9)], repr(bullet)


def test_tokenizers_fork_warning_glued_after_a_described_tqdm_bar():
    # rule: TOKENS "tok_fork" (the line may begin with the bar the parent left unterminated)
    bar = "probes.atkgen.Tox:   0%|          | 0/5 [00:00<?, ?it/s]"
    first, *rest = _fork_warning()
    texts = [bar + first + "      | 1/10 [00:02<00:23,  2.60s/it]", *rest, "probes.atkgen.Tox:  20%|##        | 1/5"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_tokenizers_fork_warning_takes_only_its_own_lines():
    # rule: MODES "tok_fork" continues only with the warning's fixed lines and ends at its last bullet
    head, more, avoid, _ = _fork_warning()
    assert spans([head, more, avoid, "Epoch 1/3", "loss: 0.41"]) == [(0, 2), (3, 3), (4, 4)]
    assert spans([*_fork_warning(), "\t- a bullet of the next message"]) == [(0, 3), (4, 4)]
