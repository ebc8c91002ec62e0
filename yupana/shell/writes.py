"""What a Bash command writes, from syntax alone: the files and directories it would change,
and the git runs that route around the repository's hooks. Standard library only.

Read with certainty only (:mod:`yupana.shell.reader`): a simple command with any uncertainty
(a subshell, a compound command, ``xargs``, a syntax error…) is skipped — an abstention,
never a guess; one whose only uncertainty is a command or process substitution in its words
keeps its redirections (``echo "$(date)" > f`` writes ``f`` whatever the substitution prints)
and nothing else. What is read:

* redirections that write (``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``<>``, ``N>``…; not
  ``<``, heredocs or ``N>&M``);
* ``tee`` (its files), ``sed -i`` / ``perl -i`` (the files after the script), ``cp``, ``mv``,
  ``install``, ``ln`` (the destination, and ``DIR/<name>`` of each source when it is a
  directory; ``mv`` also its sources, which it removes), ``rm``, ``truncate``, ``chmod``,
  ``touch``, ``mkdir`` (their operands), ``dd of=``;
* ``git rm``, ``git mv``, ``git restore`` (their paths) and ``git checkout … -- PATHS``;
* ``git config … core.hooksPath VALUE`` (also ``--unset``/``--add``/``set``/``unset``),
  ``git -c core.hooksPath=…``, ``--config-env=core.hooksPath=…`` and the same key through
  git's environment (``GIT_CONFIG_KEY_<n>``, ``GIT_CONFIG_PARAMETERS``: a ``git`` command's
  ``VAR=`` prefix or an ``export``) (:data:`HOOKS_PATH`),
  ``git push|commit|merge --no-verify`` (``-n`` for commit) (:data:`NO_VERIFY`).

An option a tool's grammar here does not know makes that command abstain. A path word that
is an expansion is not judged (its value is unknown), unless its only expansion is a glob
in its last component (``rm .git/hooks/*``: the directory is literal); ``~`` and ``~/…`` (unquoted) are
``$HOME``. Relative paths are taken from the cwd, followed through literal ``cd DIR`` in the
line (an unknown ``cd`` stops relative paths being judged).
"""

from __future__ import annotations

from yupana.shell.write_model import HOOKS_PATH, NO_VERIFY, Paths, Skip, Write
from yupana.shell.write_tools import TOOLS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana import shell
    from yupana.shell.lexer import Word

__all__ = ["HOOKS_PATH", "NO_VERIFY", "Write", "writes"]

_SUBSTITUTION = ("command substitution", "process substitution")


def writes(reading: shell.Reading, cwd: str, home: str | None = None) -> list[Write]:
    """Everything ``reading`` would write (see the module doc), in order."""
    found: list[Write] = []
    base: str | None = cwd
    for cmd in reading.commands:
        substituted = all(r.startswith(_SUBSTITUTION) for r in cmd.uncertain)
        if cmd.uncertain and not (substituted and not reading.error):
            continue
        paths = Paths(base, home)
        for op, word in cmd.redirects:  # a substitution in a word does not change where output goes
            if _writes(op, word):
                paths.add(found, word, "redirect")
        if cmd.uncertain:
            continue  # which words the command gets is not known: its own writes are not read
        argv = cmd.argv
        if not argv or argv[0].dynamic:
            continue
        name = cmd.name
        if (name == "git" and _git_config_env(cmd.settings)) or (name == "export" and _git_config_env(argv[1:])):
            found.append(Write(base or "", name, git=HOOKS_PATH))  # core.hooksPath through git's environment
        if name in ("cd", "pushd"):
            base = _cd(argv, base, home)
            continue
        tool = TOOLS.get(name)
        if tool is None:
            continue
        try:
            tool(name, argv[1:], paths, found)
        except Skip:
            continue
    return found


def _git_config_env(words: list[Word]) -> bool:
    """``GIT_CONFIG_KEY_<n>=core.hooksPath`` or ``GIT_CONFIG_PARAMETERS=…core.hooksPath…`` among
    ``words`` (a command's ``VAR=`` prefixes, or ``export``'s operands)."""
    for w in words:
        name, eq, value = w.text.partition("=")
        if eq and ((name.startswith("GIT_CONFIG_KEY_") and value.strip().lower() == "core.hookspath")
                   or (name == "GIT_CONFIG_PARAMETERS" and "core.hookspath" in value.lower())):
            return True
    return False


def _writes(op: str, word: Word) -> bool:
    op = op.lstrip("0123456789")
    if op in (">&", "<&"):
        return not (word.text.isdigit() or word.text == "-" or word.text.endswith("-"))  # fd duplication
    return op in (">", ">>", ">|", "&>", "&>>", "<>")


def _cd(argv: list[Word], base: str | None, home: str | None) -> str | None:
    rest = [w for w in argv[1:] if w.text not in ("-L", "-P", "-e", "-@")]
    if not rest:
        return home
    if len(rest) > 1 or rest[0].dynamic or rest[0].text == "-" or base is None:
        return None
    return Paths(base, home).absolute(rest[0])
