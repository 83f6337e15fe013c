"""Failures printed by the third-party Python printers training code uses: ``python pylibs.py SCENARIO [WIDTH]``.

Each scenario writes exactly one event to stderr (or stdout, for IPython), printed by the library's
own code (rich, loguru, absl-py, structlog, IPython's ultratb, typer), never by hand. ``WIDTH`` is the
console width Rich lays its boxes out to (logs are written with no terminal, so a job sets it or Rich
falls back to 80 columns).
"""

import logging
import sys


class DataLoaderError(Exception):
    pass


def load_batch(i):
    data = {"input_ids": [1, 2, 3], "attention_mask": [1, 1, 1]}
    return data["labels"][i]


def step(i):
    scale = 0.5
    return load_batch(i) * scale


def train():
    for i in range(3):
        step(i)


def chained():
    try:
        train()
    except KeyError as e:
        raise DataLoaderError("batch 0 has no 'labels' column") from e


def context():
    try:
        train()
    except KeyError:
        open("/nonexistent/checkpoints/step_1200/model.safetensors")


def multiline_msg():
    raise ValueError("shape mismatch in layer 12:\n  expected (4, 128, 4096)\n  got (4, 64, 4096)")


def _fail(n):
    raise ValueError(f"worker {n} failed to load shard {n * 7}")


def group():
    excs = []
    for n in range(2):
        try:
            _fail(n)
        except ValueError as e:
            excs.append(e)
    raise ExceptionGroup("rank errors", excs)


def syntax():
    compile("warmup = dict(steps=100,\nbatch_size = 8\n", "config.py", "exec")


def notes():
    e = ValueError("learning rate must be positive, got -0.001")
    e.add_note("while building the optimizer for param group 0")
    raise e


FAILURES = {"plain": train, "chained": chained, "context": context, "multiline": multiline_msg, "group": group,
            "syntax": syntax, "notes": notes}


def _width():
    return int(sys.argv[3]) if len(sys.argv) > 3 else 100


# --- rich ---------------------------------------------------------------------------------------

def s_rich_install(fail):
    from rich.console import Console
    from rich.traceback import install

    install(console=Console(stderr=True, width=_width()), width=_width())
    FAILURES[fail]()


def s_rich_print_exception(fail, show_locals=False):
    from rich.console import Console

    console = Console(stderr=True, width=_width())
    try:
        FAILURES[fail]()
    except Exception:
        console.print_exception(show_locals=show_locals)


def s_rich_locals(fail):
    s_rich_print_exception(fail, show_locals=True)


def s_rich_handler(fail):
    from rich.console import Console
    from rich.logging import RichHandler

    handler = RichHandler(console=Console(stderr=True, width=_width()), rich_tracebacks=True)
    logging.basicConfig(level="INFO", format="%(message)s", datefmt="[%x %X]", handlers=[handler])
    log = logging.getLogger("trainer")
    try:
        FAILURES[fail]()
    except Exception:
        log.exception("step %d failed, skipping batch", 1200)


def s_rich_handler_locals(fail):
    from rich.console import Console
    from rich.logging import RichHandler

    handler = RichHandler(console=Console(stderr=True, width=_width()), rich_tracebacks=True,
                          tracebacks_show_locals=True)
    logging.basicConfig(level="INFO", format="%(message)s", datefmt="[%x %X]", handlers=[handler])
    try:
        FAILURES[fail]()
    except Exception:
        logging.getLogger("trainer").exception("step %d failed, skipping batch", 1200)


def s_typer(fail):
    import typer

    app = typer.Typer()

    @app.command()
    def main(steps: int = 3):
        FAILURES[fail]()

    app(args=[], prog_name="train")


# --- loguru -------------------------------------------------------------------------------------

def _loguru(**opts):
    from loguru import logger

    if opts:  # the default sink is stderr with backtrace=True, diagnose=True
        logger.remove()
        logger.add(sys.stderr, **opts)
    return logger


def s_loguru_exception(fail, **opts):
    logger = _loguru(**opts)
    try:
        FAILURES[fail]()
    except Exception:
        logger.exception("step {} failed, skipping batch", 1200)


def s_loguru_nodiag(fail):
    s_loguru_exception(fail, diagnose=False)


def s_loguru_nobacktrace(fail):
    s_loguru_exception(fail, backtrace=False, diagnose=False)


