// The trajectory stepper: steps through one trajectory in the browser, no server rerun.
// Every dataset string is set with textContent or setAttribute: never innerHTML.
// Streamlit calls the default export on mount and again whenever `data` changes (every
// rerun); state lives per parentElement so a rerun of the same task keeps the user's step.

const SVG = "http://www.w3.org/2000/svg";
const STATES = new WeakMap();
const PRELOAD_AHEAD = 3;
const PRELOAD_BEHIND = 1;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function svgEl(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  return node;
}

function urlStep() {
  return new URLSearchParams(window.location.search).get("step");
}

function urlTask() {
  return new URLSearchParams(window.location.search).get("task");
}

function urlWith(step) {
  const params = new URLSearchParams(window.location.search);
  params.set("step", String(step));
  return window.location.pathname + "?" + params.toString();
}

// Streamlit keeps its own copy of the query string and pushes it back after a rerun
// (e.g. a filter changed): for the task this stepper shows, its step wins.
function guardHistory() {
  if (window.__cuavbStepperGuard) return;
  window.__cuavbStepperGuard = true;
  for (const name of ["pushState", "replaceState"]) {
    const original = window.history[name].bind(window.history);
    window.history[name] = function (state, title, url) {
      const live = window.__cuavbStepper;
      if (live && live.task && typeof url === "string") {
        try {
          const target = new URL(url, window.location.href);
          const p = target.searchParams;
          if (p.get("task") === live.task && p.has("step") && p.get("step") !== String(live.step)) {
            p.set("step", String(live.step));
            url = target.pathname + "?" + p.toString() + target.hash;
          }
        } catch (e) {
          /* keep Streamlit's URL */
        }
      }
      return original(state, title, url);
    };
  }
}

function build(root) {
  const ui = {};
  ui.box = el("div", "stp");
  ui.box.setAttribute("role", "region");
  ui.box.setAttribute("aria-label", "Trajectory steps");

  const bar = el("div", "bar");
  ui.prev = el("button", "nav", "‹ Previous");
  ui.prev.type = "button";
  ui.prev.setAttribute("aria-keyshortcuts", "ArrowLeft");
  ui.next = el("button", "nav", "Next ›");
  ui.next.type = "button";
  ui.next.setAttribute("aria-keyshortcuts", "ArrowRight");
  ui.slider = el("input", "slider");
  ui.slider.type = "range";
  ui.slider.min = "0";
  ui.slider.setAttribute("aria-label", "Step");
  ui.counter = el("span", "counter");
  ui.counter.setAttribute("aria-live", "polite");
  ui.counter.setAttribute("aria-atomic", "true");
  ui.counter.setAttribute("role", "status");
  bar.append(ui.prev, ui.next, ui.slider, ui.counter);

  ui.main = el("div", "main");
  ui.shot = el("figure", "shot");
  ui.frame = el("div", "frame");
  ui.svg = svgEl("svg", { class: "layer", viewBox: "0 0 1440 900", preserveAspectRatio: "none" });
  ui.svg.setAttribute("aria-hidden", "true");
  ui.missing = el("div", "missing");
  ui.missing.setAttribute("role", "img");
  ui.frame.append(ui.svg);
  ui.caption = el("figcaption", "caption");
  ui.links = el("div", "links");
  ui.full = el("a", "link", "Full size");
  ui.full.target = "_blank";
  ui.full.rel = "noopener noreferrer";
  ui.dlShot = el("a", "link", "Screenshot (PNG)");
  ui.dlDrawn = el("a", "link", "With the action drawn (PNG)");
  ui.dlDrawn.href = "#";
  ui.links.append(ui.full, ui.dlShot, ui.dlDrawn);
  ui.shot.append(ui.frame, ui.missing, ui.caption, ui.links);

  ui.details = el("section", "details");
  ui.details.setAttribute("aria-label", "Step details");
  ui.details.tabIndex = 0; // it scrolls: reachable by keyboard (axe scrollable-region-focusable)
  ui.main.append(ui.shot, ui.details);

  // the verifier's evidence (issue 29): choose a criterion, jump to its most relevant screenshot
  ui.crit = el("div", "crit");
  ui.crit.setAttribute("role", "group");
  ui.crit.setAttribute("aria-label", "The verifier's evidence: jump to a criterion's most relevant screenshot");
  ui.crit.append(el("span", "critlead", "Verifier's evidence, criterion:"));
  ui.critList = el("span", "critlist");
  ui.critNote = el("span", "critnote");
  ui.critNote.setAttribute("aria-live", "polite");
  ui.crit.append(ui.critList, ui.critNote);
  ui.crit.hidden = true;

  // where uploaded verifiers say the agent went wrong (issue 41): a jump per verifier
  ui.fail = el("div", "crit fail");
  ui.fail.setAttribute("role", "group");
  ui.fail.setAttribute("aria-label", "Where the verifiers say the agent went wrong: jump to the step");
  ui.fail.append(el("span", "critlead", "Where it went wrong:"));
  ui.failList = el("span", "critlist");
  ui.failNote = el("span", "critnote");
  ui.fail.append(ui.failList, ui.failNote);
  ui.fail.hidden = true;

  ui.strip = el("div", "strip");
  ui.strip.setAttribute("role", "group");
  ui.strip.setAttribute("aria-label", "Filmstrip: jump to a step");

  ui.box.append(bar, ui.main, ui.crit, ui.fail, ui.strip);
  root.append(ui.box);
  return ui;
}

