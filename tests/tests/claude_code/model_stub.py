"""A scripted stand-in for the model: an Anthropic-Messages-compatible server (the one fake the
hook-bridge tests allow). Real Claude Code sends it its requests; it answers from a script.

Usage: model_stub.py SCRIPT LOG. SCRIPT is JSON: {"turns": [[block, ...], ...]} where a block
is {"tool": name, "input": {...}} or {"text": "..."}. The answer to a request is the turn whose
index is the number of assistant messages already in it, so the script does not depend on how
many side requests (titles, summaries: requests without tools) Claude Code makes; past the last
turn, and for side requests, the answer is the text "done". Each scripted request's last user
message (the tool results the model reads) is appended to LOG as one JSON line. Prints the port.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
LOG = sys.argv[2]


def blocks_for(request):
    if not request.get("tools"):
        return [{"text": "done"}], None
    turn = sum(1 for m in request.get("messages", []) if m.get("role") == "assistant")
    with open(LOG, "a") as log:
        last = request["messages"][-1] if request.get("messages") else {}
        log.write(json.dumps({"turn": turn, "content": last.get("content")}) + "\n")
    turns = SCRIPT["turns"]
    return (turns[turn] if turn < len(turns) else [{"text": "done"}]), turn


def content(blocks, turn):
    out = []
    for i, b in enumerate(blocks):
        if "tool" in b:
            out.append({"type": "tool_use", "id": f"toolu_{turn}_{i}", "name": b["tool"], "input": b["input"]})
        else:
            out.append({"type": "text", "text": b["text"]})
    return out


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        request = json.loads(body or b"{}")
        blocks, turn = blocks_for(request)
        blocks = content(blocks, turn)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        usage = {"input_tokens": 1, "output_tokens": 1}
        message = {"id": f"msg_{turn}", "type": "message", "role": "assistant",
                   "model": request.get("model", "stub"), "content": blocks,
                   "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not request.get("stream"):
            data = json.dumps(message).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()

        def event(kind, data):
            data["type"] = kind
            self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())

        event("message_start", {"message": {**message, "content": [], "stop_reason": None}})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                event("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}})
                event("content_block_delta", {"index": i, "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                start = {**b, "input": {}}
                event("content_block_start", {"index": i, "content_block": start})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
                event("content_block_delta", {"index": i, "delta": delta})
            event("content_block_stop", {"index": i})
        event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": usage})
        event("message_stop", {})

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
