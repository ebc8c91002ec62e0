"""Scripted fakes of the two model APIs the real clients call, on a loopback port.

* Anthropic Messages (``POST /v1/messages``, what Claude Code calls): a streaming SSE answer
  of ``message_start``, ``content_block_start`` / ``content_block_delta`` (``text_delta`` or
  ``input_json_delta``) / ``content_block_stop`` per block, ``message_delta`` with
  ``stop_reason`` ``tool_use`` or ``end_turn``, and ``message_stop``.
* OpenAI Responses (``POST /v1/responses``, what Codex calls): SSE of ``response.created``,
  ``response.output_item.added`` / ``.done`` per item (a ``custom_tool_call`` for
  ``apply_patch``, whose input is the patch text; a ``function_call`` for the shell tool
  ``exec_command``; a ``message`` for text), and ``response.completed``.
* Gemini API (``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``, what Gemini CLI
  calls through ``GOOGLE_GEMINI_BASE_URL``): SSE ``data:`` chunks, each a
  ``GenerateContentResponse`` (a ``functionCall`` part per tool block, a ``text`` part per
  text block), the last with ``finishReason: STOP``; ``:generateContent`` (its side calls)
  gets the same answer in one JSON body, ``:countTokens`` a count.

A script is a list of turns; each conversation request (one that offers the model tools)
gets the next turn, and once the script is spent every further request is answered with a
plain "done." — so a test says which tool call to make on turn 1 and the run ends on turn 2.
Requests that offer no tools (a client's side calls: titles, quota probes) get a short text
and do not consume a turn. Every request body is appended to a JSON-lines log, so a test
reads exactly what the model was sent (the ``tool_result``, the developer messages).

Standard library only; run in a thread (:func:`serve`) or as ``python fake_models.py``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# A turn: [{"text": str} | {"tool": name, "input": dict}] for Anthropic and Gemini;
#         [{"text": str} | {"custom": name, "input": str} | {"function": name, "arguments": dict}] for OpenAI.
Turn = list


class Script:
    """The turns to play, the request log, and a lock (the server is threaded)."""

    def __init__(self, turns: list[Turn], log_path: str) -> None:
        self.turns = list(turns)
        self.log_path = log_path
        self.lock = threading.Lock()
        self.served = 0

    def next_turn(self, conversational: bool) -> Turn:
        with self.lock:
            if not conversational:
                return [{"text": "ok"}]
            if self.served < len(self.turns):
                turn = self.turns[self.served]
            else:
                turn = [{"text": "done."}]
            self.served += 1
            return turn

    def log(self, path: str, body: object) -> None:
        with self.lock, open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"path": path, "body": body}) + "\n")


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_events(turn: Turn, model: str, n: int) -> list[bytes]:
    """The SSE events of one streamed Messages answer."""
    msg_id = f"msg_fake_{n}"
    out = [_sse("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0}}})]
    stop = "end_turn"
    for index, block in enumerate(turn):
        if "tool" in block:
            stop = "tool_use"
            start = {"type": "tool_use", "id": f"toolu_fake_{n}_{index}", "name": block["tool"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        out.append(_sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(_sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 5}}))
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return out


def responses_events(turn: Turn, model: str, n: int) -> list[bytes]:
    """The SSE events of one streamed Responses answer."""
    resp_id = f"resp_fake_{n}"
    base = {"id": resp_id, "object": "response", "model": model, "status": "in_progress", "output": []}
    out = [_sse("response.created", {"type": "response.created", "response": base})]
    items = []
    for index, block in enumerate(turn):
        if "custom" in block:
            item = {"type": "custom_tool_call", "id": f"ctc_{n}_{index}", "call_id": f"call_{n}_{index}",
                    "name": block["custom"], "input": block["input"], "status": "completed"}
        elif "function" in block:
            item = {"type": "function_call", "id": f"fc_{n}_{index}", "call_id": f"call_{n}_{index}",
                    "name": block["function"], "arguments": json.dumps(block["arguments"]), "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_{n}_{index}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": block["text"], "annotations": []}]}
        out.append(_sse("response.output_item.added", {"type": "response.output_item.added",
                                                       "output_index": index, "item": item}))
        if item["type"] == "message":
            out.append(_sse("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                           "output_index": index, "content_index": 0,
                                                           "delta": block["text"]}))
        out.append(_sse("response.output_item.done", {"type": "response.output_item.done",
                                                      "output_index": index, "item": item}))
        items.append(item)
    done = {**base, "status": "completed", "output": items,
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}
    out.append(_sse("response.completed", {"type": "response.completed", "response": done}))
    return out


def gemini_response(turn: Turn, model: str) -> dict:
    """One whole ``GenerateContentResponse`` for a turn (its function calls, then its text)."""
    parts = [{"functionCall": {"name": b["tool"], "args": b["input"]}} if "tool" in b else {"text": b["text"]}
             for b in turn]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": model}


def gemini_events(turn: Turn, model: str) -> list[bytes]:
    """The SSE chunks of one streamed Gemini answer (``alt=sse``: ``data:`` lines only)."""
    whole = gemini_response(turn, model)
    return [f"data: {json.dumps(whole)}\r\n\r\n".encode()]


class _Handler(BaseHTTPRequestHandler):
    script: Script  # set on the per-server subclass
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: object) -> None:  # keep the test output clean
        pass

    def _read_body(self) -> object:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def do_GET(self) -> None:
        self.script.log(self.path, None)
        self._json(404, {"error": {"type": "not_found", "message": "fake model server"}})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        body = self._read_body()
        self.script.log(self.path, body)
        path = self.path.split("?", 1)[0]
        req = body if isinstance(body, dict) else {}
        model = str(req.get("model") or "fake")
        conversational = bool(req.get("tools"))
        if path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": 10})
        elif path.endswith("/messages"):
            turn = self.script.next_turn(conversational)
            if req.get("stream"):
                self._stream(anthropic_events(turn, model, self.script.served))
            else:
                text = "".join(b.get("text", "") for b in turn) or "ok"
                self._json(200, {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                                 "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                                 "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}})
        elif path.endswith((":streamGenerateContent", ":generateContent")):
            model = path.rsplit("/", 1)[-1].split(":", 1)[0]
            turn = self.script.next_turn(conversational)
            if path.endswith(":streamGenerateContent"):
                self._stream(gemini_events(turn, model))
            else:
                self._json(200, gemini_response(turn, model))
        elif path.endswith(":countTokens"):
            self._json(200, {"totalTokens": 10})
        elif path.endswith("/responses"):
            self._stream(responses_events(self.script.next_turn(conversational), model, self.script.served))
        else:
            self._json(404, {"error": {"type": "not_found", "message": f"fake model server: no {path}"}})

    def _json(self, status: int, data: dict) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _stream(self, events: list[bytes]) -> None:
        raw = b"".join(events)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def serve(turns: list[Turn], log_path: str, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """Start a fake on a free loopback port in a daemon thread; ``server.server_port`` is the port.
    Stop it with ``server.shutdown(); server.server_close()``."""
    handler = type("ScriptedHandler", (_Handler,), {"script": Script(turns, log_path)})
    server = ThreadingHTTPServer((host, 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="fake-model", daemon=True).start()
    return server


def read_log(log_path: str) -> list[dict]:
    """Every request the fake received, in order: ``{"path": …, "body": …}``."""
    try:
        with open(log_path, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]
    except FileNotFoundError:
        return []