// ---------------------------------------------------------------------------- drawing

function label(svg, text, x, y, fill) {
  const size = 18;
  const width = Math.min(text.length * size * 0.6 + 16, 1400);
  let lx = x + 22;
  let ly = y + 22;
  if (lx + width > 1440) lx = Math.max(0, x - 22 - width);
  if (ly + size + 12 > 900) ly = Math.max(0, y - 22 - size - 12);
  const g = svgEl("g", { class: "label" });
  g.append(svgEl("rect", { x: lx, y: ly, width, height: size + 12, rx: 6, fill: fill || "#18181b" }));
  const t = svgEl("text", { x: lx + 8, y: ly + size + 2, "font-size": size, fill: "#fff" });
  t.textContent = text;
  g.append(t);
  svg.append(g);
}

function badge(svg, text, fill) {
  label(svg, text, -10, -10, fill);
}

function marker(svg, x, y, color, small) {
  const r = small ? 9 : 18;
  const g = svgEl("g", { class: "marker", "data-x": x, "data-y": y });
  g.append(svgEl("circle", { cx: x, cy: y, r: r + 1, fill: "none", stroke: "#fff", "stroke-width": 6 }));
  g.append(svgEl("circle", { class: "ring", cx: x, cy: y, r, fill: "none", stroke: color, "stroke-width": 3 }));
  const arm = Math.round(r * 1.6);
  for (const [x1, y1, x2, y2] of [[x - arm, y, x + arm, y], [x, y - arm, x, y + arm]]) {
    g.append(svgEl("line", { x1, y1, x2, y2, stroke: "#fff", "stroke-width": 3 }));
    g.append(svgEl("line", { x1, y1, x2, y2, stroke: color, "stroke-width": 1 }));
  }
  g.append(svgEl("circle", { class: "dot", cx: x, cy: y, r: 2, fill: color }));
  svg.append(g);
}

