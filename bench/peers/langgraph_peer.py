"""LangGraph 1.2 peer: the email review loop as a ``StateGraph`` with ``interrupt()``.

Variants:
    memory  -- ``InMemorySaver`` checkpointer.
    sqlite  -- ``SqliteSaver`` (``langgraph-checkpoint-sqlite``) on a file in a temp dir.
    postgres -- ``PostgresSaver`` (``langgraph-checkpoint-postgres``, psycopg 3) on a fresh database
               created on ``$BENCH_DATABASE_URL`` (else ``$DATABASE_URL``; the role needs
               CREATEDB) and dropped at close: the same server as ours' ``postgres`` variant.

The graph is compiled once per driver; every session is a ``thread_id``.
Start = ``graph.invoke({"complaint": ...})`` until the interrupt; resume =
``graph.invoke(Command(resume=answer))``. Both use the synchronous API and
LangGraph's default durability (``"async"``: checkpoints of a step are written
while the next step runs).

Run: ``python -m bench.peers.langgraph_peer --sessions 20 --reps 1 --loops 1,10``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any, Literal, TypedDict

if __package__ in (None, ""):  # executed as a script: make ``bench.peers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from bench.peers import cli, common


class ReviewState(TypedDict, total=False):
    """Graph state; ``answer`` is the reviewer's latest reply."""

    complaint: str
    feedback: str
    draft: str
    answer: str
    message: str


def process_input(state: ReviewState) -> dict[str, Any]:
    """Store the complaint and reset the feedback."""
    return {"complaint": state["complaint"], "feedback": ""}


def draft_email(state: ReviewState) -> dict[str, Any]:
    """Deterministic fake LLM call."""
    return {"draft": common.draft_email_text(state["complaint"], state.get("feedback", ""))}


def request_human_review(state: ReviewState) -> dict[str, Any]:
    """Pause for the human; on resume ``interrupt`` returns the answer."""
    answer = interrupt({"message": common.review_prompt(state["draft"]), "draft": state["draft"]})
    return {"answer": answer}


def handle_human_review(
    state: ReviewState,
) -> Command[Literal["draft_email", "send_email", "reject_email"]]:
    """Route on the answer; any other text becomes feedback for a new draft."""
    route = common.route_for_answer(state["answer"])
    if route == common.ROUTE_APPROVED:
        return Command(goto="send_email")
    if route == common.ROUTE_REJECTED:
        return Command(goto="reject_email")
    return Command(goto="draft_email", update={"feedback": state["answer"]})


def send_email(state: ReviewState) -> dict[str, Any]:
    """Terminal node of the approved route."""
    return {"message": common.SENT_MESSAGE}


def reject_email(state: ReviewState) -> dict[str, Any]:
    """Terminal node of the rejected route."""
    return {"message": common.REJECTED_MESSAGE}


def build_graph(checkpointer: BaseCheckpointSaver[Any]) -> Any:
    """Compile the workflow graph with ``checkpointer``."""
    g = StateGraph(ReviewState)
    g.add_node("process_input", process_input)
    g.add_node("draft_email", draft_email)
    g.add_node("request_human_review", request_human_review)
    g.add_node("handle_human_review", handle_human_review)
    g.add_node("send_email", send_email)
    g.add_node("reject_email", reject_email)
    g.add_edge(START, "process_input")
    g.add_edge("process_input", "draft_email")
    g.add_edge("draft_email", "request_human_review")
    g.add_edge("request_human_review", "handle_human_review")
    g.add_edge("send_email", END)
    g.add_edge("reject_email", END)
    return g.compile(checkpointer=checkpointer)


