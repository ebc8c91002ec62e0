"""The shell-level reader: words, quoting, prefixes, wrappers, nested shells, certainty."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from yupana import shell


def argvs(command: str) -> list[list[str]]:
    return [[w.text for w in c.argv] for c in shell.read(command).commands]


def test_words_and_quoting():
    assert argvs("""echo 'a b' "c $'d'" $'e\\tf\\x41\\u00e9' g\\ h "i\\"j" 'k'"l"m""") == [
        ["echo", "a b", "c $'d'", "e\tfAé", "g h", 'i"j', "klm"]
    ]


def test_double_quote_escapes_only_the_special_characters():
    assert argvs('echo "a\\nb \\$x \\\\ \\` \\q"') == [["echo", "a\\nb $x \\ ` \\q"]]


def test_line_continuations_and_comments():
    assert argvs("ssh \\\n  a.example.com \\\n  uptime # ssh b.example.com\necho 'x # y'") == [
        ["ssh", "a.example.com", "uptime"], ["echo", "x # y"]]
    assert argvs("echo a#b") == [["echo", "a#b"]]


def test_segments_split_on_list_operators_and_newlines():
    reading = shell.read("a 1 && b 2 || c 3; d 4 & e 5\nf 6")
    assert [[w.text for w in c.argv] for c in reading.commands] == [
        ["a", "1"], ["b", "2"], ["c", "3"], ["d", "4"], ["e", "5"], ["f", "6"]]
    assert reading.uncertain is None
    assert not any(c.pipeline for c in reading.commands)


def test_pipeline_members_are_flagged():
    reading = shell.read("ls | wc -l && ssh a.example.com |& tee x; echo")
    assert [(c.name, c.pipeline) for c in reading.commands] == [
        ("ls", True), ("wc", True), ("ssh", True), ("tee", True), ("echo", False)]


def test_a_member_beside_pure_filters_only_is_read_as_if_alone():
    reading = shell.read("ssh a.example.com 2>&1 | tee log | grep -v x; ls | awk 1; ssh b.example.com | sed 's/a/b/e'")
    assert [(c.name, c.pipeline, c.others_pure) for c in reading.commands] == [
        ("ssh", True, True), ("tee", True, False), ("grep", True, False),
        ("ls", True, False), ("awk", True, False), ("ssh", True, False), ("sed", True, False)]
    assert all(c.others_pure for c in shell.read("ssh a.example.com; echo x").commands)


def test_pure_filters_are_plain_commands_that_run_nothing():
    from yupana.shell.filters import pure_filter

    def pure(line: str) -> bool:
        [cmd] = shell.read(line).commands
        return pure_filter(cmd)

    for line in ("tee -a log", "sudo tee /etc/x", "grep -E 'a|b' f", 'grep "$P"', "head -c 10", "LC_ALL=C sort -u -k2",
                 "sort -t: -k3n", "sed -n '1,5p'", "sed -e 's/a/b/g' -e '/x/d'", "sed 's|a|b|2;$d'", "sed y/abc/xyz/",
                 "jq -r .x", "cut -d, -f1", "tr -d '\\r'", "wc -l", "uniq -c", "cat", "cat a b", "nl"):
        assert pure(line), line
    for line in ("sed 's/a/b/e'", "sed e", "sed 's/a/b/w f'", "sed 1wout", "sed -i s/a/b/ f", "sed -f x.sed",
                 'sed "$S"', "sed", "sort --compress-program=sh", "sort --compress=sh", "sort -k$N", "awk 1", "xargs echo",
                 "rg x", "less", "sh -c 'tee x'", "LD_PRELOAD=x.so cat", '"$F" x', "echo x", "perl -pe 1", "sed 'r x'"):
        assert not pure(line), line


def test_operators_inside_quotes_are_data():
    reading = shell.read("""echo "a && b; c | d" 'e || f' g\\;h""")
    assert argvs("""echo "a && b; c | d" 'e || f' g\\;h""") == [["echo", "a && b; c | d", "e || f", "g;h"]]
    assert reading.uncertain is None


