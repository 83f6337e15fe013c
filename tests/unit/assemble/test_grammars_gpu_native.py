"""Native crash and error output on GPU nodes: the kernel's reports as dmesg and journalctl print them.

Inputs are runs of lines in the shape the printers write (arch/x86/kernel/dumpstack.c, arch/x86/mm/fault.c,
journalctl's short format); each test names the rule it guards.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


def test_call_trace_cut_above_its_header_is_one_report_in_dmesg():
    # printk_stack_address: " sym+0xoff/0xsize [module]", "? " before an unreliable address
    lines = ["[  155.441404]  uvm_vm_close_managed_entry+0x92/0xb0 [nvidia_uvm]",
             "[  155.441426]  remove_vma+0x31/0x90",
             "[  155.441523]  ? security_file_free+0x54/0x70",
             "[  155.441538]  uvm_release_entry+0x2e/0x40 [nvidia_uvm]",
             "[  155.441619]  ? srso_return_thunk+0x5/0x10"]
    assert spans(lines) == [(0, 4)]


def test_call_trace_cut_above_its_header_behind_journal_kernel_tag_without_host():
    lines = ["Sep 06 23:00:03 kernel:  ? _nv045796rm+0x2c/0x40 [nvidia]",
             "Sep 06 23:00:03 kernel:  ? uvm_ioctl+0x16c9/0x1cd0 [nvidia_uvm]",
             "Sep 06 23:00:03 kernel:  ? __x64_sys_ioctl+0xbb/0xf0",
             "Sep 06 23:00:04 kernel: nvidia-modeset: Freed GPU:0"]
    assert spans(lines) == [(0, 2), (3, 3)]


def test_page_fault_oops_keeps_its_ip_and_page_table_lines():
    # show_fault_oops before 4.x: "IP: [<addr>] sym", dump_pagetable: "PGD 0", then the oops line
    head = "Mar 24 11:53:43 node kernel: [   13.3125{}] "
    lines = [head.format(33) + "BUG: unable to handle kernel NULL pointer dereference at 0000000000000010",
             head.format(37) + "IP: [<ffffffffc01cc246>] amdgpu_bo_list_set+0x196/0x3d0 [amdgpu]",
             head.format(54) + "PGD 0 ",
             head.format(56) + "Oops: 0000 [#1] SMP "]
    assert spans(lines) == [(0, 3)]


def test_a_plus_offset_line_that_is_no_kernel_frame_stays_apart():
    # a frame needs both the offset and the function's size ("+0xoff/0xsize")
    lines = ["[  155.441404]  retrying in +0x10 seconds", "[  155.441426]  remove_vma+0x31"]
    assert spans(lines) == [(0, 0), (1, 1)]


def test_traceback_message_carrying_tsl_stack_trace_keeps_its_frames_across_an_unknown_symbol():
    # torch_xla's XLA_CHECK message: the check's text, tsl::CurrentStackTrace's "*** Begin stack trace ***",
    # a symbol a line (an unknown one left blank), "*** End stack trace ***"
    lines = ["Traceback (most recent call last):",
             '  File "dot.py", line 6, in <module>',
             "    torch.dot(a, b)",
             "RuntimeError: torch_xla/csrc/aten_xla_bridge.cpp:110 : Check failed: xtensor",
             "*** Begin stack trace ***",
             "\ttsl::CurrentStackTrace[abi:cxx11]()",
             "\ttorch_xla::bridge::GetXlaTensor(at::Tensor const&)",
             "",
             "\tc10::BoxedKernel::callBoxed(c10::OperatorHandle const&) const",
             "*** End stack trace ***",
             "I1203 16:40:00.000000 1 main.py:3] next record"]
    assert spans(lines) == [(0, 9), (10, 10)]