class LangGraphDriver(common.PeerDriver):
    """Drives the compiled graph synchronously, one ``thread_id`` per session."""

    system = "langgraph"

    def __init__(self, variant: str) -> None:
        """``variant`` is ``"memory"`` or ``"sqlite"``."""
        super().__init__(variant)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._conn: sqlite3.Connection | None = None
        self._db_path: Path | None = None
        self._graph: Any = None
        self._pg: Any = None
        self._pg_db: str | None = None

    def open(self) -> None:
        """Create the checkpointer (and the SQLite file) and compile the graph."""
        saver: BaseCheckpointSaver[Any]
        if self.variant == "postgres":
            saver = self._postgres_saver()
        elif self.variant == "sqlite":
            self._tmp = tempfile.TemporaryDirectory(prefix="lg-bench-")
            self._db_path = Path(self._tmp.name) / "checkpoints.sqlite"
            # Background checkpoint writes (durability="async") need cross-thread use.
            self._conn = sqlite3.connect(self._db_path, check_same_thread=False)
            saver = SqliteSaver(self._conn)
            saver.setup()
        else:
            saver = InMemorySaver()
        self._graph = build_graph(saver)

    def _postgres_saver(self) -> BaseCheckpointSaver[Any]:
        """A ``PostgresSaver`` on a fresh database (set up), as the package's docs wire it."""
        import psycopg  # only this variant needs them (langgraph-checkpoint-postgres, psycopg 3)
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
        from psycopg.rows import dict_row

        url = os.environ.get("BENCH_DATABASE_URL") or os.environ.get("DATABASE_URL")
        if not url:
            raise SystemExit("the postgres variant needs BENCH_DATABASE_URL or DATABASE_URL (postgres://…)")
        self._pg_db = f"lg_bench_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self._pg_server = make_conninfo(url, dbname="postgres")
        with psycopg.connect(self._pg_server, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{self._pg_db}"')
        conninfo = make_conninfo(url, dbname=self._pg_db)
        assert conninfo_to_dict(conninfo)["dbname"] == self._pg_db
        self._pg = psycopg.connect(conninfo, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        saver = PostgresSaver(self._pg)
        saver.setup()
        return saver

    def close(self) -> None:
        """Close the SQLite connection and delete the temp dir (or drop the PostgreSQL database)."""
        if self._pg is not None:
            import psycopg  # as in _postgres_saver

            self._pg.close()
            self._pg = None
            with psycopg.connect(self._pg_server, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{self._pg_db}" WITH (FORCE)')
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    @staticmethod
    def _outcome(result: dict[str, Any]) -> common.Outcome:
        interrupts = result.get("__interrupt__")
        if interrupts:
            return common.Paused(draft=interrupts[0].value["draft"])
        return common.Finished(message=result["message"])

    def start(self, session_id: str, complaint: str) -> common.Outcome:
        """Invoke the graph on a new thread until the interrupt."""
        config = {"configurable": {"thread_id": session_id}}
        return self._outcome(self._graph.invoke({"complaint": complaint}, config))

    def resume(self, session_id: str, answer: str) -> common.Outcome:
        """Resume the thread with ``Command(resume=answer)``."""
        config = {"configurable": {"thread_id": session_id}}
        return self._outcome(self._graph.invoke(Command(resume=answer), config))

    def storage_bytes(self) -> int | None:
        """SQLite file size (WAL folded in), PostgreSQL's ``pg_database_size``; ``None`` in memory."""
        if self._pg is not None:
            row = self._pg.execute("SELECT pg_database_size(current_database()) AS size").fetchone()
            return int(row["size"])
        return None if self._db_path is None else common.sqlite_file_bytes(self._db_path)

    def versions(self) -> dict[str, str]:
        """Versions of the LangGraph packages."""
        return common.package_versions(
            "langgraph",
            "langgraph-checkpoint",
            "langgraph-checkpoint-sqlite",
            "langgraph-checkpoint-postgres",
            "langchain-core",
        )

    def notes(self) -> str:
        """How the variant is wired."""
        store = {"sqlite": "SqliteSaver(file, WAL)", "postgres": "PostgresSaver(one connection)"}.get(
            self.variant, "InMemorySaver"
        )
        return f"sync invoke, durability=async (default), {store}"


VARIANTS = {"memory": LangGraphDriver, "sqlite": LangGraphDriver, "postgres": LangGraphDriver}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point (see ``--help``)."""
    return cli.run_cli(LangGraphDriver.system, VARIANTS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
