"""The coding clients yupana governs: one plain-data row each, one small adapter module each.

Hot path: this module imports nothing; an adapter (``Client.adapter``) imports only the
standard library, and only the one that answers a payload is loaded (:func:`adapter`).

A **row** (:class:`Client`) is what is true of a client, as data: its registry ``name``
(what records, ``status``, ``metrics`` and ``explain`` say), the ``yupana install`` word,
its hook events and tool names (each client tool mapped to the *kind* of call the edit model
reads), how a payload betrays it (keys, event names, transcript directory), where its notices
are shown, whether it fails closed on a hook error, and the modules that implement it:

* ``adapter`` (hot): the functions a hook calls —
  ``translate(data) -> dict`` the payload in yupana's canonical shape (Claude Code's:
  ``tool_name`` one of :data:`CANONICAL`, its ``tool_input`` fields; a tool the row does not
  list is passed through unchanged, and the runtime makes it a loud UNKNOWN), optionally
  ``tool_name(data) -> str | None`` (the client's own tool name where its payload has no
  ``tool_name``), and
  ``shape(deny, model, user, event) -> dict`` the client's stdout object for a decision
  (``deny``: the reason, or None), model-facing notices, user-facing notices and the
  canonical ``event`` (``PreToolUse`` / ``PostToolUse``); ``{}`` is a silent allow.
* ``installer`` (cold, ``yupana/clients/install/<name>.py``, may import commands): ``run(args, install) -> int`` for
  ``yupana install|uninstall <install>``, ``found(root) -> list[tuple[str, str]]`` (why the
  client is considered present on this machine: (what, where)), and
  ``registrations(root) -> list[dict]`` (each registration file read for ``yupana status``:
  ``scope``, ``path``, ``hooks`` as :func:`yupana.commands.install.hooks.inspect` gives them,
  and for clients that gate hooks (trust), ``problems``: ``[{"problem", "fix"}]``).

Adding a client: a row in :data:`ROWS`, its adapter ``yupana/clients/<name>.py``, its
installer, a docs page ``docs/clients/<name>.md`` and its end-to-end tests (tests/clients/).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

# The kinds of tool call the edit model reads (yupana.edit.payload), and the canonical tool
# name each is translated to: a client's tool maps to one kind in its row's ``tools``.
EDIT, MULTI_EDIT, WRITE, NOTEBOOK, PATCH, SHELL = "edit", "multi_edit", "write", "notebook", "patch", "shell"
CANONICAL = {EDIT: "Edit", MULTI_EDIT: "MultiEdit", WRITE: "Write", NOTEBOOK: "NotebookEdit", PATCH: "apply_patch",
             SHELL: "Bash"}
EDIT_KINDS = (EDIT, MULTI_EDIT, WRITE, NOTEBOOK, PATCH)

PRE, POST = "PreToolUse", "PostToolUse"  # the canonical events a hook answers (HookRuntime.event)


class Client:
    """One client, as plain data (see the module text for what each field means)."""

    __slots__ = ("name", "label", "install", "adapter", "installer", "docs", "binary", "plan", "tools",
                 "markers", "events", "transcript", "shows_user", "model_events", "fails_closed", "hint",
                 "scoped", "timeout", "timeout_ms", "controls", "home_env", "home", "native")

    def __init__(self, name: str, label: str, *, install: str, adapter: str, installer: str, binary: str,
                 plan: tuple[tuple[str, str, str], ...], tools: dict[str, str], markers: tuple[str, ...] = (),
                 events: dict[str, str] | None = None, transcript: str = "", shows_user: bool = True,
                 model_events: tuple[str, ...] = (PRE, POST), fails_closed: bool = False,
                 hint: bool = False, scoped: bool = False, timeout: int = 5, timeout_ms: int = 1000,
                 controls: tuple[tuple[str, str], ...] = (), home_env: str | None = None, home: str = "",
                 native: bool = False) -> None:
        self.name = name  # the registry name: records' "client", status, metrics, explain
        self.label = label  # for people: "Claude Code"
        self.install = install  # `yupana install <install>`
        self.adapter = adapter  # the hot adapter module
        self.installer = installer  # the cold install/uninstall/registration module
        self.docs = f"docs/clients/{name}.md"
        self.binary = binary  # its command on PATH
        self.plan = plan  # (event in its settings file, matcher, our hook event) per registration
        self.tools = tools  # its tool name -> kind (EDIT, WRITE, …, SHELL)
        self.markers = markers  # payload keys only this client sends
        self.events = events or {PRE: PRE, POST: POST}  # canonical event -> its own event name
        self.transcript = transcript  # a directory its transcript_path runs through ("/.claude/")
        self.shows_user = shows_user  # a user-facing notice reaches someone (else: notices go to the model)
        self.model_events = model_events  # the canonical events whose answer can carry model context
        self.fails_closed = fails_closed  # a hook error blocks the tool: the registration must be wrapped
        self.hint = hint  # its registration passes `--client <name>` (payload recognition is the fallback)
        self.scoped = scoped  # `yupana install` takes --project / --user for it
        self.timeout = timeout  # the "timeout" its registration is written with, in its own unit
        self.timeout_ms = timeout_ms  # milliseconds per unit of its "timeout" (1000: seconds; 1: ms)
        # the files it reads hooks from, protected from the agents (yupana.self_protection): (a directory
        # name, matched anywhere, e.g. ".claude"; a path below it, one "*" per segment at most)
        self.controls = controls
        self.home_env = home_env  # the variable that moves its user directory (CODEX_HOME), if any
        self.home = home  # its user directory under $HOME (".codex"); the controls apply there too
        # its payload is already the canonical shape: not translated (the hook loads its adapter only to
        # write an answer — an allow, the common case, imports nothing more)
        self.native = native

    def kind(self, tool: str | None) -> str | None:
        """The kind of ``tool`` (one of this client's tool names), or None when the row does not list it."""
        return self.tools.get(tool) if tool is not None else None

    def __repr__(self) -> str:
        return f"Client({self.name!r})"


_COPILOT_EDITS = "edit|create|str_replace_editor|apply_patch"  # full-match regex
_CLAUDE_TOOLS = {"Edit": EDIT, "MultiEdit": MULTI_EDIT, "Write": WRITE, "NotebookEdit": NOTEBOOK, "Bash": SHELL}

_QWEN_EDIT = "write_file|edit|notebook_edit"

ROWS: tuple[Client, ...] = (
    Client("codex", "Codex", install="codex", adapter="yupana.clients.codex",
           installer="yupana.clients.install.codex", binary="codex",
           plan=(("PreToolUse", "apply_patch", "pre-edit"), ("PreToolUse", "Bash", "pre-bash"),
                 ("PostToolUse", "apply_patch", "post-edit")),
           # Codex accepts Edit/Write as matcher aliases of apply_patch: under those names a patch still arrives
           tools={"apply_patch": PATCH, "applypatch": PATCH, "Bash": SHELL, "Edit": PATCH, "Write": PATCH},
           markers=("turn_id",), transcript="/.codex/", shows_user=False, native=True,
           controls=((".codex", "hooks.json"), (".codex", "config.toml")), home_env="CODEX_HOME", home=".codex"),
    # Qwen Code sends Claude Code's prompt_id too: its row comes before Claude Code's, told by its tool_call_id
    Client("qwen", "Qwen Code", install="qwen", adapter="yupana.clients.qwen",
           installer="yupana.clients.install.qwen", binary="qwen",
           plan=(("PreToolUse", _QWEN_EDIT, "pre-edit"), ("PreToolUse", "run_shell_command|monitor", "pre-bash"),
                 ("PostToolUse", _QWEN_EDIT, "post-edit")),
           tools={"write_file": WRITE, "edit": EDIT, "notebook_edit": NOTEBOOK, "run_shell_command": SHELL,
                  "monitor": SHELL},
           markers=("tool_call_id",), transcript="/.qwen/", shows_user=False, model_events=(POST,), hint=True,
           scoped=True, timeout=5000, timeout_ms=1,  # 0.24 reads >= 1000 as ms (below, seconds); 0.15 always ms
           controls=((".qwen", "settings.json"), (".qwen", "trustedFolders.json")), home_env="QWEN_HOME", home=".qwen"),
    Client("claude-code", "Claude Code", install="claude", adapter="yupana.clients.claude_code",
           installer="yupana.clients.install.claude_code", binary="claude",
           plan=(("PreToolUse", "Edit|Write|MultiEdit|NotebookEdit", "pre-edit"), ("PreToolUse", "Bash", "pre-bash"),
                 ("PostToolUse", "Edit|Write|MultiEdit|NotebookEdit", "post-edit")),
           tools=_CLAUDE_TOOLS, markers=("prompt_id",), transcript="/.claude/", scoped=True, native=True,
           controls=((".claude", "settings*.json"), (".claude", "settings.json"), (".claude", "settings.local.json")),
           home=".claude"),
    # Gemini CLI: its own events and tool names; it never reads permissionDecision (yupana.clients.gemini
    # answers {"decision": "deny"}), fails closed on a hook's exit other than 0/1 with text, reads
    # "timeout" in milliseconds, and has model context only on AfterTool (docs/clients/gemini.md)
    Client("gemini", "Gemini CLI", install="gemini", adapter="yupana.clients.gemini",
           installer="yupana.clients.install.gemini", binary="gemini",
           plan=(("BeforeTool", "write_file|replace", "pre-edit"), ("BeforeTool", "run_shell_command", "pre-bash"),
                 ("AfterTool", "write_file|replace", "post-edit")),
           tools={"write_file": WRITE, "replace": EDIT, "run_shell_command": SHELL},
           events={PRE: "BeforeTool", POST: "AfterTool"}, transcript="/.gemini/", model_events=(POST,),
           fails_closed=True, hint=True, scoped=True, timeout=5000, timeout_ms=1,
           # its settings, and the folder trust that switches every hook off (DO_NOT_TRUST)
           controls=((".gemini", "settings.json"), (".gemini", "trustedFolders.json")), home=".gemini"),
    # GitHub Copilot CLI: camelCase payload (toolName/toolArgs), its own tool and field names, a flat deny,
    # no user channel, fails CLOSED on a hook error; `timeout` in seconds (docs/clients/copilot.md)
    Client("copilot", "Copilot CLI", install="copilot", adapter="yupana.clients.copilot",
           installer="yupana.clients.install.copilot", binary="copilot",
           plan=(("preToolUse", _COPILOT_EDITS, "pre-edit"), ("preToolUse", "bash", "pre-bash"),
                 ("postToolUse", _COPILOT_EDITS, "post-edit")),
           tools={"edit": EDIT, "create": WRITE, "str_replace_editor": EDIT, "apply_patch": PATCH, "bash": SHELL},
           markers=("toolArgs",), events={PRE: "preToolUse", POST: "postToolUse"}, shows_user=False,
           fails_closed=True, hint=True, scoped=True,
           # its hooks (user and repository), the settings whose disableAllHooks turns every hook off, and the
           # folder trust repository hooks need
           controls=((".copilot", "settings.json"), (".copilot", "settings.local.json"), (".copilot", "config.json"),
                     (".copilot", "hooks/*.json"), (".github", "hooks/*.json"), (".github", "copilot/settings*.json")),
           home_env="COPILOT_HOME", home=".copilot"),
)

_BY_NAME = {row.name: row for row in ROWS}
CANONICAL_ROW = "claude-code"  # the row :func:`canonical` returns


def get(name: str | None) -> Client | None:
    """The row named ``name`` (a registry name, or a ``yupana install`` word), or None."""
    if name is None:
        return None
    row = _BY_NAME.get(name)
    if row is None:
        row = next((r for r in ROWS if r.install == name), None)
    return row


def canonical() -> Client:
    """The row whose payload and answer are the canonical shape (Claude Code's): how an answer
    is written when nothing tells who sent the payload."""
    return _BY_NAME[CANONICAL_ROW]


def names() -> tuple[str, ...]:
    """Every registry name, in row order."""
    return tuple(row.name for row in ROWS)


def adapter(row: Client) -> ModuleType:
    """``row``'s hot adapter module (imported on first use)."""
    return __import__(row.adapter, fromlist=["translate"])


def installer(row: Client) -> ModuleType:
    """``row``'s cold installer module (imported on first use)."""
    return __import__(row.installer, fromlist=["run"])


def identify(data: dict[str, Any], hint: str | None = None) -> Client | None:
    """The client that sent ``data``: the registration's ``--client`` (``hint``) when it names a
    row; else, in this order, a key only one client sends, an event name only one uses, the
    directory its transcript runs through, a tool name exactly one row lists for this event (a
    patch under an edit tool's name counts as a patch tool: Codex's alias); None when nothing tells."""
    row = get(hint)
    if row is not None:
        return row
    for row in ROWS:
        if any(key in data for key in row.markers):
            return row
    event = data.get("hook_event_name")
    if isinstance(event, str) and event not in (PRE, POST):
        for row in ROWS:
            if event in row.events.values():
                return row
    transcript = data.get("transcript_path")
    if isinstance(transcript, str):
        for row in ROWS:
            if row.transcript and row.transcript in transcript:
                return row
    tool = data.get("tool_name")
    if isinstance(tool, str):
        tool_input = data.get("tool_input")
        patch = isinstance(tool_input, dict) and "*** Begin Patch" in str(tool_input.get("command"))
        found = [row for row in ROWS if (row.tools.get(tool) == PATCH) == patch and tool in row.tools
                 and (not isinstance(event, str) or event in row.events.values())]
        if len(found) == 1:
            return found[0]
    return None
