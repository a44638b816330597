"""Kernel source through ``.include`` and ``.macro``: what they expand to, and every error
naming the file, line and column it stands at and where the file was included or the
macro used."""

import pytest

from matndp.host.kernels.assembler import AssemblyError, assemble, assemble_file
from matndp.host.kernels.source import AssemblyError as SourceAssemblyError, Place, expand, file_reader


def reader(files):
    """A reader of included files from ``files`` ({name: text})."""
    def read(name, including):
        if name not in files:
            raise FileNotFoundError("no such file")
        return files[name], name
    return read


def build(text, files=None, filename="k.s"):
    return assemble(text, filename, include=reader(files or {}))


def error_of(text, files=None):
    with pytest.raises(AssemblyError) as caught:
        build(text, files)
    return caught.value


INLINE = """.kernel k
.arg OUT 3
.main
    vmax    v1, DATA, 0.0
    vmax    v2, v1, 1.0
again:
    vadd    v3, v2, v1
    beq     x1, x0, again
    vstm.x  [OFFSET + OUT + 32], v3
"""


def test_an_included_file_stands_in_place_of_its_line():
    files = {"args.inc": ".arg OUT 3\n", "body.inc": "    vmax    v2, v1, 1.0\n"}
    image = build(""".kernel k
.include "args.inc"      ; the arguments
.main
    vmax    v1, DATA, 0.0
.include "body.inc"
again:
    vadd    v3, v2, v1
    beq     x1, x0, again
    vstm.x  [OFFSET + OUT + 32], v3
""", files)
    assert image == build(INLINE)


def test_a_macro_stands_for_its_lines_with_the_arguments_in_place_of_the_parameters():
    image = build(""".kernel k
.arg OUT 3
.macro clamp_sum result, low, source, address      ; comments are not part of a macro
    vmax    v1, \\source, \\low
    vmax    v2, v1, 1.0
again:
    vadd    \\result, v2, v1                        ; \\result: not replaced in a comment
    beq     x1, x0, again
    vstm.x  \\address, \\result
.endm
.main
    clamp_sum v3, 0.0, DATA, [OFFSET + OUT + 32]
""")
    assert image == build(INLINE)


def test_labels_before_a_macro_use_label_its_first_line_and_macros_use_macros():
    files = {"lib.inc": """.macro pair first, second
    \\first
    \\second
.endm
.macro maximum dest, a, b
    vmax    \\dest, \\a, \\b
.endm
"""}
    image = build(""".kernel k
.include "lib.inc"
.arg OUT 3
.main
top: pair nop, nop
    maximum v1, DATA, 0.0
    beq x1, x0, top
    exit
""", files)
    plain = build(".kernel k\n.arg OUT 3\n.main\ntop: nop\n nop\n vmax v1, DATA, 0.0\n beq x1, x0, top\n exit\n")
    assert image == plain


def test_a_macro_without_parameters_and_one_taking_a_mnemonic():
    image = build(""".kernel k
.macro finish
    exit
.endm
.macro apply operation, dest
    \\operation \\dest, DATA, 0.0
.endm
.main
    apply vmax, v1
    apply vmin, v2
    finish
""")
    assert image == build(".kernel k\n.main\n vmax v1, DATA, 0.0\n vmin v2, DATA, 0.0\n exit\n")


def test_files_are_included_relative_to_the_including_file_then_from_the_search_folders(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "lib" / "outer.inc").write_text('.include "inner.inc"\n')
    (tmp_path / "lib" / "inner.inc").write_text(".macro out\n    vstm.x [OFFSET + OUT], DATA\n.endm\n")
    (tmp_path / "shared" / "args.inc").write_text(".arg OUT 3\n")
    kernel = tmp_path / "k.s"
    kernel.write_text('.kernel k\n.include "shared/args.inc"\n.include "lib/outer.inc"\n.main\n    out\n')
    image = assemble_file(kernel)
    assert image == build(".kernel k\n.arg OUT 3\n.main\n    vstm.x [OFFSET + OUT], DATA\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "k.s").write_text('.kernel k\n.include "args.inc"\n.include "lib/outer.inc"\n'
                                   '.main\n    out\n')
    assert assemble_file(elsewhere / "k.s", include_folders=[tmp_path / "shared", tmp_path]) == image


def test_the_file_reader_says_where_it_looked(tmp_path):
    read = file_reader([tmp_path / "a"])
    with pytest.raises(FileNotFoundError, match="looked in .*b.*a"):
        read("none.inc", str(tmp_path / "b" / "k.s"))
    (tmp_path / "binary.inc").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(FileNotFoundError, match="not a UTF-8 text file"):
        read("binary.inc", str(tmp_path / "k.s"))


HEADER = ".kernel k\n.arg OUT 3\n"

MACRO = """.macro relu y, x
    vmax    \\y, \\x, 0.0
.endm
"""

