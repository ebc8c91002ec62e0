"""Background work: what a hook starts and never waits for.

:mod:`.detached` spawns a worker and holds its single-flight marker (hot path, stdlib only);
the workers themselves are cold: :mod:`.refresher` (one refresh, start to finish),
:mod:`.refresh_worker`, :mod:`.exposure_worker` and :mod:`.disk_flush` (the detached entry
points run as ``yupana refresh-worker`` and friends). This package imports nothing.
"""
