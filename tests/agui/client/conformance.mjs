// The console's AG-UI endpoint driven by the reference client, @ag-ui/client 1.0 (HttpAgent).
//
// HttpAgent parses the SSE stream, enforces the 1.0 event schemas and verifies the event sequence
// (first event, open/close pairs, nothing after the end): any violation fails its run. Each case
// below also checks what the run should say. Usage:
//   AGUI_URL=http://127.0.0.1:8000 AGUI_TOKEN=rc_... node conformance.mjs
// Prints one line per case and "N passed, M failed"; exits 1 when a case fails.

import { HttpAgent, randomUUID } from "@ag-ui/client";

const BASE = (process.env.AGUI_URL || "http://127.0.0.1:8000").replace(/\/$/, "");
const TOKEN = process.env.AGUI_TOKEN || "";

function agent(workflow, { threadId = randomUUID(), token = TOKEN } = {}) {
  return new HttpAgent({ url: `${BASE}/agui/${workflow}/`, threadId, headers: { Authorization: `Bearer ${token}` } });
}

// One run: every event the client accepted, its RUN_FINISHED/RUN_ERROR, and a failure if any.
async function run(a, { text, resume, forwardedProps } = {}) {
  if (text !== undefined) a.addMessage({ id: randomUUID(), role: "user", content: text });
  const events = [];
  let failure = null;
  try {
    await a.runAgent(
      { ...(resume ? { resume } : {}), ...(forwardedProps ? { forwardedProps } : {}) },
      { onEvent: ({ event }) => void events.push(event) },
    );
  } catch (error) {
    failure = error;
  }
  const finished = events.find((e) => e.type === "RUN_FINISHED");
  const error = events.find((e) => e.type === "RUN_ERROR");
  return { events, finished, error, failure, outcome: finished?.outcome?.type ?? (finished ? "success" : undefined) };
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

function ok(result, outcome) {
  check(!result.failure, `the client rejected the run: ${result.failure?.message}`);
  check(!result.error, `RUN_ERROR ${result.error?.code}: ${result.error?.message}`);
  check(result.outcome === outcome, `outcome ${result.outcome}, expected ${outcome}`);
  check(result.events[0].type === "RUN_STARTED" && result.events[0].protocolVersion === "1.0", "RUN_STARTED 1.0 first");
  const started = result.events.filter((e) => e.type === "STEP_STARTED").length;
  const finished = result.events.filter((e) => e.type === "STEP_FINISHED").length;
  check(started === finished, `steps ${started} started, ${finished} finished`);
  return result;
}

function refused(result, code) {
  check(!result.finished, "the run finished instead of failing");
  check(result.error?.code === code, `RUN_ERROR code ${result.error?.code}, expected ${code}`);
  check(!/Traceback|Error\(|Exception/.test(result.error.message), `message leaks details: ${result.error.message}`);
}

const texts = (result) =>
  result.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
const customs = (result, name) => result.events.filter((e) => e.type === "CUSTOM" && e.name === name);

const cases = {
  async "plain run (vip-discount, standard customer)"() {
    const a = agent("vip-discount");
    const r = ok(await run(a, { text: '{"customer_id": "c456"}' }), "success");
    check(r.events.some((e) => e.type === "TOOL_CALL_START"), "tool calls are streamed");
    check(r.events.some((e) => e.type === "TOOL_CALL_RESULT"), "tool results are streamed");
    check(texts(r).includes("5%"), `the reply names the discount: ${texts(r)}`);
    check(r.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").length > 3, "text streams word by word");
    check(customs(r, "workflow_output").length === 1, "CUSTOM workflow_output");
  },

  async "email review: interrupt, feedback, second interrupt, approve"() {
    const a = agent("email-review");
    const first = ok(await run(a, { text: "My phone battery drains too fast" }), "interrupt");
    const [i1] = first.finished.outcome.interrupts;
    check(i1.reason === "input_required" && i1.responseSchema, "input_required with a responseSchema");
    check(i1.metadata?.checkpointId, "the interrupt carries the checkpoint id");
    check(a.pendingInterrupts.length === 1, "the client holds the pending interrupt");
    check(customs(first, "request_info").length === 1, "CUSTOM request_info");
    check(first.events.some((e) => e.type === "STATE_SNAPSHOT") && first.events.some((e) => e.type === "STATE_DELTA"), "state snapshot and deltas");
    const second = ok(await run(a, { resume: [{ interruptId: i1.id, status: "resolved", payload: "shorter" }] }), "interrupt");
    const [i2] = second.finished.outcome.interrupts;
    check(i2.id !== i1.id, "a second interrupt");
    check(texts(second).includes("We are sorry about this.") && !texts(second).includes("Revised after"), "the new draft applies the feedback, and only the email is in it");
    const third = ok(await run(a, { resume: [{ interruptId: i2.id, status: "resolved", payload: "approve" }] }), "success");
    check(texts(third).includes("Draft approved and sent successfully."), "sent");
    check(a.pendingInterrupts.length === 0, "nothing pending");
    const again = ok(await run(a, { resume: [{ interruptId: i2.id, status: "resolved", payload: "approve" }] }), "success");
    check(again.events.filter((e) => e.type === "TEXT_MESSAGE_START").length === 0, "the same answer twice is harmless");
  },

  async "tool approval (refund-approval): tool_call interrupt, approve, result"() {
    const a = agent("refund-approval");
    const first = ok(await run(a, { text: '{"order_id": "o-7", "amount": 40, "reason": "broken"}' }), "interrupt");
    const [approval] = first.finished.outcome.interrupts;
    check(approval.reason === "tool_call" && approval.toolCallId, "reason tool_call with the call id");
    const call = first.events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallId === approval.toolCallId);
    check(call?.toolCallName === "submit_refund", "the gated call was streamed in the paused run");
    check(!first.events.some((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === approval.toolCallId), "no result yet");
    const done = ok(await run(a, { resume: [{ interruptId: approval.id, status: "resolved", payload: { approved: true } }] }), "success");
    check(!done.events.some((e) => e.type === "TOOL_CALL_START" && e.toolCallId === approval.toolCallId), "no second START");
    const result = done.events.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === approval.toolCallId);
    check(result && JSON.parse(result.content).status === "submitted", "TOOL_CALL_RESULT after approval");
  },

  async "support handoff: each agent's turn a step, two approvals"() {
    const a = agent("support-handoff");
    const first = ok(await run(a, { text: "Order o-1001 arrived damaged, I want a refund" }), "interrupt");
    const steps = first.events.filter((e) => e.type === "STEP_STARTED").map((e) => e.stepName);
    check(steps.includes("support@1/triage_agent@1") && steps.includes("support@1/refunds_agent@1"), `steps ${steps}`);
    const [refund] = first.finished.outcome.interrupts;
    const second = ok(await run(a, { resume: [{ interruptId: refund.id, status: "resolved", payload: { approved: true } }] }), "interrupt");
    const [replacement] = second.finished.outcome.interrupts;
    const done = ok(await run(a, { resume: [{ interruptId: replacement.id, status: "resolved", payload: { approved: true } }] }), "success");
    check(texts(done).trim().toLowerCase().endsWith("case complete."), `ends the case: ${texts(done)}`);
  },

  async "resume by checkpoint id"() {
    const threadId = randomUUID();
    const a = agent("email-review", { threadId });
    const first = ok(await run(a, { text: "The courier left my parcel in the rain" }), "interrupt");
    const [i1] = first.finished.outcome.interrupts;
    ok(await run(a, { resume: [{ interruptId: i1.id, status: "resolved", payload: "more formal" }] }), "interrupt");
    const other = agent("email-review", { threadId }); // e.g. a second tab: it goes back to the first draft
    const back = ok(
      await run(other, {
        forwardedProps: { checkpointId: i1.metadata.checkpointId },
        resume: [{ interruptId: i1.id, status: "resolved", payload: "approve" }],
      }),
      "success",
    );
    check(texts(back).includes("Draft approved and sent successfully."), "approved from the first pause");
  },

  async "cancel"() {
    const a = agent("email-review");
    const first = ok(await run(a, { text: "Please cancel this one" }), "interrupt");
    const [i1] = first.finished.outcome.interrupts;
    ok(await run(a, { resume: [{ interruptId: i1.id, status: "cancelled" }] }), "cancelled");
    check(a.pendingInterrupts.length === 0, "nothing pending after a cancel");
  },

  async "refusals"() {
    const bad = await run(agent("email-review", { token: "rc_wrong" }), { text: "x" });
    check(bad.failure && /401/.test(bad.failure.message), `a wrong token is a 401: ${bad.failure?.message}`);
    const threadId = randomUUID();
    const a = agent("email-review", { threadId });
    const [i1] = ok(await run(a, { text: "Where is my refund?" }), "interrupt").finished.outcome.interrupts;
    const fresh = () => agent("email-review", { threadId }); // no client-side guard: the server must refuse
    refused(await run(fresh(), { text: "another message" }), "interrupts_pending");
    refused(await run(fresh(), { resume: [{ interruptId: "nope", status: "resolved", payload: "x" }] }), "resume_incomplete");
    refused(
      await run(fresh(), {
        resume: [
          { interruptId: i1.id, status: "resolved", payload: "approve" },
          { interruptId: "nope", status: "resolved", payload: "x" },
        ],
      }),
      "interrupt_unknown",
    );
    refused(await run(fresh(), { resume: [{ interruptId: i1.id, status: "resolved" }] }), "answer_invalid");
    refused(
      await run(fresh(), {
        forwardedProps: { checkpointId: "not-a-checkpoint" },
        resume: [{ interruptId: i1.id, status: "resolved", payload: "approve" }],
      }),
      "checkpoint_unknown",
    );
    refused(await run(agent("vip-discount"), { text: "not json" }), "input_invalid");
    ok(await run(a, { resume: [{ interruptId: i1.id, status: "resolved", payload: "approve" }] }), "success");
  },
};

let passed = 0;
let failed = 0;
for (const [name, body] of Object.entries(cases)) {
  try {
    await body();
    passed += 1;
    console.log(`ok   ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}: ${error.message}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
