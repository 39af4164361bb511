#!/usr/bin/env python3
"""A skeleton Tern receiver speaking the tern-sim/1 subprocess protocol.

THIS DOES NOT CONFORM TO TERN 0.1. It is a starting point, not an
implementation: `tern-sim run --impl 'python3 tern_agent.py'` reports a
violation against it within a few steps (see README.md beside this file).

What it does:
  * answers `init` (and refuses any protocol version other than tern-sim/1);
  * keeps every message in memory, and also appends each admitted frame to
    a log in state_dir, synced before the answer (file and directory), but
    never reads the log back: a restart still starts empty;
  * judges a delivery naively: strict JSON (`parse`), the `tern` version
    (`version`), a rough envelope shape (`envelope`), the identity checks
    that only need the configuration (`unknown_thread`,
    `unknown_participant`, `identity`, `not_addressed`), and exact
    duplicates (`duplicate`) versus reused IDs (`id_conflict`);
    everything else is `accepted`;
  * refuses every `execute` with `no_authority` and performs nothing;
  * answers `view` in the documented shape, with only `messages` filled in.

What it does not do (where a real implementation plugs in, marked PLUG IN
below): body schemas, references and pending messages, releases and
invalidations, revision chains, commitments, authority and execution,
rebuilding from the log and reconciliation after a restart.

The protocol is described in docs/protocol.md. Standard library only.
"""

import base64
import json
import os
import sys
import traceback

PROTOCOL = "tern-sim/1"
ENVELOPE = {"tern", "id", "from", "to", "thread", "reply", "act", "body"}
OPTIONAL = {"evidence", "extensions"}
WIRE = {"parse", "version", "envelope", "body"}
ACTS = {"ASK", "TELL", "PROPOSE", "REQUEST", "COMMIT", "REPORT", "REVISE",
        "ACK", "CHALLENGE"}


# --- the protocol channel -------------------------------------------------

def send(obj):
    """One JSON line on stdout, flushed at once: the harness waits for it."""
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def log(text):
    """Diagnostics go to stderr; the harness shows its tail in a verdict."""
    sys.stderr.write(text.rstrip("\n") + "\n")
    sys.stderr.flush()


def perform(seq, key):
    """Performs the external effect `key`: one `perform` line, counted by the
    harness's world. Only ever during `execute`, and (in a real
    implementation) only after an intent record naming `key` is durable in
    state_dir. This skeleton never calls it."""
    send({"seq": seq, "perform": key})


# --- durable storage in state_dir ------------------------------------------
#
# Why every fsync below: over the protocol, tern-sim serves state_dir itself
# and can make a crash a power loss (docs/protocol.md section 7). A power
# loss drops every write that was not synced, and every file name whose
# directory was not synced since it was made or renamed; a torn one keeps
# part of an unsynced write. A SIGKILL alone would never show a missing
# sync: the kernel keeps every write that returned, so a receiver that
# never syncs passes every kill and loses its log when the power goes.

LOG_NAME = "frames.log"


