"""The regex analysis: RE2 patterns read into a small AST (:mod:`.syntax`), the literals every
match must contain (:mod:`.literals`), and the prefilter a hook checks before running a
pattern (:mod:`.prefilter`). Standard library only; the analysis is computed on the cold
path, the prefilter checked on the hot one."""
