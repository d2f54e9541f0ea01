"""The user's strings that reach generated source stay in their comments (issue 27, item 14).

A file name with a line break was pasted as it was into the generated module's comments, and what followed the
break ran when the module was compiled. Every user string written into a comment (file names, function names, a
line of the user's code, a dict key in the header, a type's name) has its line breaks and other control
characters escaped (`comment_text`); an attribute name that is not an identifier is read with getattr; an import
line holds names only.
"""
import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s
from s2s.emit.source_text import comment_text

PAYLOAD = "\nimport os; os._exit(3)\n"
SEPARATORS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x00"


def _comment_lines_hold(text):
    """Every line of text that is not code is a comment, and str.splitlines reads the lines Python reads."""
    assert text.splitlines() == text.split("\n")[:len(text.splitlines())]
    compile(text, "<generated>", "exec")
    return text


@pytest.mark.parametrize("text", ["plain", "a\nb", "a\r\nb", "tab\tkept", *SEPARATORS, "é ü 漢字"])
def test_comment_text_keeps_one_line_and_what_is_printable(text):
    escaped = comment_text(text)
    assert escaped.splitlines() == [escaped] or escaped == ""
    assert all(c not in escaped for c in "\n\r" + SEPARATORS)
    assert escaped.encode().decode("unicode_escape") == text or not text.isascii()
    if text.isprintable():
        assert escaped == text


@pytest.mark.slow
def test_a_file_name_with_a_line_break_runs_nothing(tmp_path):
    """The issue's case, in a process of its own: the file name holds `import os; os._exit(3)` between line
    breaks."""
    directory = tmp_path / f"evil{PAYLOAD}dir"
    directory.mkdir()
    path = directory / "model.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sin(x) * x\n")
    script = textwrap.dedent(f"""
        import importlib.util, math
        import s2s
        spec = importlib.util.spec_from_file_location("model", {str(path)!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for mode in ("auto", "reverse", "forward"):
            value = s2s.grad(module.f, mode=mode)(0.5)
            assert abs(value - (math.cos(0.5) * 0.5 + math.sin(0.5))) < 1e-12, value
        text = s2s.source(module.f, 0.5, mode="reverse")
        assert "evil\\\\nimport os; os._exit(3)\\\\ndir" not in text   # (the directory is not shown)
        exported = s2s.export(module.f, 0.5)
        compile(exported, "exported", "exec")
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "ok"


def _module(tmp_path, filename, source):
    path = tmp_path / filename
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"m{abs(hash(filename))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_file_name_with_a_line_break_stays_in_the_comments(tmp_path):
    if os.name == "nt":
        pytest.skip("Windows file names hold no line break")
    name = "evil\nimport builtins; builtins.S2S_INJECTED = 1\n.py"
    module = _module(tmp_path, name, "def f(x):\n    return x * x * x\n")
    for mode in ("auto", "reverse", "forward"):
        assert s2s.grad(module.f, mode=mode)(2.0) == pytest.approx(12.0)
    import builtins
    assert not hasattr(builtins, "S2S_INJECTED")
    text = _comment_lines_hold(s2s.source(module.f, 2.0, mode="reverse"))
    assert "# evil\\nimport builtins; builtins.S2S_INJECTED = 1\\n.py:2  return x * x * x" in text
    compile(s2s.export(module.f, 2.0), "exported", "exec")


def test_an_export_importing_from_a_file_that_is_no_module_name_is_refused(tmp_path):
    module = _module(tmp_path, "my-model.py", "K = 2.0\n\n\ndef f(x):\n    return K * x * x\n")
    module.f.__module__ = "__main__"         # (as the CLI and a script run it: the module is the file)
    assert s2s.grad(module.f)(1.0) == pytest.approx(4.0)
    with pytest.raises(s2s.S2SError, match="'my-model' is not a name an import can give"):
        s2s.export(module.f, 1.0)


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x0c", "\x85", "\x1c"])
def test_a_quoted_line_with_a_line_separator(tmp_path, separator):
    module = _module(tmp_path, "separators.py",
                     f'import numpy as np\n\n\ndef g(x):\n    return np.sin(x) * len("a{separator}b")\n')
    for mode in ("auto", "reverse", "forward"):
        assert s2s.grad(module.g, mode=mode)(0.3) == pytest.approx(3 * np.cos(0.3))
    text = _comment_lines_hold(s2s.source(module.g, 0.3, mode="reverse"))
    escaped = separator.encode("unicode_escape").decode()
    assert f'# separators.py:5  return np.sin(x) * len("a{escaped}b")' in text
    assert separator not in text


def test_a_function_name_with_a_line_break(make_fn):
    f = make_fn("def f(x):\n    return x * x\n")
    f.__qualname__ = "f" + PAYLOAD
    assert s2s.grad(f)(3.0) == pytest.approx(6.0)
    header = s2s.source(f, 3.0).splitlines()[0]
    assert header.startswith("# Generated by s2s") and "f\\nimport os; os._exit(3)\\n" in header
    exported = s2s.export(f, 3.0)
    compile(exported, "exported", "exec")
    assert exported.splitlines()[0].startswith("# Exported by s2s") and "os._exit" in exported.splitlines()[0]


def test_a_dict_key_with_a_line_break_in_the_header():
    def g(d, x):
        return d["k" + PAYLOAD] * x
    key = "k" + PAYLOAD
    gradient = s2s.grad(g, wrt=(0, 1))({key: 2.0}, 3.0)
    assert gradient[0] == {key: 3.0} and gradient[1] == pytest.approx(2.0)
    text = _comment_lines_hold(s2s.source(g, {key: 2.0}, 3.0, wrt=(0, 1)))
    assert all(line.startswith("#") for line in text.splitlines()[:3])


class _Holder:
    pass


@pytest.mark.parametrize("attribute", ["a" + PAYLOAD, "class", "with space"])
def test_an_attribute_that_is_not_a_name(make_fn, attribute):
    holder = _Holder()
    setattr(holder, attribute, 2.0)
    f = make_fn(f"def f(x):\n    return x * getattr(holder, {attribute!r}) * x\n", namespace={"holder": holder})
    for mode in ("auto", "reverse", "forward"):
        assert s2s.grad(f, mode=mode)(1.5) == pytest.approx(6.0)
    assert f"getattr(holder, {attribute!r})" in s2s.source(f, 1.5, mode="reverse")


def test_a_type_name_with_a_line_break_in_a_binding_comment():
    Odd = type("Odd" + PAYLOAD, (), {"__call__": lambda self, x: 2.0 * x})
    from s2s.emit.python import _import_line
    line = _import_line("odd", Odd())
    assert line.startswith("# odd: bound by s2s") and "\n" not in line


def test_an_import_line_holds_names_only():
    import types

    from s2s.emit.python import _import_line
    module = types.ModuleType("evil" + PAYLOAD)
    assert "\n" not in _import_line("m", module) and _import_line("m", module).startswith("#")

    def helper(x):
        return x
    helper.__module__ = "os" + PAYLOAD
    assert "\n" not in _import_line("helper", helper)