def fsync_dir(path):
    """Makes the directory's entries durable: the names created, renamed or
    removed in it. Syncing a file makes only its data durable, not its
    name."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd, data):
    """os.write may write less than asked; the rest follows."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class FrameLog:
    """An append-only log in state_dir, one JSON line per record. A record
    is whole once its newline is written. A crash can leave a last line
    without one (a torn power loss keeps part of an unsynced write), and
    `records` ignores it."""

    def __init__(self, state_dir):
        self.dir = state_dir
        self.path = os.path.join(state_dir, LOG_NAME)
        # Whether this process synced the directory since it started. The
        # log may exist without its name being durable: a process killed
        # after creating it, before syncing the directory, leaves it so.
        self.name_synced = False
        records, whole = self._read()
        if not whole:
            # A crash left part of a record at the end. Appending after it
            # would glue the next record to it, so the log is written
            # afresh with its whole records: to a new file, synced, renamed
            # over the log, and the directory synced, so that a crash at
            # any point leaves the old log or the whole new one.
            new = self.path + ".new"
            fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                write_all(fd, b"".join(line_of(r) for r in records))
                os.fsync(fd)            # the data, before the name points at it
            finally:
                os.close(fd)
            os.rename(new, self.path)
            fsync_dir(self.dir)         # the rename

    def _read(self):
        """The whole records, and whether the file ends with a whole one."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return [], True
        lines = data.split(b"\n")
        records = []
        for line in lines[:-1]:         # after the last newline: not whole
            try:
                records.append(json.loads(line))
            except ValueError:
                # Not a record: it, and everything after it, are dropped
                # when the log is written afresh.
                return records, False
        return records, lines[-1] == b""

    def records(self):
        """Every whole record, oldest first. PLUG IN: replay these at `init`
        to rebuild the state; this skeleton never does."""
        return self._read()[0]

    def append(self, record):
        """Appends one record and makes it durable before returning: its
        data by fsync of the file and, when this append created the file,
        its name by fsync of the directory at the first append of each
        process, whether it created the file or found it (found, it may
        have been created by a process killed before syncing its name)."""
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            write_all(fd, line_of(record))
            os.fsync(fd)
        finally:
            os.close(fd)
        if not self.name_synced:
            fsync_dir(self.dir)
            self.name_synced = True


def line_of(record):
    return (json.dumps(record, separators=(",", ":"), sort_keys=True)
            + "\n").encode("utf-8")


# --- reading a frame strictly ---------------------------------------------

class Rejected(Exception):
    def __init__(self, cls, pointer, message):
        super().__init__(message)
        self.cls, self.pointer, self.message = cls, pointer, message


def strict_json(data):
    """Strict JSON (profile P-JSON, roughly): UTF-8, no duplicate keys, no
    NaN or Infinity. Python's json accepts both by default."""
    def pairs(items):
        obj = {}
        for k, v in items:
            if k in obj:
                raise ValueError("duplicate key %r" % k)
            obj[k] = v
        return obj

    def constant(name):
        raise ValueError("non-finite number %s" % name)

    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=pairs,
                          parse_constant=constant)
    except (UnicodeDecodeError, ValueError) as e:
        raise Rejected("parse", "", str(e))


def check_envelope(msg):
    """A rough envelope check. PLUG IN: the full envelope and body schemas of
    the profile (P-ENV, P-BODY) with their pointers."""
    if not isinstance(msg, dict):
        raise Rejected("envelope", "", "a message is a JSON object")
    if msg.get("tern") != "0.1":
        raise Rejected("version", "/tern", "unsupported version")
    missing = sorted(ENVELOPE - set(msg))
    if missing:
        raise Rejected("envelope", "/" + missing[0], "missing member")
    unknown = sorted(set(msg) - ENVELOPE - OPTIONAL)
    if unknown:
        raise Rejected("envelope", "/" + unknown[0], "unknown member")
    for key in ("id", "from", "thread", "act"):
        if not isinstance(msg[key], str) or not msg[key]:
            raise Rejected("envelope", "/" + key, "a nonempty string")
    if ":" in msg["from"] or not msg["id"].startswith(msg["from"] + ":") \
            or msg["id"] == msg["from"] + ":":
        raise Rejected("envelope", "/id", "the ID is not `from:suffix`")
    to = msg["to"]
    if not isinstance(to, list) or not to \
            or not all(isinstance(t, str) and t for t in to) \
            or len(set(to)) != len(to):
        raise Rejected("envelope", "/to", "a nonempty list of distinct names")
    if msg["reply"] is not None and not isinstance(msg["reply"], str):
        raise Rejected("envelope", "/reply", "null or a reference")
    if msg["act"] not in ACTS:
        raise Rejected("envelope", "/act", "unknown act")
    if not isinstance(msg["body"], dict):
        raise Rejected("envelope", "/body", "an object")


