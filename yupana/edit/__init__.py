"""The edit model below every user of it: a hook invocation read into ``FileEdit``s
(:mod:`payload`), Codex patches (:mod:`patch_input`, :mod:`apply_patch`,
:mod:`patch_chunks`) and git lookups (:mod:`git_repo`). Standard library only: hooks,
evaluators and the code graph import it; it imports none of them."""
