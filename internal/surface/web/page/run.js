// run.js: one run: its header (status, phase, the badge, the last gate),
// what waits for a person (the plan to accept, the calls to allow), the
// controls (steer, next, pause, stop, cancel, resume, land…), and the
// tabs: the live transcript, the goals with their evidence, the diff and
// the details. Its state is the run's stream (from its first event on
// every open) and the reads of status and goals: nothing else is kept.
"use strict";

const RunView = (() => {
  const { el, chip } = U;
  const AXES = {
    mode: ["chat", "plan", "build", "review", "repair", "research"],
    control: ["manual", "assisted", "autonomous"],
    "permission-profile": ["restricted", "normal", "trusted", "unrestricted"],
    "model-mode": ["fast", "smart", "deep"],
  };
  const SCOPES = ["now", "after-current-tool", "after-current-unit", "next-milestone"];
  const TABS = ["transcript", "goals", "diff", "details"];

  let cur = null; // the open run's view

  function select(name, values, first, label) {
    const id = "f-" + name + "-" + Math.random().toString(36).slice(2, 7);
    const s = el("select", { id, name }, el("option", { value: "" }, first), values.map((v) => el("option", { value: v }, v)));
    return el("label.field", { for: id }, el("span", label || name.replaceAll("-", " ")), s);
  }

  class View {
    constructor(root, id, tab) {
      this.id = id;
      this.root = root;
      this.status = null;
      this.goalsStale = true;
      this.tab = TABS.includes(tab) ? tab : "transcript";
      this.build();
      this.transcript = new Transcript(this.log, () => this.renderWaiting());
      this.refreshStatus = U.debounce(() => this.loadStatus(), 400);
      this.refreshGoals = U.debounce(() => this.loadGoals(), 600);
      this.stream = new API.Stream("/api/runs/" + encodeURIComponent(id) + "/events", (ev) => this.onEvent(ev), {
        onState: (s, why) => { this.article.dataset.stream = s; if (s === "failed") U.notice("run " + id + ": " + why, "error"); },
      });
      this.loadStatus();
      this.showTab(this.tab, false);
    }

    build() {
      const id = this.id;
      this.title = el("h1", { tabindex: "-1" }, id);
      this.facts = el("div.facts");
      this.why = el("p.why");
      this.gate = el("p.gate-line");
      this.planBox = el("section.card.plan-box", { hidden: true, "aria-label": "plan acceptance" });
      this.waitBox = el("section.card.wait-box", { hidden: true, "aria-label": "calls waiting for approval" });
      const guidance = el("input", { type: "text", id: "resume-guidance", placeholder: "guidance for the model (optional)", "aria-label": "resume guidance" });
      const act = (cmd, body) => () => this.act(cmd, body ? body() : {});
      this.controls = el("div.controls", { role: "group", "aria-label": "run controls" },
        el("div.ctl-group.live",
          el("button.act-next", { type: "button", onclick: act("next") }, "Next"),
          el("button.act-pause", { type: "button", onclick: act("pause") }, "Pause"),
          el("button.act-stop", { type: "button", onclick: act("stop") }, "Stop"),
          el("button.act-autonomous", { type: "button", onclick: act("autonomous") }, "Go autonomous"),
          U.confirmable(el("button.danger.act-cancel", { type: "button" }, "Cancel"), "Cancel the run?", act("cancel", () => ({ flags: { reason: "cancelled on the web page" } })))),
        el("div.ctl-group.resume",
          guidance,
          el("button.act-resume", { type: "button", onclick: act("resume", () => ({ args: guidance.value.trim() ? [guidance.value.trim()] : [] })) }, "Resume")),
        el("div.ctl-group.branch",
          el("button.act-review", { type: "button", onclick: act("review") }, "Review"),
          U.confirmable(el("button.primary.act-land", { type: "button" }, "Land"), "Land it on its base?", act("land")),
          U.confirmable(el("button.danger.act-undo", { type: "button" }, "Undo"), "Drop branch and worktree?", act("undo"))));
      this.steer = this.buildSteer();
      this.tabs = el("div.tabs", { role: "tablist", "aria-label": "run views" },
        TABS.map((t) => el("button.tab", { type: "button", role: "tab", id: "tab-" + t, "aria-controls": "panel-" + t, "data-tab": t, onclick: () => this.showTab(t, true), onkeydown: (e) => this.tabKey(e, t) }, t[0].toUpperCase() + t.slice(1))));
      this.log = el("div.transcript.quiet", { id: "transcript", "aria-live": "off" });
      const quiet = el("input", { type: "checkbox", id: "show-turns" });
      quiet.addEventListener("change", () => this.log.classList.toggle("quiet", !quiet.checked));
      const shown = el("label.check", { for: "show-turns" }, quiet, " show model turns and ledger entries");
      this.goalsBox = el("div.goals");
      this.diffBox = el("div.diffbox");
      this.detailBox = el("div.details");
      const diffBtns = el("div.ctl-group",
        el("button.act-diff", { type: "button", onclick: () => this.loadDiff("") }, "Full diff"),
        el("button.act-diffstat", { type: "button", onclick: () => this.loadDiff("?stat") }, "Per file"),
        el("button", { type: "button", onclick: () => this.loadDiff("?committed") }, "Committed only"));
      this.panels = {
        transcript: el("section.panel", { id: "panel-transcript", role: "tabpanel", "aria-labelledby": "tab-transcript" }, shown, this.log),
        goals: el("section.panel", { id: "panel-goals", role: "tabpanel", "aria-labelledby": "tab-goals" }, this.goalsBox),
        diff: el("section.panel", { id: "panel-diff", role: "tabpanel", "aria-labelledby": "tab-diff" }, diffBtns, this.diffBox),
        details: el("section.panel", { id: "panel-details", role: "tabpanel", "aria-labelledby": "tab-details" }, this.detailBox),
      };
      this.article = el("article.run", { "data-run": id, "data-stream": "connecting" },
        el("div.run-head", el("p.crumb", el("a", { href: "#/" }, "Runs"), " / ", el("code", id)), this.title, this.facts, this.why, this.gate),
        this.planBox, this.waitBox, this.controls, this.steer, this.tabs, Object.values(this.panels));
      this.root.append(this.article);
    }

    buildSteer() {
      const fields = Object.keys(AXES).map((a) => select(a, AXES[a], "(keep)"));
      const scope = select("scope", SCOPES, "(default: after-current-tool)", "scope");
      const reasonID = "steer-reason";
      const reason = el("input", { type: "text", id: reasonID, name: "reason", placeholder: "why (recorded)" });
      const form = el("form.steer-form", { "aria-label": "steer the run" }, fields, scope,
        el("label.field", { for: reasonID }, el("span", "reason"), reason),
        el("button.primary.act-steer", { type: "submit" }, "Steer"));
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const flags = {};
        for (const s of form.querySelectorAll("select")) if (s.value) flags[s.name] = s.value;
        if (reason.value.trim()) flags.reason = reason.value.trim();
        this.act("steer", { flags }).then((ok) => { if (ok) form.reset(); });
      });
      return el("details.card.steer", el("summary", "Steer: mode, control, profile, model mode"), form);
    }

    tabKey(e, t) {
      const i = TABS.indexOf(t);
      let j = -1;
      if (e.key === "ArrowRight") j = (i + 1) % TABS.length;
      if (e.key === "ArrowLeft") j = (i + TABS.length - 1) % TABS.length;
      if (j < 0) return;
      e.preventDefault();
      this.showTab(TABS[j], true);
      this.tabs.querySelector("[data-tab=" + TABS[j] + "]").focus();
    }

    showTab(t, push) {
      this.tab = t;
      for (const b of this.tabs.children) {
        const on = b.dataset.tab === t;
        b.setAttribute("aria-selected", on ? "true" : "false");
        b.tabIndex = on ? 0 : -1;
      }
      for (const [k, p] of Object.entries(this.panels)) p.hidden = k !== t;
      if (push) history.replaceState(history.state, "", "#/run/" + this.id + (t === "transcript" ? "" : "/" + t));
      if (t === "goals" && this.goalsStale) this.loadGoals();
      if (t === "diff" && (!this.diffBox.firstChild || this.diffStale)) {
        this.diffStale = false;
        this.loadDiff("");
      }
      if (t === "details") this.renderDetails();
    }

    onEvent(ev) {
      // The transcript follows new events while the person reads its end
      // (scrolled down to it); the top of a run stays put otherwise.
      const follow = scrollY > 0 && innerHeight + scrollY >= document.documentElement.scrollHeight - 120;
      if (!this.transcript.add(ev)) return;
      if (follow && this.tab === "transcript") scrollTo(0, document.documentElement.scrollHeight);
      if (ev.type === "model_request") return;
      this.refreshStatus();
      if (["criterion", "ledger", "plan_proposed", "phase_changed", "run_finished", "commit"].includes(ev.type)) {
        this.goalsStale = true;
        if (this.tab === "goals") this.refreshGoals();
      }
      if (this.tab === "diff" && ["tool_result", "commit", "run_finished"].includes(ev.type)) this.diffStale = true;
    }

    // act carries out a command of the table on this run and says how it
    // went; it resolves to whether it worked.
    async act(cmd, body) {
      try {
        const r = await API.request("POST", "/api/runs/" + encodeURIComponent(this.id) + "/" + cmd, body || {});
        const out = (r.output || "").trim();
        U.notice(r.command + (r.driving ? " goes on with the run" : " done") + (out ? ":\n" + out : ""), "ok");
        this.refreshStatus();
        if (cmd === "land" || cmd === "undo") this.diffBox.replaceChildren();
        return true;
      } catch (e) {
        U.notice("/" + cmd + ": " + e.message, "error");
        return false;
      }
    }

    async loadStatus() {
      try {
        this.status = await API.request("GET", "/api/runs/" + encodeURIComponent(this.id));
      } catch (e) {
        if (e.status === 404) {
          U.notice(e.message, "error");
          this.controls.hidden = true;
          this.steer.hidden = true;
        }
        return;
      }
      this.renderStatus();
    }

    renderStatus() {
      const s = this.status;
      if (!s) return;
      const cls = s.class || {};
      this.article.dataset.status = s.status;
      this.article.dataset.class = cls.class || "";
      this.title.textContent = s.task || s.id;
      document.title = (cls.class === "waiting" ? "(waiting) " : "") + (s.task || s.id) + " · ultra";
      const u = s.used || {};
      U.clear(this.facts).append(
        chip(s.status, "status"), s.phase !== s.status ? chip(s.phase, "phase") : "", U.badge(s.axes),
        el("span.dim", " " + [s.provider, s.model].filter(Boolean).join(" · ")),
        el("span.dim", " · " + (u.turns || 0) + " turns · " + U.tokens(u.input_tokens) + " in · " + U.tokens(u.output_tokens) + " out"),
        s.workspace && s.workspace.branch ? el("span.dim", " · " + s.workspace.branch) : "");
      const ws = s.workspace || {};
      const fate = ws.landed ? "landed" : ws.undone ? "undone" : ws.removed ? "removed" : "";
      if (fate) this.facts.append(" ", chip(fate, "branch"));
      this.why.textContent = cls.why || s.reason || "";
      this.why.hidden = !this.why.textContent;
      this.showControls(s, cls, fate);
      const v = s.last_verify;
      U.clear(this.gate);
      if (v) this.gate.append("Last gate", v.gate ? " " + v.gate : "", ": ", chip(v.status, "gate"), " " + (v.reason || ""));
      this.gate.hidden = !v;
      this.renderPlan();
      this.renderWaiting();
      if (this.tab === "details") this.renderDetails();
    }

    // showControls offers what the run's state allows: a finished run has
    // nothing to pause or cancel, a complete or cancelled one nothing to
    // resume, and a chat (or a landed or undone run) no branch to land.
    showControls(s, cls, fate) {
      const done = cls.active === false;
      const mode = (s.axes && s.axes.mode) || "";
      const noBranch = !s.workspace || !s.workspace.branch || mode === "chat" || mode === "research";
      this.controls.querySelector(".live").hidden = done;
      this.controls.querySelector(".resume").hidden = s.status === "complete" || s.status === "cancelled";
      this.controls.querySelector(".branch").hidden = noBranch || fate === "undone" || fate === "removed";
      for (const b of this.controls.querySelectorAll(".act-land")) b.hidden = fate === "landed";
      this.controls.hidden = [...this.controls.children].every((g) => g.hidden);
    }

    // renderPlan shows the plan a run waits on, with its acceptance.
    renderPlan() {
      const s = this.status;
      const waits = s && s.class && s.class.waiting_for === "plan";
      this.planBox.hidden = !waits;
      if (!waits) return U.clear(this.planBox);
      if (this.planBox.dataset.plan === s.pending_plan && this.planBox.firstChild) return;
      this.planBox.dataset.plan = s.pending_plan || "";
      const prof = select("permission-profile", AXES["permission-profile"], "(keep)", "permission profile");
      const profile = () => prof.querySelector("select").value;
      const flags = (auto) => {
        const f = {};
        if (auto) f.autonomous = true;
        if (profile()) f["permission-profile"] = profile();
        return { flags: f };
      };
      U.clear(this.planBox).append(
        el("h2", "The plan waits for you ", chip("waiting")),
        el("pre.plan", s.pending_plan || "(see the goals)"),
        el("div.answers", prof,
          el("button.primary.act-accept-auto", { type: "button", onclick: () => this.act("approve", flags(true)) }, "Accept and run autonomously"),
          el("button.act-accept", { type: "button", onclick: () => this.act("approve", flags(false)) }, "Accept")));
    }

    // renderWaiting shows the calls that wait for a person, with the
    // answers: allow, allow the tool for the run, allow read-only calls,
    // deny with a reason the model reads.
    renderWaiting() {
      const pend = this.transcript ? this.transcript.pending() : [];
      const key = pend.map((d) => d.call_id).join(",");
      if (this.waitBox.dataset.calls === key) return;
      this.waitBox.dataset.calls = key;
      U.clear(this.waitBox);
      this.waitBox.hidden = !pend.length;
      if (!pend.length) return;
      this.waitBox.append(el("h2", pend.length === 1 ? "A call waits for you " : pend.length + " calls wait for you ", chip("waiting")));
      for (const d of pend) {
        const rid = "deny-" + d.call_id;
        const reason = el("input", { type: "text", id: rid, placeholder: "why not (the model reads it)" });
        const call = { call: d.call_id };
        this.waitBox.append(el("div.waiting-call", { "data-call": d.call_id },
          el("p", el("b.tool", d.tool), " ", el("code", d.call_id), " ", el("span.args", Transcript.short(d.tool, d.args))),
          el("pre.code", JSON.stringify(d.args, null, 2)),
          el("div.answers",
            el("button.primary.act-allow", { type: "button", onclick: () => this.act("approve", { flags: call }) }, "Allow"),
            el("button.act-allow-run", { type: "button", onclick: () => this.act("approve", { flags: { ...call, "for-run": true } }) }, "Allow " + d.tool + " for the run"),
            d.read_only ? el("button.act-allow-ro", { type: "button", onclick: () => this.act("approve", { flags: { ...call, "read-only": true } }) }, "Allow read-only calls") : "",
            el("label.field.inline", { for: rid }, el("span", "reason"), reason),
            ...[["Deny", false], ["Deny " + d.tool + " for the run", true]].map(([label, forRun]) =>
              el("button.danger" + (forRun ? ".act-deny-run" : ".act-deny"), { type: "button", onclick: () => {
                // The model reads the reason: a denial says why.
                if (!reason.value.trim()) {
                  reason.focus();
                  U.notice("Say why in the reason field: the model reads it.", "error");
                  return;
                }
                this.act("deny", { args: [reason.value.trim()], flags: forRun ? { ...call, "for-run": true } : call });
              } }, label)))));
      }
    }

    async loadGoals() {
      this.goalsStale = false;
      try {
        const g = await API.request("GET", "/api/runs/" + encodeURIComponent(this.id) + "/goals");
        Goals.render(this.goalsBox, this.id, g);
      } catch (e) {
        U.clear(this.goalsBox).append(el("p.dim", e.message));
      }
    }

    async loadDiff(q) {
      U.clear(this.diffBox).append(el("p.dim", "loading…"));
      try {
        const t = await API.request("GET", "/api/runs/" + encodeURIComponent(this.id) + "/diff" + q);
        U.clear(this.diffBox).append(U.diffView(t || "(no change)"));
      } catch (e) {
        U.clear(this.diffBox).append(el("p.err", e.message));
      }
    }

    renderDetails() {
      const s = this.status;
      U.clear(this.detailBox);
      if (!s) return;
      const row = (k, v) => [el("dt", k), el("dd", v === undefined || v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v))];
      const b = s.budgets || {}, u = s.used || {};
      this.detailBox.append(
        el("dl.kv", row("run", s.id), row("repository", s.repo), row("worktree", s.workdir), row("branch", s.workspace && s.workspace.branch),
          row("base", s.workspace && s.workspace.base), row("sandbox", s.sandbox), row("retries", (s.retries || {}).used + " of " + (s.retries || {}).max),
          row("turns", (u.turns || 0) + " of " + (b.max_turns || "?")), row("tokens", U.tokens(u.input_tokens) + " in, " + U.tokens(u.output_tokens) + " out"),
          row("refusals", s.refusals), row("next", (s.class || {}).next)),
        s.last_verify ? el("section", el("h3", "Last gate decision"), el("pre.code", JSON.stringify(s.last_verify, null, 2))) : "",
        s.plan ? el("section", el("h3", "Plan"), el("pre.plan", s.plan)) : "",
        el("h3", "Transitions"),
        el("ul.transitions", (s.transitions || []).map((t) => el("li", el("span.dim", U.clock(t.at) + " "), t.kind === "axis" ? t.axis + " " : "",
          t.from ? chip(t.from) : "", " → ", chip(t.to), el("span.dim", " by " + t.by + (t.reason ? ": " + t.reason : "") + (t.scope ? " (" + t.scope + ")" : ""))))));
    }

    close() {
      this.stream.stop();
      this.root.replaceChildren();
    }
  }

  // show opens run id on tab in root (or switches the tab of the open one).
  function show(root, id, tab) {
    if (cur && cur.id === id && cur.root === root && root.contains(cur.title)) {
      cur.showTab(TABS.includes(tab) ? tab : "transcript", false);
      return cur;
    }
    hide();
    U.clear(root);
    cur = new View(root, id, tab);
    cur.title.focus({ preventScroll: true });
    return cur;
  }

  function hide() {
    if (cur) cur.close();
    cur = null;
  }

  return { show, hide, current: () => cur, AXES, SCOPES, select };
})();
