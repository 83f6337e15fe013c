"""Build output met in corpus/wild/dev28 (CUDA extensions built by pip, torch's JIT loader, CMake and ninja).
Inputs follow the printers' own code (GCC's diagnostic.c, Clang's TextDiagnostic, ninja's status printer,
CMake's cmMessenger); each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


# -- GCC and Clang -------------------------------------------------------------------------------------------

def test_gcc_include_stack_fatal_error_locus_and_termination_are_one_event():
    # rules: TOKENS "cc_incl" "cc_from" "cc_diag" "cc_gutter" "cc_term", MODES "cc_head" "cc_body"
    texts = ["[3/7] c++ -MMD -MF ops.o.d -c csrc/ops.cpp -o ops.o",
             "In file included from /opt/torch/include/ATen/cuda/CUDAContext.h:3,",
             "                 from csrc/ops.cpp:4:",
             "/opt/torch/include/ATen/cuda/CUDAContextLight.h:7:10: fatal error: cublas_v2.h: No such file",
             "    7 | #include <cublas_v2.h>",
             "      |          ^~~~~~~~~~~~~",
             "compilation terminated.",
             "ninja: build stopped: subcommand failed."]
    assert spans(texts) == [(0, 0), (1, 6), (7, 7)]


def test_gcc_note_keeps_its_own_include_stack_and_the_next_error_starts_anew():
    # rules: MODES "cc_body" ("cc_incl"/"cc_from" held; "cc_note" confirms them, "cc_diag" releases them)
    texts = ["csrc/bind.cpp:12:5: error: no matching function for call to 'pack(int&)'",
             "   12 |     pack(n);",
             "      |     ~~~~^~~",
             "In file included from csrc/bind.cpp:2:",
             "csrc/pack.h:8:6: note: candidate: 'void pack(float&)'",
             "    8 | void pack(float& x);",
             "      |      ^~~~",
             "In file included from csrc/bind.cpp:3:",
             "csrc/other.h:4:2: error: #error unsupported",
             "    4 | #error unsupported",
             "      |  ^~~~~"]
    assert spans(texts) == [(0, 6), (7, 10)]


def test_gcc_function_context_line_opens_the_next_diagnostic_with_its_old_style_locus():
    # rules: TOKENS "cc_ctx" "cc_warn", MODES "cc_body" ("cc_ctx" ends; deeper source and caret lines)
    texts = ["  csrc/attn.cpp:30:9: warning: unused variable 'k' [-Wunused-variable]",
             "           int k = 0;",
             "               ^",
             "  csrc/attn.cpp: In function 'void run(int)':",
             "  csrc/attn.cpp:41:9: warning: unused variable 'j' [-Wunused-variable]",
             "           int j = 0;",
             "               ^",
             "  creating build/lib"]
    assert spans(texts) == [(0, 2), (3, 6), (7, 7)]


def test_clang_source_line_at_column_zero_is_held_until_its_caret_confirms_it():
    # rules: MODES "cc_body" ("text" held, "cc_caret" confirms it; clang's fix-it line deeper under the caret)
    texts = ["/usr/include/c++/11/cstdint:59:11: error: no member named 'int_least32_t' in the global namespace",
             "using ::int_least32_t;",
             "      ~~^",
             "        __int_least32_t",
             "2 errors generated.",
             "make[2]: *** [CMakeFiles/x.dir/a.cpp.o] Error 1"]
    assert spans(texts) == [(0, 3), (4, 4), (5, 5)]


def test_gutter_line_of_a_diagnostic_cut_above_needs_its_caret_line():
    # rules: STARTS "cc_gutter_num" -> MODES "cc_cut" ("cc_caret_gutter"), SOFT_STARTS "cc_gutter_num": a table's
    # numbered rows (Lightning's model summary) stay apart
    texts = ["  138 | #error -- unsupported GNU version!",
             "      |  ^~~~~",
             "next",
             "  | Name    | Type   | Params",
             "-----------------------------",
             "0 | encoder | Linear | 100   ",
             "1 | decoder | Linear | 100   ",
             "-----------------------------",
             "200       Trainable params",
             "200       Total params"]
    assert spans(texts) == [(0, 1), (2, 2), (3, 9)]


# -- ninja -----------------------------------------------------------------------------------------------------

def test_ninja_failed_line_takes_the_edge_command_and_nothing_after_it():
    # rules: TOKENS "ninja_failed", MODES "ninja_failed" "ninja_cmd"
    texts = ["[1/3] /usr/local/cuda/bin/nvcc -c ops.cu -o ops.cuda.o",
             "FAILED: ops.cuda.o ",
             "/usr/local/cuda/bin/nvcc -c ops.cu -o ops.cuda.o",
             "ops.cu(5): error: identifier \"x\" is undefined",
             "",
             "1 error detected in the compilation of \"ops.cu\"."]
    assert spans(texts) == [(0, 0), (1, 2), (3, 3), (5, 5)]


# -- CMake -----------------------------------------------------------------------------------------------------

def test_cmake_message_paragraphs_call_stack_and_developer_line_are_one_event():
    # rules: TOKENS "cmake_msg" "cmake_stack" "cmake_dev", MODES "cmake_msg" (after_blank "indent" deeper)
    texts = ["-- Found CUDAToolkit: /usr/local/cuda/include (found version \"12.4\")",
             "CMake Warning (dev) at cmake/utils.cmake:40 (find_package):",
             "  Policy CMP0146 is not set: The FindCUDA module is removed.",
             "",
             "  Run \"cmake --help-policy CMP0146\" for policy details.",
             "Call Stack (most recent call first):",
             "  CMakeLists.txt:12 (include)",
             "This warning is for project developers.  Use -Wno-dev to suppress it.",
             "",
             "-- Configuring done"]
    assert spans(texts) == [(0, 0), (1, 7), (9, 9)]


def test_cmake_error_whose_empty_lines_lost_their_indent_ends_at_the_status_line():
    # rules: MODES "cmake_msg" ("indent" deeper after blank lines; a line at the head's column ends it)
    texts = ["    CMake Error at CMakeLists.txt:3 (project):",
             "      Running",
             "",
             "       '/tmp/env/bin/ninja' '--version'",
             "",
             "      failed with:",
             "",
             "       no such file or directory",
             "",
             "    -- Configuring incomplete, errors occurred!"]
    assert spans(texts) == [(0, 7), (9, 9)]


def test_compiler_lines_an_exception_message_quotes_stay_in_the_message():
    # rule: the loop after MODES giving Python messages' modes the compiler tokens as text (XLA's MLIR diagnostics)
    texts = ["Traceback (most recent call last):",
             "  File \"run.py\", line 3, in <module>",
             "    compiled = lowered.compile()",
             "jaxlib.xla_extension.XlaRuntimeError: UNKNOWN: -:0:0: error: unknown vhlo type code: 33",
             "-:0:0: note: in bytecode version 6 produced by: StableHLO_v1.7.1",
             "I0501 10:00:00.000000 4242 train.py:10] step 1"]
    assert spans(texts) == [(0, 4), (5, 5)]
