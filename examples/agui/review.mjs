// The console's email review driven from an AG-UI client (@ag-ui/client's HttpAgent), printing every
// event as it streams: the draft is written, the run ends with an interrupt (the review, also in the
// inbox), the reviewer's feedback brings a second draft, and approving it ends the session.
//
//   cd examples/agui && npm ci
//   DEMO_API_TOKEN=rc_... node review.mjs     # the token ./run gave the demo client (README)
//
// CONSOLE_URL names another console (default http://127.0.0.1:8000). Exits 1 when the console
// refuses a run (its message is printed: a wrong token, an unknown workflow…).

import { HttpAgent, randomUUID } from "@ag-ui/client";

const url = (process.env.CONSOLE_URL || "http://127.0.0.1:8000").replace(/\/$/, "");
const token = process.env.DEMO_API_TOKEN;
if (!token) {
  console.error("Set DEMO_API_TOKEN to the demo API client's token: start ./run with DEMO_API_TOKEN=rc_… too.");
  process.exit(2);
}

const agent = new HttpAgent({
  url: `${url}/agui/email-review/`,
  headers: { Authorization: `Bearer ${token}` },
  threadId: randomUUID(), // one thread = one workflow session; later runs continue it
});

// One line per event, its type and what it says; a message's text streams as it comes.
function show(event) {
  if (event.type === "TEXT_MESSAGE_CONTENT") {
    process.stdout.write(event.delta);
    return;
  }
  if (event.type === "TEXT_MESSAGE_END") process.stdout.write("\n");
  const said = {
    RUN_STARTED: () => `run ${event.runId}`,
    STEP_STARTED: () => event.stepName,
    STEP_FINISHED: () => event.stepName,
    TEXT_MESSAGE_START: () => `${event.role}:`,
    TOOL_CALL_START: () => event.toolCallName,
    TOOL_CALL_ARGS: () => event.delta,
    TOOL_CALL_RESULT: () => event.content,
    STATE_SNAPSHOT: () => Object.keys(event.snapshot || {}).join(", "),
    STATE_DELTA: () => event.delta.map((op) => `${op.op} ${op.path}`).join(", "),
    CUSTOM: () => event.name,
    RUN_FINISHED: () => `outcome ${event.outcome?.type ?? "success"}`,
    RUN_ERROR: () => `${event.code}: ${event.message}`,
  }[event.type];
  console.log(`${event.type}${said ? `  ${said()}` : ""}`);
}

async function run(params) {
  try {
    await agent.runAgent(params, { onEvent: ({ event }) => show(event) });
  } catch (error) {
    // A refusal before the stream (401, 403, 404…) carries the console's JSON error.
    console.error(`The console refused the run: ${error.payload?.error?.message ?? error.message}`);
    process.exit(1);
  }
  const [review] = agent.pendingInterrupts;
  if (review) console.log(`→ waiting for review: interrupt ${review.id} (${review.reason}; also in the inbox)`);
  return review;
}

agent.addMessage({ id: randomUUID(), role: "user", content: "My phone battery drains too fast" });
const first = await run({}); // streams steps, the draft, state; ends with an interrupt
const second = await run({ resume: [{ interruptId: first.id, status: "resolved", payload: "shorter" }] });
await run({ resume: [{ interruptId: second.id, status: "resolved", payload: "approve" }] });
console.log("→ done: the second draft was approved and sent");
