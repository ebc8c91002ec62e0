"""The clients' installers (cold path): one module per row (``Client.installer``), above the
hooks like a command — they may import :mod:`yupana.commands.install`; nothing hot imports
them (:func:`yupana.clients.installer` loads one by name)."""