ERRORS = [
    # (source, included files, (file, line, column), message fragment, trace)
    (HEADER + '.include "nope.inc"\n.main\n exit\n', {}, ("k.s", 3, 10),
     "cannot include 'nope.inc': no such file", ()),
    (HEADER + '.include nope.inc\n.main\n exit\n', {}, ("k.s", 3, 1),
     'takes a file name in double quotes', ()),
    (HEADER + '.include "a.inc"\n.main\n exit\n', {"a.inc": '\n.include "b.inc"\n', "b.inc": '.include "a.inc"\n'},
     ("b.inc", 1, 10), "'a.inc' includes itself: a.inc → b.inc → a.inc",
     (("included", "a.inc", 2, 1), ("included", "k.s", 3, 1))),
    (HEADER + '.include "self.inc"\n.main\n exit\n', {"self.inc": '.include "self.inc"\n'},
     ("self.inc", 1, 10), "includes itself: self.inc → self.inc", (("included", "k.s", 3, 1),)),
    (HEADER + '.include "bad.inc"\n.main\n exit\n', {"bad.inc": ".arg X 1\n  .arg Y 1\n"},
     ("bad.inc", 2, 10), "argument word 1 is already named at bad.inc:1", (("included", "k.s", 3, 1),)),
    (HEADER + MACRO + MACRO + ".main\n exit\n", {}, ("k.s", 6, 8),
     "macro relu is already defined at line 3", ()),
    (HEADER + '.include "m.inc"\n' + MACRO + ".main\n exit\n", {"m.inc": MACRO}, ("k.s", 4, 8),
     "macro relu is already defined at m.inc:1", ()),
    (HEADER + MACRO + ".main\n    relu v1\n    exit\n", {}, ("k.s", 7, 5),
     "macro relu takes 2 arguments (y, x), not 1", ()),
    (HEADER + MACRO + ".main\n    relu v1, , DATA\n    exit\n", {}, ("k.s", 7, 14),
     "missing operand before ','", ()),
    (HEADER + MACRO + ".main\n    relu v1,\n    exit\n", {}, ("k.s", 7, 12),
     "missing operand after ','", ()),
    (HEADER + ".macro finish\n    exit\n.endm\n.main\n    finish x1\n", {}, ("k.s", 7, 5),
     "macro finish takes 0 arguments, not 1", ()),
    (HEADER + MACRO + ".main\n    reluu v1, DATA\n    exit\n", {}, ("k.s", 7, 5),
     "unknown mnemonic or macro 'reluu' (did you mean relu?)", ()),
    (HEADER + ".main\n    relu v1, DATA\n" + MACRO + "    exit\n", {}, ("k.s", 4, 5),
     "macro relu is used before its definition at line 5", ()),
    (HEADER + ".macro vadd a\n.endm\n.main\n exit\n", {}, ("k.s", 3, 8),
     "'vadd' is a mnemonic; choose another macro name", ()),
    (HEADER + ".macro v3\n.endm\n.main\n exit\n", {}, ("k.s", 3, 8), "'v3' is reserved", ()),
    (HEADER + ".macro\n.endm\n.main\n exit\n", {}, ("k.s", 3, 1),
     ".macro takes a name and its parameters", ()),
    (HEADER + ".macro m a, a\n.endm\n.main\n exit\n", {}, ("k.s", 3, 13), "parameter a is given twice", ()),
    (HEADER + ".macro m a, 2\n.endm\n.main\n exit\n", {}, ("k.s", 3, 13),
     "a macro parameter is a name, not '2'", ()),
    (HEADER + ".macro m a\n    vmax v1, \\b, 0.0\n.endm\n.main\n exit\n", {}, ("k.s", 4, 14),
     "\\b is not a parameter of macro m (a)", ()),
    (HEADER + ".macro m a\n    vmax v1, \\, 0.0\n.endm\n.main\n exit\n", {}, ("k.s", 4, 14),
     "'\\' must be followed by a parameter name", ()),
    (HEADER + ".main\n    vmax v1, \\a, 0.0\n    exit\n", {}, ("k.s", 4, 14),
     "a macro parameter (\\name) outside a macro", ()),
    (HEADER + "  .macro m a\n    nop\n.main\n exit\n", {}, ("k.s", 3, 3), "macro m has no .endm", ()),
    (HEADER + ".endm\n.main\n exit\n", {}, ("k.s", 3, 1), ".endm without .macro", ()),
    (HEADER + ".macro m\n.endm now\n.main\n exit\n", {}, ("k.s", 4, 7), ".endm takes no operands", ()),
    (HEADER + ".macro m\n.macro n\n.endm\n.endm\n.main\n exit\n", {}, ("k.s", 4, 1),
     "macro definitions do not nest", ()),
    (HEADER + ".macro m\n    m\n.endm\n.main\n    m\n    exit\n", {}, ("k.s", 4, 5),
     "macro m uses itself: m → m", (("in macro m, used", "k.s", 7, 5),)),
    (HEADER + MACRO + ".main\n    relu.x v1, DATA\n", {}, ("k.s", 7, 9), "a macro takes no flags (.x on relu)", ()),
    (HEADER + ".macro m\n.include \"a.inc\"\n.endm\n.main\n    m\n exit\n", {"a.inc": ""}, ("k.s", 4, 1),
     ".include inside macro m", ()),
    # An error in a macro's line names that line; a replaced parameter's column is the
    # parameter's; the trace names the use.
    (HEADER + MACRO + ".main\n    nop\n    relu x1, DATA\n    exit\n", {}, ("k.s", 4, 13),
     "the destination of vmax is a vector register", (("in macro relu, used", "k.s", 8, 5),)),
    (HEADER + ".macro m y\n    vadd    \\y, v2, 1e39\n.endm\n.main\n    m v12\n    exit\n", {}, ("k.s", 4, 21),
     "beyond the largest FP32", (("in macro m, used", "k.s", 7, 5),)),
    # A macro of an included file used in the kernel, and through another macro.
    (HEADER + '.include "m.inc"\n.main\n    twice\n    exit\n',
     {"m.inc": ".macro once\n    vadd v1, v2, x3\n.endm\n.macro twice\n    once\n.endm\n"},
     ("m.inc", 2, 18), "x3 is a scalar register",
     (("in macro once, used", "m.inc", 5, 5), ("in macro twice, used", "k.s", 5, 5))),
    # A label a macro defines clashes when the macro is used twice.
    (HEADER + ".macro spin\nloop: beq x1, x0, loop\n.endm\n.main\n    spin\n    spin\n    exit\n", {},
     ("k.s", 4, 1), "'loop' is already defined at k.s:4 (in macro spin, used at k.s:7:5)",
     (("in macro spin, used", "k.s", 8, 5),)),
]


