// goals.js: a run's goals and criteria with their evidence (ultra goals
// --json): screenshots of the browser channel inline, transcripts and
// receipts as text on demand. Evidence is fetched with the token: images
// become blob: addresses, text is shown as text, never as a page.
"use strict";

const Goals = (() => {
  const { el, chip } = U;
  const images = new Map(); // evidence address → blob: address (files never change)

  // evidencePath is the API address of an evidence file from its path in
  // ultra goals --json (.ultra/state/evidence/RUN/GOAL/CRITERION/LABEL/NAME).
  function evidencePath(run, p) {
    const marker = "/evidence/" + run + "/";
    const i = p.indexOf(marker);
    if (i < 0) return "";
    return "/api/runs/" + encodeURIComponent(run) + "/evidence/" + p.slice(i + marker.length).split("/").map(encodeURIComponent).join("/");
  }

  const isImage = (name) => /\.(png|jpe?g|gif|webp)$/i.test(name);

  function image(src, alt) {
    const img = el("img.shot", { alt, loading: "lazy" });
    const fig = el("figure.evidence-image", img, el("figcaption", alt));
    const known = images.get(src);
    if (known) img.src = known;
    else {
      API.blob(src).then((b) => {
        const u = URL.createObjectURL(b);
        images.set(src, u);
        img.src = u;
      }).catch((e) => fig.append(el("p.err", "could not load: " + e.message)));
    }
    return fig;
  }

  function textFile(src, name, bytes) {
    const pre = el("pre.out", "…");
    const d = el("details.evidence-text", el("summary", name, bytes ? el("span.dim", " " + bytes + " bytes") : ""), pre);
    let loaded = false;
    d.addEventListener("toggle", () => {
      if (!d.open || loaded) return;
      loaded = true;
      API.request("GET", src).then((t) => { pre.textContent = t; }).catch((e) => { pre.textContent = e.message; loaded = false; });
    });
    return d;
  }

  function files(run, list, label) {
    if (!list || !list.length) return "";
    return el("div.evidence", { "aria-label": label },
      list.map((f) => {
        const src = evidencePath(run, f.path || "");
        if (!src) return el("p.dim", f.name);
        return isImage(f.name) ? image(src, f.name + " (" + label + ")") : textFile(src, f.name, f.bytes);
      }));
  }

  function criterion(run, c) {
    const ev = c.capturedEvidence || {};
    const base = c.base;
    return el("li.criterion", { "data-criterion": c.id },
      el("div.crit-head", el("b", c.id), " ", chip(c.status, "criterion"), " ",
        el("span.dim", "[" + [c.userModel, c.surface, c.channel].filter(Boolean).join(", ") + "]"),
        c.expect ? el("span.dim", " " + c.expect.replaceAll("_", " ")) : ""),
      el("p", c.scenario),
      ev.summary ? el("p.summary", ev.summary) : "",
      ev.receipt ? el("p.receipt.dim", "receipt: " + ev.receipt) : "",
      files(run, ev.files, "evidence"),
      base ? el("details.base", el("summary", "On the base tree: ", chip(base.status)), el("p", base.summary || ""), files(run, base.files, "base tree")) : "");
  }

  // render fills root with the goals of g (ultra goals --json).
  function render(root, run, g) {
    U.clear(root);
    if (!g || !g.goals || !g.goals.length) {
      root.append(el("p.dim", "No goals yet."));
      return;
    }
    if (g.accepted) root.append(el("p.dim", "Accepted by " + g.accepted.by + " " + U.ago(g.accepted.at)));
    for (const goal of g.goals) {
      const crits = goal.successCriteria || [];
      const passed = crits.filter((c) => c.status === "pass").length;
      root.append(el("section.card.goal", { "data-goal": goal.id },
        el("h3", goal.title, " ", chip(goal.status, "goal"), el("span.dim", " " + passed + "/" + crits.length + " criteria pass")),
        el("p.dim", goal.id + (goal.attempt ? " · attempt " + goal.attempt : "")),
        goal.objective ? el("p", goal.objective) : "",
        el("ul.criteria", crits.map((c) => criterion(run, c)))));
    }
  }

  return { render, evidencePath };
})();