def s_loguru_format(fail):
    # a format of the user's own, and the colours loguru writes when told to (colorize=True)
    s_loguru_exception(fail, format="{time:YYYY-MM-DD HH:mm:ss} {level} {name}:{line} {message}", colorize=True)


def s_loguru_serialize(fail):
    s_loguru_exception(fail, serialize=True)


def s_loguru_catch(fail):
    logger = _loguru()

    @logger.catch
    def run():
        FAILURES[fail]()

    run()


def s_loguru_catch_nodiag(fail):
    logger = _loguru(diagnose=False)

    @logger.catch(message="training loop crashed")
    def run():
        FAILURES[fail]()

    run()


# --- absl-py ------------------------------------------------------------------------------------

def s_absl_exception(fail):
    from absl import app, logging as absl_logging

    def main(argv):
        try:
            FAILURES[fail]()
        except Exception:
            absl_logging.exception("step %d failed, skipping batch", 1200)

    app.run(main, argv=["train", "--logtostderr"])


def s_absl_error_exc_info(fail):
    from absl import app, logging as absl_logging

    def main(argv):
        try:
            FAILURES[fail]()
        except Exception:
            absl_logging.error("evaluation failed", exc_info=True)

    app.run(main, argv=["train", "--logtostderr"])


def s_absl_before_flags(fail):
    from absl import logging as absl_logging

    # without app.run the flags are unparsed: absl warns once, then writes the record to stderr
    try:
        FAILURES[fail]()
    except Exception:
        absl_logging.exception("step %d failed, skipping batch", 1200)


# --- structlog ----------------------------------------------------------------------------------

def _structlog(formatter):
    import structlog

    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                    structlog.dev.ConsoleRenderer(colors=False, exception_formatter=formatter)],
        logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    return structlog.get_logger()


def s_structlog_plain(fail):
    import structlog

    log = _structlog(structlog.dev.plain_traceback)
    try:
        FAILURES[fail]()
    except Exception:
        log.exception("step failed", step=1200, rank=3)


def s_structlog_rich(fail):
    import structlog

    log = _structlog(structlog.dev.RichTracebackFormatter(width=_width(), color_system=None))
    try:
        FAILURES[fail]()
    except Exception:
        log.exception("step failed", step=1200, rank=3)


def s_structlog_better(fail):
    import structlog

    log = _structlog(structlog.dev.better_traceback)
    try:
        FAILURES[fail]()
    except Exception:
        log.exception("step failed", step=1200, rank=3)


def s_structlog_default(fail):
    import structlog

    # the default processors and ConsoleRenderer (colours and width from the terminal, or none), to stderr
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    try:
        FAILURES[fail]()
    except Exception:
        structlog.get_logger().exception("step failed", step=1200, rank=3)


def s_structlog_json(fail):
    import structlog

    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                    structlog.processors.format_exc_info, structlog.processors.JSONRenderer()],
        logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    try:
        FAILURES[fail]()
    except Exception:
        structlog.get_logger().exception("step failed", step=1200, rank=3)


# --- IPython ------------------------------------------------------------------------------------

def s_ipython(fail, tb_class="FormattedTB", mode="Context"):
    from IPython.core import ultratb

    tb = getattr(ultratb, tb_class)(mode=mode, theme_name="nocolor") if tb_class == "FormattedTB" \
        else getattr(ultratb, tb_class)(theme_name="nocolor")
    try:
        FAILURES[fail]()
    except Exception:
        sys.stderr.write(tb.text(*sys.exc_info()) + "\n")


def s_ipython_context(fail):
    s_ipython(fail, "FormattedTB", "Context")


def s_ipython_verbose(fail):
    s_ipython(fail, "FormattedTB", "Verbose")


def s_ipython_plain(fail):
    s_ipython(fail, "FormattedTB", "Plain")


def s_ipython_verbosetb(fail):
    s_ipython(fail, "VerboseTB")


# --- tqdm ---------------------------------------------------------------------------------------

def s_tqdm_redirect(fail):
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    logging.basicConfig(format="%(asctime)s - %(name)s - %(levelname)s - %(message)s")
    log = logging.getLogger("trainer")
    with logging_redirect_tqdm():
        for i in tqdm(range(3), file=sys.stderr, mininterval=0):
            if i == 1:
                try:
                    FAILURES[fail]()
                except Exception:
                    log.exception("step %d failed, skipping batch", i)


if __name__ == "__main__":
    globals()["s_" + sys.argv[1]](sys.argv[2] if len(sys.argv) > 2 else "plain")