def canonical(value):
    """The compact form used to order equivocated variants (ledger.md 9.1).
    Note: Python prints 1.0 as `1.0` where the model prints `1`."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


# --- the receiver ---------------------------------------------------------

class Receiver:
    def __init__(self, participant, principal, config, state_dir, effects):
        self.participant = participant
        self.principal = principal
        self.config = config
        self.contexts = config.get("contexts")   # None: open mode
        self.threads = config.get("threads")
        self.state_dir = state_dir
        # The effects this agent performed before a restart, as the harness's
        # world recorded them. PLUG IN: reconcile your durable intents with
        # this list (an intent whose key is listed happened; one whose key
        # is not listed did not, so drop it; never perform anything here).
        self.effects = list(effects)
        os.makedirs(state_dir, exist_ok=True)
        # The state directory always survives a crash: no need to sync the
        # directories above it.
        self.log = FrameLog(state_dir)
        # PLUG IN: rebuild state from self.log.records() here. This
        # skeleton keeps everything in memory: a restart starts empty.
        self.store = {}   # (context, id) -> list of distinct contents

    def context_of(self, thread):
        if self.threads is None:
            return thread                      # open mode
        return self.threads.get(thread)

    def bound(self, context, name):
        if self.contexts is None:
            return name                        # open mode: principal == name
        return self.contexts.get(context, {}).get(name)

    def admit(self, msg, principal):
        """Admission (ledger.md section 4, stage 2): configuration only."""
        context = self.context_of(msg["thread"])
        if context is None:
            raise Rejected("unknown_thread", "/thread", "no identity context")
        if self.bound(context, msg["from"]) is None:
            raise Rejected("unknown_participant", "/from", "not bound")
        for i, name in enumerate(msg["to"]):
            if self.bound(context, name) is None:
                raise Rejected("unknown_participant", "/to/%d" % i, "not bound")
        if self.bound(context, msg["from"]) != principal:
            raise Rejected("identity", "/from", "spoofed sender")
        if self.participant is not None and self.participant != msg["from"] \
                and self.participant not in msg["to"]:
            raise Rejected("not_addressed", "/to", "not addressed to me")
        return context

    def deliver(self, frame, principal, now):
        msg = None
        try:
            msg = strict_json(frame)
            check_envelope(msg)
            context = self.admit(msg, principal)
        except Rejected as r:
            return [event(msg, "rejected", r)]
        # Durable BEFORE answering: whatever the answer reports must survive
        # a SIGKILL and a power loss. Logging the frame itself, with what it
        # was judged by, lets a replay at `init` reach the same state.
        self.log.append({"frame": base64.b64encode(frame).decode("ascii"),
                         "principal": principal, "now": now})
        key = (context, msg["id"])
        variants = self.store.setdefault(key, [])
        if msg in variants:   # structural equality (beware: 1 == 1.0 == True)
            return [event(msg, "duplicate")]
        variants.append(msg)
        if len(variants) > 1:
            # PLUG IN: re-settle the context, emit Invalidated/Released.
            return [event(msg, "rejected",
                          Rejected("id_conflict", "/id", "ID reused"))]
        # PLUG IN: references (pending / `reference`), the act-specific
        # checks of stage 4, releases of messages waiting for this one.
        return [event(msg, "accepted")]

    def execute(self, seq, thread, commitment, now):
        # PLUG IN: the checks of ledger.md section 7, in order. For an
        # allowed execution: make an intent durable, then perform(seq, key),
        # then record that it was done, then answer {"executed": key}.
        return {"refused": "no_authority"}

    def view(self, thread):
        context = self.context_of(thread)
        messages = []
        for (ctx, mid), variants in self.store.items():
            if ctx != context:
                continue
            in_thread = [v for v in variants if v["thread"] == thread]
            if not in_thread:
                continue
            sender = mid.split(":", 1)[0]
            if len(variants) > 1:
                unique = sorted({canonical(v): v for v in variants}.items())
                messages.append({"id": mid, "from": sender,
                                 "status": "equivocated",
                                 "variants": [v for _, v in unique]})
            else:
                messages.append({"id": mid, "from": sender,
                                 "act": variants[0]["act"],
                                 "content": variants[0],
                                 "status": "accepted"})
        messages.sort(key=lambda m: m["id"].encode("utf-8"))
        # PLUG IN: pending, commitments, revisions and effects.
        return {"thread": thread, "messages": messages, "pending": [],
                "commitments": [], "revisions": [], "effects": []}


def event(msg, outcome, rejection=None):
    """The frame's own event (`delivered`). A frame the wire layer rejected
    (parse, version, envelope, body) has no id and no thread: null."""
    wire = rejection is not None and rejection.cls in WIRE
    e = {"event": "delivered",
         "id": None if wire else msg["id"],
         "thread": None if wire else msg["thread"],
         "outcome": outcome}
    if rejection is not None:
        e["error"] = {"class": rejection.cls, "pointer": rejection.pointer,
                      "message": rejection.message}
    return e


# --- the request loop -----------------------------------------------------

def string(req, key):
    value = req.get(key)
    if not isinstance(value, str):
        raise ValueError("`%s` must be a string" % key)
    return value


def handle(req, receiver):
    """Returns (new receiver, answer value). Raises on a bad request."""
    op = req.get("op")
    seq = req.get("seq")
    if op == "init":
        if req.get("protocol") != PROTOCOL:
            raise ValueError("unsupported protocol %s; this agent speaks %s"
                             % (json.dumps(req.get("protocol")), PROTOCOL))
        # A new Receiver for every `init`: nothing of an earlier session
        # stays, so claiming `reinit` is honest. `main` reads one line at a
        # time, so requests written together are all answered: `pipeline`.
        # Both only make tern-sim's side cheaper (docs/protocol.md 4.1, 2).
        receiver = Receiver(string(req, "participant"), string(req, "principal"),
                            req.get("config") or {}, string(req, "state_dir"),
                            req.get("effects") or [])
        return receiver, {"name": "python skeleton (does not conform)",
                          "version": "0.0",
                          "capabilities": ["execute", "reinit", "pipeline"]}
    if receiver is None:
        raise ValueError("the first request must be `init`")
    if op == "deliver":
        frame = base64.b64decode(string(req, "frame"), validate=True)
        events = receiver.deliver(frame, string(req, "principal"),
                                  int(req.get("now", 0)))
        return receiver, {"events": events, "outgoing": []}
    if op == "execute":
        return receiver, receiver.execute(seq, string(req, "thread"),
                                          string(req, "commitment"),
                                          int(req.get("now", 0)))
    if op == "view":
        return receiver, receiver.view(string(req, "thread"))
    raise ValueError("unknown op %s" % json.dumps(op))


def main():
    receiver = None
    next_seq = 1                          # requests are counted from 1
    for raw in sys.stdin.buffer:          # one request per line
        if not raw.strip():
            continue
        try:
            req = json.loads(raw)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as e:
            # Even a line that is no request has a seq: the count's.
            send({"seq": next_seq, "error": "not a JSON request: %s" % e})
            next_seq += 1
            continue
        seq = req.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 1:
            next_seq = seq + 1
        else:
            seq = next_seq
            next_seq += 1
        if req.get("op") == "shutdown":
            send({"seq": seq, "ok": None})
            return
        try:
            receiver, answer = handle(req, receiver)
        except Exception as e:            # never hang: answer, and say why
            log(traceback.format_exc())
            send({"seq": seq, "error": "%s: %s" % (type(e).__name__, e)})
            continue
        send({"seq": seq, "ok": answer})
    # End of input: the harness is gone. (It usually ends us with SIGKILL.)


if __name__ == "__main__":
    main()
