"""``RunLogStore``: the run log table (``run_spans``) of a memory-plugin database file: one row per span or point
event, ``data`` as JSON (secrets stripped before they get here). ``write`` adds a run in one transaction; reads return
plain dicts and format nothing (``spans`` puts each model call's prompt back whole: ``whole_prompts``).
"""

from __future__ import annotations

import os
from typing import Any, Optional

import attrs
import msgspec

from zagent.plugins.memory.database import Database

COLUMNS = ("run_id", "span_id", "parent_id", "kind", "name", "agent", "started", "duration", "outcome",
           "input_tokens", "output_tokens", "data")
_encode = msgspec.json.Encoder(enc_hook=repr).encode
#: the batch a top span's run was an item of (its ``run_start`` carries ``metadata.batch``)
_BATCH = "json_extract(CAST(r.data AS TEXT), '$.start.metadata.batch')"


@attrs.define(repr=False)
class RunLogStore:
    db: Database

    @classmethod
    def open(cls, path: Any = None, *, create: bool = True, **options: Any) -> "RunLogStore":
        from zagent import ConfigError

        from . import default_path

        path = os.fspath(path) if path is not None else default_path()
        default = path == default_path()
        if not create and not os.path.exists(path):
            raise ConfigError(f"no run log at {path}: run something with ZAGENT_LOG=1 (or "
                              "Kernel(config={'log': True})) first, or pass --db PATH")
        from zagent.agentkit.privatefiles import private_parent

        private_parent(path)  # 0700: the log holds prompts as typed (no lexical '..' after a symlinked folder)
        if default:
            from zagent.agentkit.privatefiles import tighten

            tighten(path)  # one an older zagent made 0644 in 0755 becomes the user's alone
        options.setdefault("synchronous", "normal")
        return cls(Database(path, **options))

    def write(self, rows: list[dict[str, Any]]) -> None:
        """Add rows (dicts with ``COLUMNS``; ``data`` any JSON-able value) in one transaction."""
        values = [tuple(_encode(r.get("data") or {}) if c == "data" else r.get(c, 0 if c.endswith("_tokens") else None)
                        for c in COLUMNS) for r in rows]
        marks = ", ".join("?" for _ in COLUMNS)
        self.db.write(lambda c: c.executemany(
            f"INSERT INTO run_spans ({', '.join(COLUMNS)}) VALUES ({marks})", values))

    def runs(self, limit: int = 20, *, status: Optional[str] = None, agent: Optional[str] = None,
             since: Optional[float] = None, batch: Optional[str] = None,
             batches_whole: bool = False) -> list[dict[str, Any]]:
        """The newest runs first: id, kind and name of the top span, start, duration, outcome, tokens, spans and
        the batch it was an item of; only those with outcome ``status``, of agent (or name) ``agent``, started
        at ``since`` or later, of batch ``batch``. ``batches_whole``: ``limit`` counts a batch's item runs as
        one (``zagent logs list`` folds them into one row) and every listed batch comes with all its items."""
        where = ["r.parent_id IS NULL", "r.span_id IS NOT NULL"]
        params: list[Any] = []
        if batch is not None:
            where.append(f"{_BATCH} = ?")
            params.append(batch)
        if status is not None:
            where.append("r.outcome = ?")
            params.append(status)
        if agent is not None:
            where.append("(r.agent = ? OR r.name = ?)")
            params += [agent, agent]
        if since is not None:
            where.append("r.started >= ?")
            params.append(float(since))
        sql = """
            SELECT r.run_id, r.kind, r.name, r.agent, r.started, r.duration, r.outcome,
                   (SELECT SUM(input_tokens) FROM run_spans WHERE run_id = r.run_id AND kind = 'llm'),
                   (SELECT SUM(output_tokens) FROM run_spans WHERE run_id = r.run_id AND kind = 'llm'),
                   (SELECT COUNT(*) FROM run_spans WHERE run_id = r.run_id AND kind = 'llm'),
                   (SELECT COUNT(*) FROM run_spans WHERE run_id = r.run_id AND kind = 'tool'),
                   """ + _BATCH + """
            FROM run_spans r WHERE """ + " AND ".join(where)
        if batches_whole:  # the newest `limit` entries (a run, or a batch's items), then all their runs
            entry = f"COALESCE({_BATCH}, r.run_id)"
            sql = ("WITH top AS (SELECT " + entry + " AS entry FROM run_spans r WHERE " + " AND ".join(where)
                   + " GROUP BY entry ORDER BY MAX(r.started) DESC LIMIT ?) " + sql + " AND " + entry
                   + " IN (SELECT entry FROM top) ORDER BY r.started DESC, r.id DESC")
            params = [*params, int(limit), *params]
        else:
            sql += " ORDER BY r.started DESC, r.id DESC LIMIT ?"
            params.append(int(limit))
        names = ("run_id", "kind", "name", "agent", "started", "duration", "outcome", "input_tokens",
                 "output_tokens", "llm_calls", "tool_calls", "batch")
        rows = self.db.read(lambda c: c.execute(sql, params).fetchall())
        return [checked(dict(zip(names, r)), self.db.path) for r in rows]

    def spans(self, run_id: str) -> list[dict[str, Any]]:
        """Every row of one run (``latest`` for the newest), oldest first; [] for an unknown run."""
        if run_id == "latest":
            found = self.runs(1)
            if not found:
                return []
            run_id = found[0]["run_id"]
        rows = self.db.read(lambda c: c.execute(
            f"SELECT {', '.join(COLUMNS)} FROM run_spans WHERE run_id = ? ORDER BY started, id", (run_id,)).fetchall())
        return whole_prompts([_row(r, self.db.path) for r in rows])

    def search(self, text: str, limit: int = 20) -> list[dict[str, Any]]:
        """Rows whose name or data (prompts, replies, tool arguments and results) contain ``text``, newest first."""
        like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self.db.read(lambda c: c.execute(
            f"SELECT {', '.join(COLUMNS)} FROM run_spans WHERE name LIKE ? ESCAPE '\\' "
            "OR CAST(data AS TEXT) LIKE ? ESCAPE '\\' ORDER BY started DESC, id DESC LIMIT ?",
            (like, like, int(limit))).fetchall())
        return [_row(r, self.db.path) for r in rows]

    def close(self) -> None:
        self.db.close()

    async def aclose(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<RunLogStore {self.db.path}>"


def _row(values: Any, path: Any = None) -> dict[str, Any]:
    row = dict(zip(COLUMNS, values))
    row["data"] = msgspec.json.decode(row["data"]) if row["data"] else {}
    return checked(row, path)


#: column -> (types it may hold, may it be NULL); numbers are finite too, times within ``MAX_TIME``
_TYPES: dict[str, tuple[tuple[type, ...], bool]] = {
    "run_id": ((str,), False), "kind": ((str,), False), "name": ((str,), False), "span_id": ((str,), True),
    "parent_id": ((str,), True), "agent": ((str,), True), "outcome": ((str,), True), "batch": ((str,), True),
    "started": ((int, float), False), "duration": ((int, float), True), "input_tokens": ((int, float), True),
    "output_tokens": ((int, float), True), "llm_calls": ((int,), True), "tool_calls": ((int,), True),
    "data": ((dict,), False)}
MAX_TIME = 32503680000.0  # the year 3000, in seconds: datetime cannot show 1e300


def checked(row: dict[str, Any], path: Any = None) -> dict[str, Any]:
    """``row`` when each column holds its type (``_TYPES``); a ``ConfigError`` naming the run and column otherwise:
    a run log edited, or written by something else, made ``zagent logs`` fail with a traceback."""
    from zagent import ConfigError

    for column, value in row.items():
        kinds, nullable = _TYPES.get(column, ((object,), True))
        if value is None and nullable:
            continue
        bad = not isinstance(value, kinds) or isinstance(value, bool)
        if not bad and isinstance(value, (int, float)):
            bad = not (0 <= value <= (MAX_TIME if column == "started" else 1e15))
        if bad:
            raise ConfigError(f"the run log {str(path)!r} has a run {str(row.get('run_id'))!r:.80} whose "
                              f"{column} is {type(value).__name__} {value!r:.60}, not what zagent writes there; "
                              "it was edited or written by something else: use another --db, or delete the file "
                              "to start a new run log")
    return row



def whole_prompts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` of one run with each model call's prompt whole again: a call stored as ``"earlier": n,
    "earlier_span": id`` (its first n messages are that earlier call's) gets them back. A reference the rows cannot
    resolve (an edited or cut log) is left as stored, and so are the calls built on it."""
    by_span = {r["span_id"]: r for r in rows if r.get("span_id")}
    done: dict[str, Optional[list[Any]]] = {}
    for row in rows:
        if row.get("kind") != "llm":
            continue
        chain: list[dict[str, Any]] = []
        current: Optional[dict[str, Any]] = row
        while current is not None and (current.get("span_id") or "") not in done and not any(
                current is c for c in chain):
            chain.append(current)
            request = _request(current)
            current = by_span.get(request.get("earlier_span")) if request is not None and _earlier(request) else None
        base = done.get(current.get("span_id") or "") if current is not None and not any(
            current is c for c in chain) else None
        for item in reversed(chain):  # the earliest first
            request = _request(item)
            count = _earlier(request) if request is not None else 0
            if request is None or (count and (base is None or len(base) < count)):
                base = None  # unresolvable: kept as stored, and so are the calls after it
            else:
                own = list(request.get("messages") or [])
                if count:
                    own = list(base or [])[:count] + own
                    request.pop("earlier", None)
                    request.pop("earlier_span", None)
                    request["messages"] = own
                base = own
            done[item.get("span_id") or ""] = base
    return rows


def _request(row: dict[str, Any]) -> Optional[dict[str, Any]]:
    data = row.get("data")
    request = data.get("request") if isinstance(data, dict) else None
    return request if isinstance(request, dict) else None


def _earlier(request: dict[str, Any]) -> int:
    """How many messages a stored prompt takes from an earlier call (0: none, or not a count)."""
    value = request.get("earlier")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