function arrow(svg, x1, y1, x2, y2, color) {
  const angle = Math.atan2(y2 - y1, x2 - x1);
  const head = 18;
  const hx = x2 - head * Math.cos(angle);
  const hy = y2 - head * Math.sin(angle);
  svg.append(svgEl("line", { x1, y1, x2: hx, y2: hy, stroke: "#fff", "stroke-width": 9 }));
  svg.append(svgEl("line", { x1, y1, x2: hx, y2: hy, stroke: color, "stroke-width": 5 }));
  const left = [hx + head * 0.6 * Math.sin(angle), hy - head * 0.6 * Math.cos(angle)];
  const right = [hx - head * 0.6 * Math.sin(angle), hy + head * 0.6 * Math.cos(angle)];
  svg.append(svgEl("polygon", { points: `${x2},${y2} ${left.join(",")} ${right.join(",")}`, fill: color, stroke: "#fff" }));
}

function clip(text, n) {
  const flat = String(text || "").split(/\s+/).join(" ");
  return flat.length > n ? flat.slice(0, n - 1) + "…" : flat;
}

function drawAction(svg, s) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  if (!s || s.index === undefined) return;
  const CLICK = "#ff0080";
  const MOVE = "#ff8c00";
  const SCROLL = "#00a0ff";
  const xy = s.xy && !s.off ? s.xy : null;
  if (s.tool === "type") {
    let text = `"${clip(s.text, 60)}"`;
    if (s.replace) text = "replace: " + text;
    if (s.enter) text += " ⏎";
    if (xy) {
      marker(svg, xy[0], xy[1], CLICK);
      label(svg, text, xy[0], xy[1]);
    } else badge(svg, "type " + text);
  } else if (s.tool === "scroll") {
    const [x, y] = xy || [720, 450];
    if (xy) marker(svg, x, y, SCROLL, true);
    if (s.scroll) {
      const up = s.scroll > 0;
      const len = Math.max(36, Math.min(Math.abs(s.scroll), 360));
      arrow(svg, x, y + (up ? -12 : 12), x, y + (up ? -len : len), SCROLL);
      label(svg, `${up ? "↑" : "↓"} ${Math.abs(s.scroll)} px`, x, y);
    } else label(svg, s.summary, x, y);
  } else if (s.from && xy) {
    marker(svg, s.from[0], s.from[1], CLICK, true);
    arrow(svg, s.from[0], s.from[1], xy[0], xy[1], CLICK);
    marker(svg, xy[0], xy[1], CLICK);
    label(svg, clip(s.summary, 80), xy[0], xy[1]);
  } else if (xy) {
    marker(svg, xy[0], xy[1], s.tool === "mouse_move" ? MOVE : CLICK);
    if (s.tool !== "left_click" && s.tool !== "mouse_move") badge(svg, clip(s.summary, 100));
  } else {
    const status = String(s.status || "").trim().toLowerCase();
    const fill = status === "success" ? "#16803d" : status === "failure" ? "#b91c1c" : "#18181b";
    let text = s.summary;
    if (s.tool === "key") text = "⌨ " + (s.keys || "?");
    badge(svg, clip(text, 100), fill);
  }
  if (s.off && s.xy) badge(svg, `off-screen (${s.xy[0]}, ${s.xy[1]})`);
}

// ---------------------------------------------------------------------------- details

function field(parent, title, value, cls) {
  parent.append(el("h2", "", title));
  const node = el(cls === "pre" ? "pre" : "p", cls || "", value);
  if (cls === "pre") node.tabIndex = 0; // a long one scrolls inside its box
  parent.append(node);
  return node;
}

function renderDetails(box, s, trim) {
  box.replaceChildren();
  if (trim) box.append(el("p", "muted trim", trim));
  if (s.index === undefined) {
    box.append(el("h2", "", "No action at this step"));
    box.append(el("p", "muted", s.note || ""));
    return;
  }
  const head = el("p", "action");
  head.append(el("strong", "", `Action ${s.index}: `));
  head.append(document.createTextNode(s.summary));
  box.append(head);
  if (s.raw_tool) box.append(el("p", "muted", `Logged as ${s.raw_tool} (an older name).`));
  field(box, "Thoughts", s.thoughts || "(no thoughts logged)", s.thoughts ? "pre" : "muted");
  const url = field(box, "Page URL", s.url || "(not logged)", s.url ? "code" : "muted");
  if (s.url && s.url_tracked) {
    url.after(el("p", "muted", "Not logged for this step: the last URL known from an earlier step."));
  }
  if (s.time) field(box, "Time", s.time);
  field(box, "Arguments", s.args, "pre");
  for (const problem of s.problems || []) {
    const warn = el("p", "warn", problem);
    warn.setAttribute("role", "note");
    box.append(warn);
  }
}