@pytest.mark.parametrize("text, files, where, message, trace", ERRORS)
def test_errors_name_where_they_stand_and_how_the_line_got_there(text, files, where, message, trace):
    error = error_of(text, files)
    assert message in error.problem, str(error)
    assert (error.filename, error.line, error.column) == where, str(error)
    assert error.trace == trace, str(error)


def test_an_error_message_lists_the_trace_under_the_place():
    error = error_of(HEADER + MACRO + ".main\n    relu x1, DATA\n    exit\n")
    assert str(error) == ("k.s:4:13: the destination of vmax is a vector register (v0 … v15), not 'x1'\n"
                          "  in macro relu, used at k.s:7:5")
    assert isinstance(error, SourceAssemblyError)


def test_a_place_maps_expanded_columns_back_to_the_written_line():
    place = Place("m.inc", 4, segments=((1, 1), (10, -14), (12, 16)))
    assert [place.column(column) for column in (1, 9, 10, 11, 12, 15)] == [1, 9, 14, 14, 16, 19]
    assert Place("k.s", 2).column(7) == 7


def test_a_macro_argument_is_its_written_text_from_its_first_to_its_last_token():
    text = (".macro put address, value, other\n"
            "    op \\address, \\value; \\other\n"
            ".endm\n"
            "top:   put   [ x1 +  8 ]  ,   -  4.5 ,x2\n")
    lines, macros = expand(text, "k.s", reader({}), {})
    # A label before the use stays as its own line; each argument keeps its inner spacing
    # and loses the spacing around it.
    assert [line.text for line in lines] == ["top:   ", "    op [ x1 +  8 ], -  4.5"]
    assert [(line.place.filename, line.place.line) for line in lines] == [("k.s", 4), ("k.s", 2)]
    assert macros == {"put": Place("k.s", 1)}


def test_multi_token_macro_arguments_assemble_as_if_written_in_place():
    image = build(""".kernel k
.macro scaled_store address, scale
    vmul    v1, DATA,   \\scale
    vst.x   \\address, v1
.endm
.main
    scaled_store   [OFFSET   +  x2 + 64] ,  -  2.5
""")
    assert image == build(".kernel k\n.main\n vmul v1, DATA, -2.5\n vst.x [OFFSET + x2 + 64], v1\n")


def test_a_macro_used_inside_a_macro_is_traced_to_the_column_its_name_is_written_at():
    """apply's line writes \\operation at column 8, after a label a parameter supplies; the
    use of bad it expands to is traced there, not to where the long label pushed it."""
    error = error_of(""".kernel k
.macro bad r
    vadd \\r, v2, x3
.endm
.macro apply operation, dest, name
\\name: \\operation \\dest
.endm
.main
    apply   bad,  v1, a_rather_long_label
    exit
""")
    assert str(error) == ("k.s:3:18: x3 is a scalar register, but operand b of vadd is vector\n"
                          "  in macro bad, used at k.s:6:8\n"
                          "  in macro apply, used at k.s:9:5")


def test_a_macro_used_after_a_label_is_traced_to_its_name():
    error = error_of(HEADER + MACRO + ".main\nstart:  relu x1, DATA\n    exit\n")
    assert (error.line, error.column, error.trace) == (4, 13, (("in macro relu, used", "k.s", 7, 9),))
