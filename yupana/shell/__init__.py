"""Reading shell commands without running them, and resolving what they act on.

* :mod:`.reader` — a command line → the simple commands a shell would run, with their
  words (:mod:`.lexer` tokenises, :mod:`.words` reads quoting, :mod:`.filters` knows the
  pure filters a pipeline member may stand beside);
* :mod:`.actions` — a command → (verb, target, class) for the action surface, one
  resolver per tool in :mod:`.resolvers`.

Standard library only. The reader's names are re-exported here (``shell.read``).
"""

from yupana.shell.reader import (KEYWORDS, MAX_CHARS, MAX_DEPTH, SHELLS, Command, Reading, Word, read,
                                 read_argv)

__all__ = ["KEYWORDS", "MAX_CHARS", "MAX_DEPTH", "SHELLS", "Command", "Reading", "Word", "read", "read_argv"]
