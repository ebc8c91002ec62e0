"""The durable state yupana keeps on disk: where it lives, how it is read and replaced.

Paths and per-store directories (:mod:`.paths`, :mod:`.stores`), the hardened reader and the
atomic writer every state file goes through (:mod:`.statefile`, :mod:`.atomic`), and the files
themselves: the projection cache and its entry checks, the refresh state, throttles, the metrics
spool and the disk-impact samples. Standard library only; imported by hooks, so this package
imports nothing.
"""
