// LangGraph's JS SDK (@langchain/langgraph-sdk) driving a stategraph server.
// Usage: node sdk_checks.mjs URL   -> prints {"passed": [...], "failed": {...}} as JSON.
import { Client } from "@langchain/langgraph-sdk";

const url = process.argv[2];
const client = new Client({ apiUrl: url });
const HI = { messages: [{ role: "user", content: "hi" }] };
const passed = [];
const failed = {};

function check(cond, message) {
  if (!cond) throw new Error(message);
}

async function run(name, fn) {
  try {
    await fn();
    passed.push(name);
  } catch (err) {
    failed[name] = String(err && err.stack ? err.stack : err);
  }
}

await run("assistants.search", async () => {
  const found = await client.assistants.search({ graphId: "agent" });
  check(found.length >= 1 && found[0].graph_id === "agent", JSON.stringify(found));
});

await run("threads.create+search by metadata", async () => {
  const tag = `tag-${Date.now()}`;
  const thread = await client.threads.create({ metadata: { tag } });
  check(thread.metadata.tag === tag, JSON.stringify(thread));
  const found = await client.threads.search({ metadata: { tag } });
  check(found.length === 1 && found[0].thread_id === thread.thread_id, JSON.stringify(found));
});

await run("runs.stream to interrupt, resume, state", async () => {
  const thread = await client.threads.create();
  const events = [];
  for await (const part of client.runs.stream(thread.thread_id, "agent", {
    input: HI,
    streamMode: ["values", "updates", "messages-tuple"],
  })) {
    events.push(part);
  }
  check(events[0].event === "metadata", JSON.stringify(events[0]));
  const last = events[events.length - 1];
  check(last.event === "values" && last.data.__interrupt__, JSON.stringify(last));
  check(events.some((e) => e.event === "messages"), "no messages event");
  const state = await client.threads.getState(thread.thread_id);
  check(state.next[0] === "approve" && state.tasks[0].interrupts.length === 1, JSON.stringify(state));
  const out = await client.runs.wait(thread.thread_id, "agent", { command: { resume: "yes" } });
  check(out.approved === true && out.messages.length === 3, JSON.stringify(out));
  const got = await client.threads.get(thread.thread_id);
  check(got.status === "idle", JSON.stringify(got));
});

await run("runs.create+join+get+list", async () => {
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "steps", { input: { n: 0 } });
  const out = await client.runs.join(thread.thread_id, run.run_id);
  check(out.n === 5, JSON.stringify(out));
  const got = await client.runs.get(thread.thread_id, run.run_id);
  check(got.status === "success", JSON.stringify(got));
  const listed = await client.runs.list(thread.thread_id);
  check(listed.length === 1, JSON.stringify(listed));
});

await run("runs.joinStream", async () => {
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "steps", { input: { n: 0 }, streamMode: "updates" });
  const seen = [];
  for await (const part of client.runs.joinStream(thread.thread_id, run.run_id)) seen.push(part.event);
  check(seen.filter((e) => e === "updates").length === 5, JSON.stringify(seen));
});

await run("runs.cancel", async () => {
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "slow", { input: { n: 30 } });
  for (let i = 0; i < 100; i++) {
    if ((await client.runs.get(thread.thread_id, run.run_id)).status === "running") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await client.runs.cancel(thread.thread_id, run.run_id, true);
  const got = await client.runs.get(thread.thread_id, run.run_id);
  check(got.status === "interrupted", JSON.stringify(got));
});

await run("store put/get/search", async () => {
  const ns = ["js", `${Date.now()}`];
  await client.store.putItem(ns, "k", { v: 1 });
  const item = await client.store.getItem(ns, "k");
  check(item.value.v === 1, JSON.stringify(item));
  const missing = await client.store.getItem(ns, "nope");
  check(missing === null, JSON.stringify(missing));
  const found = await client.store.searchItems(ns);
  check(found.items.length === 1, JSON.stringify(found));
});

await run("crons create/search/delete", async () => {
  const cron = await client.crons.create("steps", { schedule: "0 0 * * *", input: { n: 0 } });
  const found = await client.crons.search({ assistantId: cron.assistant_id });
  check(found.some((c) => c.cron_id === cron.cron_id), JSON.stringify(found));
  await client.crons.delete(cron.cron_id);
});

await run("stateless runs.wait", async () => {
  const out = await client.runs.wait(null, "steps", { input: { n: 0 } });
  check(out.n === 5 && out.log.length === 5, JSON.stringify(out));
});

console.log(JSON.stringify({ passed, failed }));
process.exit(Object.keys(failed).length ? 1 : 0);
