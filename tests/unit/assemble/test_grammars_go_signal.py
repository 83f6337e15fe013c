"""Grammar of the Go runtime's dump on a signal it is asked to die of (SIGQUIT from ``kill -QUIT`` or a
supervisor asking for stacks): the signal's line, the PC line, every goroutine, then the registers.

The test names the rules it guards and builds the lines from runtime/signal_unix.go's and dumpregs' print
calls (quoted in ``rules.py``); removing the rules makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import spans

REGS = ("rax", "rbx", "rcx", "rdx", "rdi", "rsi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
        "rip", "rflags", "cs", "fs", "gs")


def _goroutine(n: int, status: str, frames: list[tuple[str, str]]) -> list[str]:
    # traceback.go goroutineheader under GOTRACEBACK=crash/system: "goroutine N gp=.. m=.. [status]:"; each
    # frame the function, then "\tfile:line +0x.. fp=.. sp=.. pc=.."
    out = [f"goroutine {n} gp=0x32dbb55261e0 m=nil [{status}]:"]
    for func, where in frames:
        out += [func, f"\t{where} +0xce fp=0x32dbb559eea0 sp=0x32dbb559ee80 pc=0x47976e"]
    return out


def _sigquit_dump() -> list[str]:
    out = ["SIGQUIT: quit", "PC=0x40866e m=0 sigcode=0", ""]
    out += _goroutine(1, "sleep", [("time.Sleep(0x2540be400)", "/usr/local/go/src/runtime/time.go:363"),
                                   ("main.main()", "/src/worker/main.go:19")])
    out += ["", *_goroutine(17, "chan receive", [("main.main.func1()", "/src/worker/main.go:117")])]
    out += ["created by main.main in goroutine 1", "\t/src/worker/main.go:117 +0x66", ""]
    # signal_amd64.go dumpregs: print("rax    ", hex(c.rax()), "\n") ... print("gs     ", hex(c.gs()), "\n")
    out += [f"{r:<7}0x{i * 0x1f3:x}" for i, r in enumerate(REGS)]
    return out


def test_sigquit_dump_is_one_event_from_its_signal_line_to_its_registers() -> None:
    # rules: TOKENS go_sig_pc (the PC line, which reads as a key=value record), go_reg; MODES go_head
    # "go_sig_pc", go_stack's after_blank "go_reg" -> "go_regs"
    dump = _sigquit_dump()
    assert dump[-2] == "fs     0x2509"
    texts = ["worker waiting for shards", *dump, "I1201 17:44:23.690548  81935 trainer.cc:677] step 923"]
    assert spans(texts) == [(0, 0), (1, len(dump)), (len(dump) + 1, len(dump) + 1)]