def test_heredoc_bodies_are_data_not_commands():
    command = "cat <<'EOF' > x.sh\nssh prod.example.com\nrm -rf /\nEOF\necho done"
    reading = shell.read(command)
    assert [c.name for c in reading.commands] == ["cat", "echo"]
    assert reading.commands[0].uncertain == [] and reading.commands[1].uncertain == []
    assert [w.text for w in reading.commands[0].argv] == ["cat"]


def test_an_expanded_heredoc_body_that_substitutes_a_command_is_uncertain():
    # unquoted delimiter: the shell runs $(…) and `…` in the body, so the line is not certain
    for body in ("echo $(ssh a.example.com)", "echo `hostname`"):
        reading = shell.read(f"ssh b.example.com <<EOF\n{body}\nEOF\nls")
        assert reading.commands[0].uncertain == ["command substitution in a heredoc body"]
        assert reading.commands[1].uncertain == []
    # a quoted delimiter keeps the body literal; a parameter expansion runs nothing
    assert shell.read("ssh b.example.com <<'EOF'\necho $(x)\nEOF").uncertain is None
    assert shell.read('ssh b.example.com <<"EOF"\necho `x`\nEOF').uncertain is None
    assert shell.read("ssh b.example.com <<EOF\necho $HOME\nEOF").uncertain is None


def test_heredoc_with_tab_stripping_and_two_bodies():
    command = "cat <<-A; cat <<B\n\tssh a.example.com\n\tA\nsystemctl stop etcd\nB\nls"
    assert [c.name for c in shell.read(command).commands] == ["cat", "cat", "ls"]


def test_heredoc_after_a_pipe_ends_at_its_delimiter():
    command = 'python3 - <<"PY" | tail -1\nimport os\nos.system("ssh a.example.com")\nPY\ngit status'
    reading = shell.read(command)
    assert [c.name for c in reading.commands] == ["python3", "tail", "git"]


def test_redirection_targets_are_not_arguments():
    reading = shell.read("make 2>&1 >build.log -j4 <input.txt")
    assert argvs("make 2>&1 >build.log -j4 <input.txt") == [["make", "-j4"]]
    assert reading.commands[0].uncertain == []


def test_assignments_are_prefixes_not_commands():
    [cmd] = shell.read("FOO=1 BAR='x y' BAZ+=z ssh a.example.com X=1").commands
    assert cmd.assigns == ["FOO", "BAR", "BAZ"]
    assert [w.text for w in cmd.argv] == ["ssh", "a.example.com", "X=1"]
    [only] = shell.read("A=1").commands
    assert only.argv == [] and only.assigns == ["A"]


def test_a_quoted_name_is_not_an_assignment():
    [cmd] = shell.read('"FOO"=1 ssh a').commands
    assert cmd.name == "FOO=1"


@pytest.mark.parametrize("command,argv,wrappers", [
    ("sudo -u deploy -H systemctl restart app", ["systemctl", "restart", "app"], ["sudo"]),
    ("sudo -udeploy -- systemctl restart app", ["systemctl", "restart", "app"], ["sudo"]),
    ("sudo --user=deploy -E FOO=1 make", ["make"], ["sudo"]),
    ("env -i -u X A=1 B=2 timeout -s KILL 5 ssh u@h", ["ssh", "u@h"], ["env", "timeout"]),
    ("nice -n 10 ionice -c3 nohup time -p cargo build", ["cargo", "build"], ["nice", "ionice", "nohup", "time"]),
    ("nice -5 cargo build", ["cargo", "build"], ["nice"]),
    ("command -p exec -a name stdbuf -oL setsid -f ls", ["ls"], ["command", "exec", "stdbuf", "setsid"]),
    ("/usr/bin/sudo /usr/bin/env ls", ["ls"], ["sudo", "env"]),
    ("! grep x y", ["grep", "x", "y"], []),
    ("doas -u root ls", ["ls"], ["doas"]),
])
def test_wrappers_are_removed(command, argv, wrappers):
    [cmd] = shell.read(command).commands
    assert [w.text for w in cmd.argv] == argv
    assert cmd.wrappers == wrappers
    assert cmd.uncertain == []


