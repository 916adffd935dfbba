// stategraph studio: the page's few behaviours. Values are only ever put into the page
// as text (textContent), never as HTML, and nothing here evaluates code.
"use strict";

function csrf() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.getAttribute("content") : "";
}

async function postJson(path, body) {
  const resp = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  let data = {};
  try { data = await resp.json(); } catch (e) { data = {}; }
  return { ok: resp.ok, status: resp.status, data: data };
}

function showErrors(box, errors) {
  box.textContent = "";
  for (const msg of errors) {
    const line = document.createElement("div");
    line.textContent = msg;
    box.appendChild(line);
  }
}

function parseField(form, name, box) {
  const field = form.elements[name];
  if (!field) return { ok: true, value: undefined };
  if (field.tagName === "SELECT") return { ok: true, value: field.value };
  try {
    return { ok: true, value: JSON.parse(field.value) };
  } catch (e) {
    showErrors(box, [name + ": not valid JSON (" + e.message + ")"]);
    return { ok: false };
  }
}

function bindJsonForm(form) {
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const box = form.querySelector(".form-error");
    box.textContent = "";
    const body = JSON.parse(form.dataset.extra || "{}");
    for (const name of ["value", "values", "as_node"]) {
      const got = parseField(form, name, box);
      if (!got.ok) return;
      if (got.value !== undefined) body[name] = got.value;
    }
    const res = await postJson(form.dataset.post, body);
    if (res.ok && res.data.redirect) { window.location.assign(res.data.redirect); return; }
    const errors = res.data.errors || [res.data.detail || ("request failed (" + res.status + ")")];
    showErrors(box, errors);
  });
}

function bindPostButton(button) {
  button.addEventListener("click", async () => {
    const res = await postJson(button.dataset.post, JSON.parse(button.dataset.body || "{}"));
    if (res.ok && res.data.redirect) { window.location.assign(res.data.redirect); return; }
    window.alert(res.data.detail || ("request failed (" + res.status + ")"));
  });
}

function addEvent(list, name, data) {
  const item = document.createElement("li");
  const tag = document.createElement("b");
  tag.textContent = name;
  const text = document.createElement("code");
  text.textContent = " " + JSON.stringify(data);
  item.appendChild(tag);
  item.appendChild(text);
  list.appendChild(item);
}

async function readEvents(resp, onEvent) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trim());
      }
      let parsed = data.join("\n");
      try { parsed = JSON.parse(parsed); } catch (e) { /* keep the text */ }
      onEvent(name, parsed);
    }
  }
}

function bindRunForm(form) {
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const box = form.querySelector(".form-error");
    const list = form.querySelector(".events");
    const status = form.querySelector(".run-status");
    box.textContent = "";
    list.textContent = "";
    const input = parseField(form, "input", box);
    if (!input.ok) return;
    const modes = Array.from(form.querySelectorAll('input[name="mode"]:checked')).map((m) => m.value);
    status.textContent = "running…";
    const resp = await fetch("/threads/" + encodeURIComponent(form.dataset.thread) + "/runs/stream", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf(), "Accept": "text/event-stream" },
      body: JSON.stringify({
        assistant_id: form.dataset.assistant,
        input: input.value,
        stream_mode: modes.length ? modes : ["updates"],
        stream_subgraphs: true,
      }),
      credentials: "same-origin",
    });
    if (!resp.ok) {
      let detail = "run refused (" + resp.status + ")";
      try { detail = (await resp.json()).detail || detail; } catch (e) { /* keep */ }
      showErrors(box, [detail]);
      status.textContent = "";
      return;
    }
    let failed = false;
    await readEvents(resp, (name, data) => {
      if (name === "error") failed = true;
      addEvent(list, name, data);
    });
    status.textContent = failed ? "run failed" : "run finished";
    status.dataset.done = failed ? "error" : "ok";
    const link = document.createElement("a");
    link.href = window.location.pathname;
    link.textContent = " reload the thread";
    status.appendChild(link);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("form.json-form").forEach(bindJsonForm);
  document.querySelectorAll("button[data-post]").forEach(bindPostButton);
  document.querySelectorAll("form.run-form").forEach(bindRunForm);
});