// ---------------------------------------------------------------------------- images

function image(state, url) {
  let img = state.images.get(url);
  if (!img) {
    img = new Image();
    img.decoding = "async";
    img.fetchPriority = "high";
    img.className = "shotimg";
    img.src = url;
    img.ready = img.decode().catch(() => {});
    state.images.set(url, img);
  }
  return img;
}

// Fetch and decode the neighbours one after another, the next step first, so the next
// screenshot does not share the decoder with three others; a newer step restarts it.
async function preload(state, step) {
  const d = state.data;
  const token = (state.preloading = (state.preloading || 0) + 1);
  const order = [];
  for (let k = 1; k <= PRELOAD_AHEAD; k += 1) order.push(step + k);
  for (let k = 1; k <= PRELOAD_BEHIND; k += 1) order.push(step - k);
  for (const k of order) {
    if (state.preloading !== token || state.data !== d) return;
    const s = d.steps[k];
    if (s && s.shot !== null && d.shots[s.shot]) await image(state, d.shots[s.shot]).ready;
  }
}

function drawnPng(state, event) {
  event.preventDefault();
  const d = state.data;
  const s = d.steps[state.step];
  const url = s && s.shot !== null ? d.shots[s.shot] : null;
  if (!url) return;
  const img = image(state, url);
  const w = img.naturalWidth || 1440;
  const h = img.naturalHeight || 900;
  const layer = state.ui.svg.cloneNode(true);
  layer.setAttribute("xmlns", SVG);
  layer.setAttribute("width", String(w));
  layer.setAttribute("height", String(h));
  const blob = new Blob([new XMLSerializer().serializeToString(layer)], { type: "image/svg+xml" });
  const overlay = new Image();
  const layerUrl = URL.createObjectURL(blob);
  overlay.onload = () => {
    const canvas = document.createElement("canvas");
    canvas.width = w;
    canvas.height = h;
    const ctx = canvas.getContext("2d");
    ctx.drawImage(img, 0, 0, w, h);
    ctx.drawImage(overlay, 0, 0, w, h);
    URL.revokeObjectURL(layerUrl);
    canvas.toBlob((png) => {
      if (!png) return;
      const a = document.createElement("a");
      a.href = URL.createObjectURL(png);
      a.download = `${d.name}_step${state.step}_action.png`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    }, "image/png");
  };
  overlay.src = layerUrl;
}

// ---------------------------------------------------------------------------- stepping