def test_command_v_runs_nothing():
    [cmd] = shell.read("command -v ssh").commands
    assert cmd.name == "command"


@pytest.mark.parametrize("command,reason", [
    ("sudo -Z ls", "unrecognised sudo option -Z"),
    ("env -S 'ssh a' ", "env -S re-splits its argument"),
    ("xargs ssh", "xargs appends arguments read from standard input"),
    ("timeout $T ssh a", "timeout argument is an expansion"),
])
def test_wrappers_that_cannot_be_read_are_uncertain(command, reason):
    [cmd] = shell.read(command).commands
    assert cmd.uncertain == [reason]


def test_shell_payloads_are_read_recursively():
    reading = shell.read("""sudo bash -lc "cd /srv && VAR=1 sh -c 'ssh u@h.example.com uptime'" """)
    assert [[w.text for w in c.argv] for c in reading.commands] == [["cd", "/srv"], ["ssh", "u@h.example.com", "uptime"]]
    assert reading.commands[1].wrappers == ["sudo", "bash -c", "sh -c"]
    assert reading.commands[1].assigns == ["VAR"]
    assert reading.commands[1].depth == 2


def test_shell_option_forms():
    for command in ("bash -c 'ls'", "bash -ec 'ls'", "bash -o pipefail -c 'ls'", "bash --norc -c 'ls' a0 a1",
                    "sh -x -c 'ls'", "busybox sh -c 'ls'", "/bin/sh -c ls"):
        [cmd] = shell.read(command).commands
        assert cmd.name == "ls", command


def test_a_script_or_stdin_shell_is_not_a_payload():
    for command in ("bash deploy.sh", "sh", "bash -s arg"):
        [cmd] = shell.read(command).commands
        assert cmd.name in ("bash", "sh") and cmd.uncertain == []


def test_nesting_is_bounded():
    command = "ls"
    for _ in range(shell.MAX_DEPTH):
        command = "sh -c " + "'" + command.replace("'", "'\\''") + "'"
    assert argvs(command) == [["ls"]]
    deeper = "sh -c " + "'" + command.replace("'", "'\\''") + "'"
    reading = shell.read(deeper)
    assert reading.uncertain == f"shell payloads nested deeper than {shell.MAX_DEPTH}"


def test_a_pipeline_around_a_payload_marks_the_inner_commands():
    reading = shell.read("echo x | sh -c 'ssh a.example.com'")
    assert [(c.name, c.pipeline) for c in reading.commands] == [("echo", True), ("ssh", True)]


def test_a_redirection_on_a_payload_leaves_the_inner_commands_certain():
    reading = shell.read("sh -c 'ssh a.example.com' > log 2>&1")
    assert [c.name for c in reading.commands] == ["ssh"] and reading.uncertain is None


def test_a_redirection_target_that_substitutes_is_uncertain():
    assert shell.read("ssh a.example.com > $(mktemp)").uncertain == "command substitution"
    assert shell.read("ssh a.example.com <<< \"$(whoami)\"").uncertain == "command substitution"
    assert shell.read("ls >").uncertain == "redirection > without a target"


