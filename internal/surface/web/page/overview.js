// overview.js: the runs at a glance (ultra tasks --all), what waits for a
// person (the approvals), and the form that starts a run. The rows come
// from the reads and are kept fresh by the stream of every run's events.
"use strict";

const Overview = (() => {
  const { el, chip } = U;
  let view = null;

  function row(t) {
    const waits = t.class === "waiting";
    return el("article.card.run-row" + (waits ? ".waits" : ""), { "data-run": t.id, "data-status": t.status, "data-class": t.class },
      el("div.row-head",
        el("a.run-link", { href: "#/run/" + t.id }, t.task || "(no task)"),
        el("span.row-chips", chip(t.status, "status"), t.phase !== t.status ? chip(t.phase, "phase") : "", U.badge(t.axes))),
      el("p.dim.row-facts", el("code", t.id), " · ", U.tokens(t.input_tokens), " in · ", U.tokens(t.output_tokens), " out",
        t.goal ? " · goal " + t.goal : "", " · ", U.ago(t.updated_at)),
      t.why ? el("p.why", waits ? el("b", "waits for " + (t.waiting_for || "you") + ": ") : "", t.why) : "",
      t.next ? el("p.next", "next: ", el("code", t.next)) : "");
  }

  function waitingRow(t) {
    const act = (cmd, body) => async () => {
      try {
        const r = await API.request("POST", "/api/runs/" + encodeURIComponent(t.id) + "/" + cmd, body);
        U.notice(r.command + " done" + (r.output ? ":\n" + r.output : ""), "ok");
        refresh();
      } catch (e) {
        U.notice("/" + cmd + ": " + e.message, "error");
      }
    };
    const answers = t.waiting_for === "plan"
      ? [el("button.primary", { type: "button", onclick: act("approve", { flags: { autonomous: true } }) }, "Accept and run autonomously"),
        el("button", { type: "button", onclick: act("approve", {}) }, "Accept")]
      : [el("button.primary", { type: "button", onclick: act("approve", {}) }, "Allow"),
        el("button", { type: "button", onclick: act("deny", { args: ["denied on the web page"] }) }, "Deny")];
    return el("article.card.waiting-row", { "data-run": t.id },
      el("p", chip("waiting"), " ", el("b", t.waiting_for === "plan" ? "Plan to accept" : "Call to allow"), " · ",
        el("a", { href: "#/run/" + t.id }, t.task || t.id)),
      el("p.why", t.why || ""),
      el("div.answers", answers, el("a.button", { href: "#/run/" + t.id }, "Open")));
  }

  async function refresh() {
    if (!view) return;
    const v = view;
    let tasks;
    try {
      tasks = await API.request("GET", "/api/tasks?all=1");
    } catch (e) {
      if (v === view) U.clear(v.list).append(el("p.err", e.message));
      return;
    }
    if (v !== view) return;
    const rows = tasks.tasks || [];
    U.add(U.clear(v.list), [rows.length ? rows.map(row) : el("p.dim", "No runs yet in this repository. ", el("a", { href: "#/new" }, "Start one."))]);
    // What waits for a person, as GET /api/approvals keeps it: a plan to
    // accept or a call to allow (read from the same rows, in one request).
    const w = rows.filter((t) => t.class === "waiting" && (t.waiting_for === "plan" || t.waiting_for === "approval"));
    v.waiting.hidden = !w.length;
    U.add(U.clear(v.waitingList), [w.map(waitingRow)]);
    v.list.dataset.loaded = "1";
  }

  const refreshSoon = U.debounce(refresh, 500);

  function show(root) {
    hide();
    view = { root };
    view.list = el("div.run-list", { id: "runs" });
    view.waitingList = el("div");
    view.waiting = el("section.waiting", { id: "waiting", hidden: true, "aria-labelledby": "waiting-h" }, el("h2", { id: "waiting-h" }, "Waiting for you"), view.waitingList);
    document.title = "ultra · runs";
    U.clear(root).append(el("section.overview",
      el("div.title-row", el("h1", { tabindex: "-1" }, "Runs"), el("a.button.primary", { href: "#/new" }, "Start a run")),
      view.waiting, el("h2.sr-only", "All runs"), view.list));
    root.querySelector("h1").focus({ preventScroll: true });
    refresh();
  }

  function hide() {
    view = null;
  }

  // onEvent takes an event of any run: the rows follow.
  function onEvent() {
    if (view) refreshSoon();
  }

  // The start form: the task, the four axes and ultra run's other flags
  // (provider, base-url and model among them).
  function showNew(root) {
    hide();
    const sel = (a) => RunView.select(a, RunView.AXES[a], "(default)");
    const input = (name, ph) => {
      const id = "new-" + name;
      return el("label.field", { for: id }, el("span", name), el("input", { id, name, type: "text", placeholder: ph || "", autocomplete: "off" }));
    };
    const task = el("textarea", { id: "new-task", name: "task", rows: 4, required: true, placeholder: "What should ultra do? (e.g. fix the failing test in calc)" });
    const extra = el("textarea", { id: "new-extra", name: "extra", rows: 3, placeholder: "max-turns=20\nrefactor" });
    const submit = el("button.primary.act-start", { type: "submit" }, "Start the run");
    const form = el("form.start-form", { "aria-labelledby": "new-h" },
      el("label.field.wide", { for: "new-task" }, el("span", "task"), task),
      el("fieldset.axes", el("legend", "Axes"), sel("mode"), sel("control"), sel("permission-profile"), sel("model-mode")),
      el("fieldset.model", el("legend", "Model"), input("provider", "openai, anthropic…"), input("base-url", "http://…/v1"), input("model", "model name")),
      el("label.field.wide", { for: "new-extra" }, el("span", "more flags of ultra run, one a line: name=value, or name for a switch"), extra),
      el("div.answers", submit));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const flags = {};
      for (const f of form.querySelectorAll("select, input")) if (f.value.trim()) flags[f.name] = f.value.trim();
      for (const l of extra.value.split("\n")) {
        const s = l.trim().replace(/^--/, "");
        if (!s) continue;
        const i = s.indexOf("=");
        if (i < 0) flags[s] = true;
        else flags[s.slice(0, i).trim()] = s.slice(i + 1).trim();
      }
      submit.disabled = true;
      try {
        const r = await API.request("POST", "/api/runs", { task: task.value, flags });
        U.notice("started run " + r.run, "ok");
        location.hash = "#/run/" + r.run;
      } catch (err) {
        U.notice("ultra run: " + err.message, "error");
      } finally {
        submit.disabled = false;
      }
    });
    document.title = "ultra · start a run";
    U.clear(root).append(el("section.new", el("h1", { id: "new-h", tabindex: "-1" }, "Start a run"), form));
    task.focus();
  }

  return { show, showNew, hide, onEvent, refresh };
})();