function show(state, step, how) {
  const d = state.data;
  const last = d.steps.length - 1;
  step = Math.min(Math.max(Number(step) || 0, 0), last);
  const ui = state.ui;
  const s = d.steps[step];
  state.step = step;
  window.__cuavbStepper = { task: d.task, step };

  const url = s.shot !== null ? d.shots[s.shot] : null;
  const problem = s.shot !== null ? d.problems[s.shot] : "No screenshot is stored for this step.";
  const current = ui.frame.querySelector("img.shotimg");
  if (url) {
    const img = image(state, url);
    img.alt = s.alt;
    img.setAttribute("data-step", String(step));
    if (current !== img) {
      if (current) current.replaceWith(img);
      else ui.frame.prepend(img);
    }
    ui.frame.hidden = false;
    drawAction(ui.svg, s);
    ui.full.href = url;
    ui.dlShot.href = url;
    ui.dlShot.setAttribute("download", `${d.name}_step${step}.png`);
    ui.links.hidden = false;
  } else {
    if (current) current.remove();
    ui.frame.hidden = true;
    ui.links.hidden = true;
  }
  ui.missing.hidden = Boolean(url) || state.logOnly;
  ui.missing.textContent = problem && !url ? problem : "";
  ui.missing.setAttribute("aria-label", s.alt);
  ui.caption.textContent = s.caption;
  ui.counter.textContent = `Step ${step + 1} of ${last + 1}`; // 1-based; step= is 0-based
  ui.prev.disabled = step <= 0;
  ui.next.disabled = step >= last;
  ui.slider.value = String(step);
  ui.slider.setAttribute("aria-valuetext", `Step ${step + 1} of ${last + 1}`);
  renderDetails(ui.details, s, d.trim);
  for (const [k, b] of state.film.entries()) {
    if (k === step) b.setAttribute("aria-current", "step");
    else b.removeAttribute("aria-current");
  }
  const chosen = state.film.get(step);
  if (chosen && !ui.strip.hidden) {
    // scroll the strip only (scrollIntoView would also scroll the page)
    const left = chosen.offsetLeft - (ui.strip.clientWidth - chosen.offsetWidth) / 2;
    ui.strip.scrollLeft = Math.max(0, left);
  }
  critNote(state);
  if (how === "user" && urlStep() !== String(step)) {
    window.history.pushState(window.history.state, "", urlWith(step));
  }
  preload(state, step);
}

function fillStrip(state) {
  const d = state.data;
  const ui = state.ui;
  ui.strip.replaceChildren();
  state.film = new Map();
  ui.strip.hidden = d.steps.length <= 1;
  const thumbs = [];
  for (const s of d.steps) {
    const b = el("button", "film");
    b.type = "button";
    b.setAttribute("data-step", String(s.p));
    b.title = s.caption;
    const thumb = s.shot !== null ? d.thumbs[s.shot] : null;
    if (thumb) {
      const img = el("img");
      img.loading = "lazy";
      img.decoding = "async";
      img.fetchPriority = "low";
      img.alt = s.alt;
      thumbs.push([img, thumb]);
      b.append(img);
    }
    b.append(el("span", "", `${s.p + 1} · ${s.tool || (s.p ? "end" : "start")}`));
    b.addEventListener("click", () => show(state, s.p, "user"));
    ui.strip.append(b);
    state.film.set(s.p, b);
  }
  // thumbnails wait until the browser is idle: the shown screenshot and its neighbours
  // first (they share the decoder)
  const later = window.requestIdleCallback || ((f) => setTimeout(f, 300));
  later(() => thumbs.forEach(([img, url]) => { img.src = url; }), { timeout: 2000 });
}

// ---------------------------------------------------------------------------- evidence

function criteria(state) {
  const ev = state.data.evidence;
  return ev && Array.isArray(ev.criteria) ? ev.criteria : [];
}

function chosenCriterion(state) {
  return criteria(state).find((c) => c.i === state.criterion) || null;
}

function fillCriteria(state) {
  const ui = state.ui;
  const list = criteria(state);
  ui.critList.replaceChildren();
  state.critButtons = new Map();
  ui.crit.hidden = list.length === 0;
  if (!chosenCriterion(state)) state.criterion = null;
  for (const c of list) {
    const b = el("button", "critbtn", c.label);
    b.type = "button";
    b.setAttribute("data-criterion", String(c.i));
    b.setAttribute("aria-pressed", "false");
    const best = c.best === null || c.best === undefined ? "none" : `screenshot ${c.best}`;
    b.title = `${c.label}: most relevant ${best}; chosen: ${c.chosen.join(", ") || "none"}`;
    b.addEventListener("click", () => chooseCriterion(state, c.i));
    ui.critList.append(b);
    state.critButtons.set(c.i, b);
  }
  markFilmstrip(state);
}

function chooseCriterion(state, i) {
  state.criterion = i;
  markFilmstrip(state);
  const c = chosenCriterion(state);
  if (c && c.step !== null && c.step !== undefined) show(state, c.step, "user");
  else critNote(state);
}