@pytest.mark.parametrize("command,reason", [
    ("echo $(ssh a.example.com)", "command substitution"),
    ("echo `hostname`", "command substitution"),
    ('echo "$(date)"', "command substitution"),
    ("echo ${x:-$(date)}", "command substitution"),
    ("diff <(ls a) b", "process substitution"),
    ("tee >(gzip > x.gz)", "process substitution"),
    ("(cd x && ls)", "subshell or function definition"),
    ("f() { ls; }", "subshell or function definition"),
    ("if true; then ls; fi", "compound command (if)"),
    ("while read l; do echo $l; done < f", "compound command (while)"),
    ("[[ -f x ]] && ls", "compound command ([[)"),
    ("cat <<EOF\n$(date)\nEOF", "command substitution in a heredoc body"),
    ("echo 'abc", "unterminated single quote"),
    ('echo "abc', "unterminated double quote"),
    ("echo `abc", "unterminated backtick"),
    ("echo $(ls", "unterminated (…)"),
    ("ls &&", "incomplete command after '&&'"),
    ("ls |", "incomplete command after '|'"),
    ("&& ls", "syntax error near '&&'"),
    ("ls >", "redirection > without a target"),
])
def test_uncertain_readings_say_why(command, reason):
    assert shell.read(command).uncertain == reason


def test_a_newline_after_a_binary_operator_continues_the_list():
    reading = shell.read("ls &&\n  echo ok |\n  wc")
    assert reading.uncertain is None
    assert [c.name for c in reading.commands] == ["ls", "echo", "wc"]


@pytest.mark.parametrize("word,dynamic", [
    ("plain", False), ("'$HOME'", False), ('"$HOME"', True), ("$HOME", True), ("${HOME}", True),
    ("$1", True), ("$((1+2))", True), ("*.txt", True), ("file?", True), ("[ab]c", True),
    ("{a,b}.c", True), ("{1..3}", True), ("'*.txt'", False), ("a{b}c", False), ("~/x", False),
    ("$", False), ("$'\\x41'", False),
])
def test_dynamic_words(word, dynamic):
    [cmd] = shell.read("cmd " + word).commands
    assert cmd.argv[1].dynamic is dynamic


def test_command_text_is_the_effective_argv():
    [cmd] = shell.read("sudo -u x env A=1 cargo  build   --release").commands
    assert cmd.text() == "cargo build --release"


def test_read_argv_takes_words_as_they_are():
    reading = shell.read_argv(["bash", "-lc", "ls && ssh a.example.com"])
    assert [c.name for c in reading.commands] == ["ls", "ssh"]
    [cmd] = shell.read_argv(["echo", "a && b", "$HOME"]).commands
    assert [w.text for w in cmd.argv] == ["echo", "a && b", "$HOME"] and not cmd.argv[2].dynamic


def _single_quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6))
def test_quoted_words_round_trip(words):
    """Any words, single-quoted and joined, read back as exactly those words (unless the first
    is a wrapper or a shell, whose arguments are read further)."""
    special = ("sudo", "env", "nice", "nohup", "time", "command", "builtin", "exec", "stdbuf", "setsid", "doas",
               "ionice", "timeout", "eval", "!", "xargs")
    assume(words[0] not in special and words[0].rsplit("/", 1)[-1] not in shell.SHELLS)
    command = " ".join(_single_quote(w) for w in words)
    reading = shell.read(command)
    assert reading.uncertain is None
    [cmd] = reading.commands
    assert [w.text for w in cmd.argv] == words and cmd.wrappers == []
    assert not any(w.dynamic for w in cmd.argv)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(list("ab $'\"\\`(){}|&;<>\n\t#=*-c") + ["sh -c ", "<<E\n", "E\n", "$'"]), max_size=40))
def test_any_text_reads_without_raising(parts):
    reading = shell.read("".join(parts))
    for cmd in reading.commands:
        assert isinstance(cmd.uncertain, list)


def test_a_huge_line_is_not_read_but_says_so():
    reading = shell.read("ssh a.example.com " + "x " * shell.MAX_CHARS)
    assert reading.commands == [] and "not read" in reading.uncertain
    huge_heredoc = shell.read("cat <<'EOF'\n" + "ssh prod\n" * 20000 + "EOF")
    assert huge_heredoc.uncertain is None and [c.name for c in huge_heredoc.commands] == ["cat"]