// Each criterion's chosen screenshots on the filmstrip: with a criterion chosen, its own
// (ranked, most relevant first); otherwise every chosen screenshot names its criteria.
function markFilmstrip(state) {
  const chosen = chosenCriterion(state);
  for (const [i, b] of state.critButtons || []) {
    b.setAttribute("aria-pressed", String(i === state.criterion));
  }
  const list = criteria(state);
  for (const [p, b] of state.film || []) {
    const old = b.querySelector(".mark");
    if (old) old.remove();
    b.classList.remove("chosen");
    const shot = state.data.steps[p] ? state.data.steps[p].shot : null;
    if (shot === null || shot === undefined) continue;
    let text = "";
    if (chosen) {
      const rank = chosen.chosen.indexOf(shot);
      if (rank >= 0) text = `★ evidence #${rank + 1}`;
    } else {
      const mine = list.filter((c) => c.chosen.includes(shot)).map((c) => c.i + 1);
      if (mine.length) text = `★ criteria ${mine.join(", ")}`;
    }
    if (!text) continue;
    b.classList.add("chosen");
    b.append(el("span", "mark", text));
  }
}

// ---------------------------------------------------------------------------- failure steps

function failures(state) {
  const list = state.data.failures;
  const n = state.data.steps.length;
  return Array.isArray(list) ? list.filter((f) => Number.isInteger(f.step) && f.step >= 0 && f.step < n) : [];
}

// A button per verifier that jumps to its first failure step, a mark on that step's
// filmstrip frame, and with two or more the distance between their steps.
function fillFailures(state) {
  const ui = state.ui;
  const list = failures(state);
  ui.failList.replaceChildren();
  ui.fail.hidden = list.length === 0;
  for (const f of list) {
    const b = el("button", "critbtn failbtn", `⚑ ${f.name}: step ${f.step + 1}`);
    b.type = "button";
    b.setAttribute("data-failure-step", String(f.step));
    b.title = `${f.name}: the agent went wrong at step ${f.step + 1} (step=${f.step} in the link)`;
    b.addEventListener("click", () => show(state, f.step, "user"));
    ui.failList.append(b);
  }
  const notes = [];
  for (let a = 0; a < list.length; a++) {
    for (let b = a + 1; b < list.length; b++) {
      const d = Math.abs(list[a].step - list[b].step);
      notes.push(`${list[a].name} and ${list[b].name}: ${d} step${d === 1 ? "" : "s"} apart`);
    }
  }
  ui.failNote.textContent = notes.join("; ");
  for (const [, b] of state.film || []) {
    b.querySelectorAll(".failmark").forEach((m) => m.remove());
    b.classList.remove("failed");
  }
  for (const f of list) {
    const b = state.film ? state.film.get(f.step) : null;
    if (!b) continue;
    b.classList.add("failed");
    b.append(el("span", "failmark", `⚑ ${f.name}: the agent went wrong here`));
  }
}

function critNote(state) {
  const ui = state.ui;
  const c = chosenCriterion(state);
  if (!c) {
    ui.critNote.textContent = "";
    return;
  }
  const s = state.data.steps[state.step];
  const shot = s ? s.shot : null;
  const ev = state.data.evidence;
  const row = shot !== null && ev.relevance ? ev.relevance[String(shot)] : null;
  const r = row && row[String(c.i)] !== undefined ? row[String(c.i)] : null;
  const parts = [];
  if (c.best === null || c.best === undefined) parts.push("the verifier names no screenshot for it");
  else if (c.step === null || c.step === undefined) parts.push(`its most relevant screenshot ${c.best} is past this trajectory's steps`);
  else if (!c.stored) parts.push(`its most relevant screenshot ${c.best} is not stored`);
  if (shot !== null && shot !== undefined) {
    const rank = c.chosen.indexOf(shot);
    let here = `screenshot ${shot}`;
    if (r !== null) here += `: relevance ${r} of 10`;
    here += rank >= 0 ? `, chosen #${rank + 1} of ${c.chosen.length}` : ", not chosen";
    parts.push(here);
  }
  ui.critNote.textContent = parts.join("; ");
}

// What the screenshots and the filmstrip are drawn from: when it changes for the same task
// (a Retry after a failed fetch, a screenshot cache that filled in), they are redrawn.
function mediaKey(data) {
  return JSON.stringify([data.shots, data.thumbs, data.steps.length]);
}

function layout(state, data) {
  state.data = data;
  state.media = mediaKey(data);
  state.logOnly = data.shots.length === 0;
  state.ui.shot.hidden = state.logOnly;
  state.ui.main.classList.toggle("logonly", state.logOnly);
  state.ui.slider.max = String(data.steps.length - 1);
  state.ui.slider.hidden = data.steps.length <= 1;
  fillStrip(state);
  fillCriteria(state);
  fillFailures(state);
}

function load(state, data) {
  state.task = data.task;
  state.ui.box.setAttribute("data-task", data.task);
  state.images = new Map();
  state.jump = data.jump ? data.jump[0] : null;
  state.criterion = null;
  layout(state, data);
  show(state, data.step, "init");
}

export default function (component) {
  const { data, parentElement } = component;
  if (!data || !Array.isArray(data.steps) || data.steps.length === 0) return;
  guardHistory();
  let state = STATES.get(parentElement);
  if (!state) {
    state = { ui: build(parentElement) };
    STATES.set(parentElement, state);
    const ui = state.ui;
    ui.prev.addEventListener("click", () => show(state, state.step - 1, "user"));
    ui.next.addEventListener("click", () => show(state, state.step + 1, "user"));
    ui.slider.addEventListener("input", () => show(state, ui.slider.value, "user"));
    ui.dlDrawn.addEventListener("click", (e) => drawnPng(state, e));
    state.onKey = (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
      const target = event.composedPath()[0];
      if (target === ui.slider) return; // the slider steps by itself
      const tag = target && target.tagName ? target.tagName.toLowerCase() : "";
      const editable = target && target.isContentEditable;
      const role = target && target.getAttribute ? target.getAttribute("role") : "";
      if (["input", "textarea", "select"].includes(tag) || editable) return;
      if (["slider", "combobox", "listbox", "option", "textbox", "spinbutton", "tab"].includes(role)) return;
      event.preventDefault();
      show(state, state.step + (event.key === "ArrowRight" ? 1 : -1), "user");
    };
    state.onPop = () => {
      if (urlTask() === state.task && urlStep() !== null) show(state, urlStep(), "history");
    };
    document.addEventListener("keydown", state.onKey);
    window.addEventListener("popstate", state.onPop);
  }
  if (state.task !== data.task) {
    load(state, data);
  } else {
    // same task after a rerun: keep the user's step; the data may have new URLs
    const jump = data.jump ? data.jump[0] : null;
    if (mediaKey(data) !== state.media) layout(state, data);
    else {
      const evidence = JSON.stringify(state.data.evidence || null);
      const failed = JSON.stringify(state.data.failures || null);
      state.data = data;
      if (JSON.stringify(data.evidence || null) !== evidence) fillCriteria(state);
      if (JSON.stringify(data.failures || null) !== failed) fillFailures(state);
    }
    if (jump !== null && jump !== state.jump) {
      state.jump = jump;
      show(state, data.jump[1], "user");
    } else {
      show(state, state.step, "rerun");
    }
  }
  return () => {
    document.removeEventListener("keydown", state.onKey);
    window.removeEventListener("popstate", state.onPop);
    STATES.delete(parentElement);
    if (window.__cuavbStepper && window.__cuavbStepper.task === state.task) {
      window.__cuavbStepper = null;
    }
  };
}
