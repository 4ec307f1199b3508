// The experimenter console's page: draws what the server pushes, sends what the experimenter does.
// Plain JavaScript, no build step. Every text from the game or the model goes in with textContent.
// Geometry lives on the server: the editor asks it ("check") for outlines, collisions and repairs.
"use strict";

const PIECES = ["Red", "Cream", "Blue", "Green", "Yellow", "Purple", "Brown"];
const PX_PER_UNIT_X = 3.37, PX_PER_UNIT_Y = 3.22;   // world pixels per board unit (x right, y up)
const BOARD = [523, 72, 337, 322];                   // the board in world pixels: x, y (top), width, height
const SVG_NS = "http://www.w3.org/2000/svg";

const games = new Map();   // id -> {data, el, edit, check, ...}
let socket = null;
let retryMs = 500;

function who() {
  return (document.getElementById("who").value || "experimenter").trim().slice(0, 40) || "experimenter";
}

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function notice(text) {
  const el = document.getElementById("notice");
  el.textContent = text;
  el.hidden = !text;
  clearTimeout(notice.timer);
  if (text) notice.timer = setTimeout(() => { el.hidden = true; }, 6000);
}

function connect() {
  const status = document.getElementById("status");
  socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  socket.onopen = () => { status.dataset.state = "open"; status.textContent = "live"; retryMs = 500; };
  socket.onclose = () => {
    status.dataset.state = "closed";
    status.textContent = "disconnected; reconnecting…";
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 5000);
  };
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "snapshot") {
      for (const id of [...games.keys()]) if (!message.games.some((g) => g.id === id)) removeGame(id);
      for (const g of message.games) updateGame(g);
      renderStudy(message.study);
    } else if (message.type === "study") {
      renderStudy(message.study);
    } else if (message.type === "game") {
      updateGame(message.game);
    } else if (message.type === "gone") {
      removeGame(message.game);
    } else if (message.type === "checked") {
      checked(message.game, message.seq, message.result);
    } else if (message.type === "notice") {
      notice(message.text);
    }
  };
}

// ---------------------------------------------------------------- games

function removeGame(id) {
  const g = games.get(id);
  if (g) { g.el.remove(); games.delete(id); }
  document.getElementById("empty").hidden = games.size > 0;
}

function q(g, selector) { return g.el.querySelector(selector); }

function createGame(data) {
  const el = document.getElementById("game-template").content.firstElementChild.cloneNode(true);
  el.dataset.game = data.id;
  const g = {id: data.id, el, data, edit: null, reviewId: null, seq: 0, inFlight: false, lastCheck: null,
             drag: null, deadlines: new Map(), turnBase: null, imageVersions: {}};
  games.set(data.id, g);
  // Games keep the order they connected in, whatever order their updates arrive in.
  const later = [...games.values()].find((o) => o !== g && o.data.started > data.started);
  document.getElementById("games").insertBefore(el, later ? later.el : null);
  document.getElementById("empty").hidden = true;
  const svg = q(g, ".overlay");
  svg.setAttribute("viewBox", data.viewbox.join(" "));
  for (const b of el.querySelectorAll(".modes button")) {
    b.addEventListener("click", () => send({type: "mode", game: g.id, mode: b.dataset.mode, who: who()}));
  }
  const select = q(g, ".ed-piece");
  for (const name of PIECES) select.appendChild(new Option(name, name));
  select.addEventListener("change", () => pickPiece(g, select.value));
  q(g, ".ed-rot-left").addEventListener("click", () => turnBy(g, -45));
  q(g, ".ed-rot-right").addEventListener("click", () => turnBy(g, 45));
  for (const [cls, key] of [[".ed-x", "x"], [".ed-y", "y"], [".ed-rot", "rotation"]]) {
    q(g, cls).addEventListener("change", (e) => {
      const v = parseFloat(e.target.value);
      if (g.edit && g.edit.pose && Number.isFinite(v)) { g.edit.pose[key] = v; requestCheck(g); drawEditing(g); }
    });
  }
  q(g, ".btn-approve").addEventListener("click", () => verdict(g, "approve"));
  q(g, ".btn-skip").addEventListener("click", () => verdict(g, "skip"));
  q(g, ".btn-pass").addEventListener("click", () => verdict(g, "skip", {chat: q(g, ".ed-chat").value}));
  q(g, ".btn-suggest").addEventListener("click", () => verdict(g, "approve", chatIfWritten(g)));
  q(g, ".btn-edit").addEventListener("click", () => startEdit(g, "edit"));
  q(g, ".btn-replace").addEventListener("click", () => startEdit(g, "replace"));
  q(g, ".btn-send").addEventListener("click", () => sendEdit(g));
  q(g, ".say").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = q(g, ".say-text");
    if (input.value.trim()) send({type: "say", game: g.id, text: input.value.trim(), who: who()});
    input.value = "";
  });
  svg.addEventListener("pointerdown", (e) => pointerDown(g, e));
  svg.addEventListener("pointermove", (e) => pointerMove(g, e));
  svg.addEventListener("pointerup", (e) => pointerUp(g, e));
  svg.addEventListener("pointercancel", (e) => pointerUp(g, e));
  return g;
}

function updateGame(data) {
  const g = games.get(data.id) || createGame(data);
  g.data = data;
  const now = performance.now();
  for (const r of data.reviews) g.deadlines.set(r.id, {at: now + r.remaining_s * 1000, total: r.total_s});
  g.turnBase = data.turn ? {at: now - data.turn.elapsed_s * 1000, deadline: data.turn.deadline_s, turn: data.turn.turn} : null;
  render(g);
}

function render(g) {
  const d = g.data;
  g.el.classList.toggle("ended", !!d.ended);
  q(g, ".objective").textContent = d.objective || "(no objective yet)";
  q(g, ".meta").textContent = `${d.player} · game from ${d.peer} · session ${d.id}` +
    (d.spend_cap ? ` · offline planner: ${d.spend_cap}` : "");
  const tag = q(g, ".study-tag");
  tag.hidden = !d.study;
  if (d.study) {
    tag.textContent = `${d.study.participant} · ${d.study.condition} (condition ${d.study.order})` +
      (d.study.attempt > 1 ? ` · attempt ${d.study.attempt}` : "");
  }
  for (const b of g.el.querySelectorAll(".modes button")) {
    b.setAttribute("aria-pressed", String(b.dataset.mode === d.mode));
    b.disabled = !!d.ended;
  }
  q(g, ".game-status").textContent = d.ended ? `ended (${d.ended})` : (d.turn ? "agent's turn" : "partner's turn");
  for (const which of ["board", "drawer", "model_board", "model_drawer"]) {
    const img = q(g, `.${which}-img`);
    const version = d.images[which];
    if (version && g.imageVersions[which] !== version) {
      img.src = `/img/${encodeURIComponent(d.id)}/${which}?v=${version}`;
      g.imageVersions[which] = version;
    }
    img.hidden = !version;
  }
  q(g, ".model-view").hidden = !d.images.model_board && !d.images.model_drawer;
  q(g, ".off-board").textContent = d.off_board.length ? "In the drawer: " + d.off_board.join(", ") : "Drawer empty";
  q(g, ".tokens").textContent = `Tokens: ${d.tokens.prompt} prompt + ${d.tokens.completion} completion`;
  renderReview(g);
  drawBoard(g);
  renderChat(g);
  renderHistory(g);
  tick();
}

// ---------------------------------------------------------------- reviews

function currentReview(g) {
  const reviews = g.data.reviews;
  // The turn's move first; chat replies after it.
  return reviews.find((r) => r.kind !== "chat") || reviews[0] || null;
}

function renderReview(g) {
  const box = q(g, ".review");
  const r = currentReview(g);
  if (!r) {
    box.hidden = true;
    if (g.reviewId !== null) { g.reviewId = null; g.edit = null; g.lastCheck = null; }
    return;
  }
  box.hidden = false;
  box.dataset.review = r.id;
  box.dataset.kind = r.kind;
  box.classList.toggle("wizard", r.mode === "wizard");
  const isNew = g.reviewId !== r.id;
  if (isNew) {
    g.reviewId = r.id;
    g.edit = null;
    g.lastCheck = null;
    const chat = q(g, ".ed-chat");
    if (r.mode === "wizard") {
      chat.value = "";
      chat.placeholder = r.kind === "chat" ? (r.suggestion_text || "Your reply") : (r.suggestion ? r.suggestion.chat : "");
      if (r.kind !== "chat") startEdit(g, "wizard");
    } else {
      chat.value = r.kind === "chat" ? (r.text || "") : (r.proposal ? r.proposal.chat : "");
      chat.placeholder = "";
    }
    chat.readOnly = r.mode !== "wizard";
  }
  const turn = r.turn ? ` (turn ${r.turn})` : "";
  let title, proposal = "", reasoning = "";
  if (r.mode === "wizard") {
    title = r.kind === "chat" ? "Wizard: reply to the participant" : `Wizard: your move${turn}`;
    if (r.kind === "chat") proposal = r.suggestion_text ? `Planner suggests: “${r.suggestion_text}”` : "";
    else if (r.suggestion) { proposal = "Planner suggests: " + describe(r.suggestion); reasoning = r.suggestion.reasoning; }
    else proposal = "The planner has no suggestion.";
  } else {
    title = r.kind === "chat" ? "The agent's chat reply waits for you" :
      (r.kind === "adjust" ? `The agent's corrected move waits for you${turn}` : `The agent's move waits for you${turn}`);
    if (r.kind !== "chat" && r.proposal) { proposal = `Agent (${r.proposal.source}) proposes: ` + describe(r.proposal); reasoning = r.proposal.reasoning; }
  }
  q(g, ".review-title").textContent = title;
  q(g, ".review-message").textContent = r.message ? `Participant: “${r.message}”` : "";
  q(g, ".review-proposal").textContent = proposal;
  const details = q(g, ".review-reasoning");
  details.hidden = !reasoning;
  details.querySelector("pre").textContent = reasoning || "";
  const wizard = r.mode === "wizard", chatOnly = r.kind === "chat", editing = !!g.edit;
  const show = (cls, on) => { q(g, cls).hidden = !on; };
  show(".btn-approve", !wizard && !editing);
  show(".btn-edit", !wizard && !editing);
  show(".btn-replace", !wizard && !editing && !chatOnly);
  show(".btn-skip", !wizard);
  show(".btn-suggest", wizard && (chatOnly ? !!r.suggestion_text : !!(r.suggestion && r.suggestion.pose)));
  show(".btn-send", wizard || editing);
  show(".btn-pass", wizard);
  q(g, ".btn-send").textContent = wizard ? (chatOnly ? "Send reply" : "Send move") : "Send";
  q(g, ".btn-suggest").textContent = chatOnly ? "Use suggestion" : "Play suggestion";
  q(g, ".editor").hidden = !(g.edit && g.edit.pose);
}

function describe(decision) {
  const p = decision.pose;
  const move = p ? `${p.piece} to (${p.x.toFixed(1)}, ${p.y.toFixed(1)}) at ${p.rotation}°` : "pass";
  return decision.chat ? `${move}, saying “${decision.chat}”` : move;
}

function chatIfWritten(g) {
  const r = currentReview(g);
  const text = q(g, ".ed-chat").value;
  if (r && r.kind === "chat") return {chat: text || r.suggestion_text || ""};
  return text ? {chat: text} : {};
}

function startEdit(g, action) {
  const r = currentReview(g);
  if (!r) return;
  const chat = q(g, ".ed-chat");
  chat.readOnly = false;
  if (action === "replace") chat.value = "";
  let pose = null;
  if (r.kind !== "chat") {
    const base = r.mode === "wizard" ? (r.suggestion && r.suggestion.pose) : (r.proposal && r.proposal.pose);
    pose = base ? {...base} : defaultPose(g);
  }
  g.edit = {action, pose};
  if (pose) { fillInputs(g); requestCheck(g); }
  chat.focus();
  renderReview(g);
  drawBoard(g);
}

function defaultPose(g) {
  const piece = g.data.off_board[0] || PIECES[0];
  return {piece, x: 50, y: 50, rotation: 0};
}

function pickPiece(g, name) {
  if (!g.edit || !g.edit.pose) return;
  const onBoard = g.data.pieces.find((p) => p.pose.piece === name);
  g.edit.pose = onBoard ? {...onBoard.pose} : {piece: name, x: g.edit.pose.x, y: g.edit.pose.y, rotation: g.edit.pose.rotation};
  g.lastCheck = null;
  fillInputs(g);
  requestCheck(g);
  drawBoard(g);
}

function turnBy(g, degrees) {
  if (!g.edit || !g.edit.pose) return;
  g.edit.pose.rotation = ((Math.round(g.edit.pose.rotation / 45) * 45 + degrees) % 360 + 360) % 360;
  fillInputs(g);
  requestCheck(g);
  drawBoard(g);
}

function fillInputs(g) {
  const p = g.edit.pose;
  q(g, ".ed-piece").value = p.piece;
  q(g, ".ed-x").value = p.x.toFixed(2);
  q(g, ".ed-y").value = p.y.toFixed(2);
  q(g, ".ed-rot").value = String(p.rotation);
}

function sendEdit(g) {
  const r = currentReview(g);
  if (!r) return;
  const chat = q(g, ".ed-chat").value;
  if (r.kind === "chat") { verdict(g, r.mode === "wizard" ? "wizard" : "edit", {chat}); return; }
  const action = r.mode === "wizard" ? "wizard" : (g.edit ? g.edit.action : "edit");
  const pose = g.edit && g.edit.pose ? roundPose(g.edit.pose) : null;
  verdict(g, action, pose ? {pose, chat} : {chat});
}

function roundPose(p) {
  return {piece: p.piece, x: Math.round(p.x * 1000) / 1000, y: Math.round(p.y * 1000) / 1000, rotation: p.rotation};
}

function verdict(g, action, extra = {}) {
  const r = currentReview(g);
  if (!r) return;
  send({type: "verdict", game: g.id, review: r.id, action, who: who(), ...extra});
}

// ---------------------------------------------------------------- the live check

function requestCheck(g) {
  if (!g.edit || !g.edit.pose) return;
  if (g.inFlight) { g.checkAgain = true; return; }
  g.inFlight = true;
  g.checkAgain = false;
  g.seq += 1;
  send({type: "check", game: g.id, seq: g.seq, pose: roundPose(g.edit.pose)});
}

function checked(id, seq, result) {
  const g = games.get(id);
  if (!g) return;
  g.inFlight = false;
  if (seq === g.seq) g.lastCheck = result;
  if (g.checkAgain) requestCheck(g);
  drawBoard(g);
  const status = q(g, ".ed-status");
  const c = g.lastCheck;
  if (!c) return;
  const repaired = c.repaired ? `sent as ${c.repaired.piece} (${c.repaired.x.toFixed(1)}, ${c.repaired.y.toFixed(1)}) at ${c.repaired.rotation}°` : "no free spot: the turn would pass";
  if (c.collisions.length) {
    status.className = "ed-status bad";
    status.textContent = `Collides with ${c.collisions.join(", ")}: repaired on send, ${repaired}.`;
  } else if (c.too_close) {
    status.className = "ed-status warn";
    status.textContent = `Touching distance: nudged on send, ${repaired}.`;
  } else {
    status.className = "ed-status ok";
    status.textContent = "Clear: no collisions.";
  }
}

// ---------------------------------------------------------------- drawing

function polygon(points, cls) {
  const el = document.createElementNS(SVG_NS, "polygon");
  el.setAttribute("points", points.map((p) => p.join(",")).join(" "));
  el.setAttribute("class", cls);
  return el;
}

function shifted(outline, from, to) {
  const dx = (to.x - from.x) * PX_PER_UNIT_X, dy = -(to.y - from.y) * PX_PER_UNIT_Y;
  return outline.map(([x, y]) => [x + dx, y + dy]);
}

function drawBoard(g) {
  const svg = q(g, ".overlay");
  while (svg.firstChild) svg.firstChild.remove();
  const edge = document.createElementNS(SVG_NS, "rect");
  edge.setAttribute("x", BOARD[0]); edge.setAttribute("y", BOARD[1]);
  edge.setAttribute("width", BOARD[2]); edge.setAttribute("height", BOARD[3]);
  edge.setAttribute("class", "board-edge");
  svg.appendChild(edge);
  const editingPiece = g.edit && g.edit.pose ? g.edit.pose.piece : null;
  for (const p of g.data.pieces) {
    const el = polygon(p.outline, "piece" + (p.collisions.length ? " colliding" : ""));
    el.dataset.piece = p.pose.piece;
    if (p.pose.piece === editingPiece) el.style.opacity = "0.35";
    svg.appendChild(el);
  }
  const r = currentReview(g);
  if (!r && g.data.turn) {
    // Autonomous: the turn's latest decision until the game's state shows where the piece went.
    const last = g.data.turn.decisions[g.data.turn.decisions.length - 1];
    if (last && last.outline && last.pose) {
      const el = polygon(last.outline, "proposal");
      el.dataset.piece = last.pose.piece;
      svg.appendChild(el);
    }
  }
  if (r && !g.edit) {
    const shown = r.mode === "wizard" ? r.suggestion : r.proposal;
    if (shown && shown.outline) {
      const el = polygon(shown.outline, "proposal");
      el.dataset.piece = shown.pose.piece;
      svg.appendChild(el);
      const check = shown.check;
      if (check && check.repaired_outline && (check.collisions.length || check.too_close)) {
        svg.appendChild(polygon(check.repaired_outline, "repaired"));
      }
    }
  }
  drawEditing(g);
}

function drawEditing(g) {
  const svg = q(g, ".overlay");
  const old = svg.querySelectorAll(".editing, .edit-repaired");
  old.forEach((el) => el.remove());
  if (!g.edit || !g.edit.pose) return;
  const c = g.lastCheck, p = g.edit.pose;
  if (!c || c.pose.piece !== p.piece || c.pose.rotation !== ((p.rotation % 360) + 360) % 360) return;
  let cls = "editing";
  if (c.collisions.length) cls += " colliding"; else if (c.too_close) cls += " close";
  if (c.repaired_outline && (c.collisions.length || c.too_close) && samePlace(c.pose, p)) {
    const rep = polygon(c.repaired_outline, "repaired edit-repaired");
    svg.appendChild(rep);
  }
  const el = polygon(shifted(c.outline, c.pose, p), cls);
  el.dataset.piece = p.piece;
  svg.appendChild(el);
}

function samePlace(a, b) { return Math.abs(a.x - b.x) < 1e-3 && Math.abs(a.y - b.y) < 1e-3; }

// ---------------------------------------------------------------- dragging

function svgPoint(svg, event) {
  const pt = svg.createSVGPoint();
  pt.x = event.clientX; pt.y = event.clientY;
  return pt.matrixTransform(svg.getScreenCTM().inverse());
}

function pointerDown(g, event) {
  if (!g.edit || !g.edit.pose) return;
  const target = event.target;
  const piece = target.dataset ? target.dataset.piece : null;
  if (target.classList.contains("piece") && piece && piece !== g.edit.pose.piece) {
    pickPiece(g, piece);
    return;
  }
  if (!target.classList.contains("editing")) return;
  const svg = q(g, ".overlay");
  svg.setPointerCapture(event.pointerId);
  g.drag = {start: svgPoint(svg, event), pose: {...g.edit.pose}};
  event.preventDefault();
}

function pointerMove(g, event) {
  if (!g.drag) return;
  const p = svgPoint(q(g, ".overlay"), event);
  g.edit.pose.x = g.drag.pose.x + (p.x - g.drag.start.x) / PX_PER_UNIT_X;
  g.edit.pose.y = g.drag.pose.y - (p.y - g.drag.start.y) / PX_PER_UNIT_Y;
  fillInputs(g);
  drawEditing(g);
  requestCheck(g);
}

function pointerUp(g, event) {
  if (!g.drag) return;
  g.drag = null;
  requestCheck(g);
}

// ---------------------------------------------------------------- chat and history

function renderChat(g) {
  const log = q(g, ".chat-log");
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  log.replaceChildren(...g.data.chat.map((line) => {
    const li = document.createElement("li");
    const by = document.createElement("span");
    by.className = "by by-" + line.by.split(" ")[0];
    by.textContent = line.by + ":";
    li.append(by, document.createTextNode(line.text));
    return li;
  }));
  if (atBottom) log.scrollTop = log.scrollHeight;
}

function renderHistory(g) {
  const body = q(g, ".history tbody");
  const turns = g.data.turn ? [g.data.turn, ...g.data.history] : g.data.history;
  body.replaceChildren(...turns.map((t) => {
    const tr = document.createElement("tr");
    const last = t.decisions[t.decisions.length - 1];
    const repair = t.repairs[t.repairs.length - 1];
    const pose = repair && repair.repaired ? repair.repaired : (last ? last.pose : null);
    const move = pose ? `${pose.piece} (${pose.x.toFixed(1)}, ${pose.y.toFixed(1)}) ${pose.rotation}°` : (last ? "pass" : "…");
    // What was changed in the model's answer to play it, and the corrective re-asks sent.
    const salvage = [...(t.salvages || []).map((x) => `${x.salvage}: ${x.why}`),
      ...(t.reasks || []).map((p) => `re-asked (${p})`)].join("; ");
    const cells = [String(t.turn), last ? last.source : "…", move, salvage, last ? last.chat : "",
      t.interventions.map((i) => `${i.action} by ${i.who}`).join("; "),
      t.outcome || "running", t.seconds != null ? `${t.seconds.toFixed(1)} s` : "",
      t.tokens.prompt + t.tokens.completion ? `${t.tokens.prompt}+${t.tokens.completion}` : "–"];
    for (const text of cells) { const td = document.createElement("td"); td.textContent = text; tr.appendChild(td); }
    const td = document.createElement("td");
    const reasoning = t.decisions.map((x) => x.reasoning).filter(Boolean).join("\n---\n");
    if (reasoning) {
      const det = document.createElement("details");
      const sum = document.createElement("summary");
      sum.textContent = "show";
      const pre = document.createElement("pre");
      pre.textContent = reasoning;
      det.append(sum, pre);
      td.appendChild(det);
    }
    tr.appendChild(td);
    return tr;
  }));
}

// ---------------------------------------------------------------- the study

// A stored time (2026-11-29T09:23:10.722512Z) to the second, as the study's status prints it.
function when(stamp) {
  return stamp ? `${stamp.slice(0, 19).replace("T", " ")}Z` : "-";
}

// Who consented, whose page closed, who was dropped and why (what applies), as `study status` says it.
function participantNotes(p) {
  const notes = [];
  if (p.online || p.consent) notes.push(p.consent ? `consent ${p.consent} ${when(p.consent_at)}` : "consent -");
  if (p.left_at) notes.push(`page closed ${when(p.left_at)}, not back`);
  if (p.finished_page_at) notes.push(`saw the completion page ${when(p.finished_page_at)}`);
  if (p.state === "dropped") notes.push(`dropped ${when(p.dropped_at)}` + (p.dropped_why ? `: ${p.dropped_why}` : ""));
  return notes.join("; ");
}

function renderStudy(study) {
  const box = document.getElementById("study");
  box.hidden = !study;
  if (!study) return;
  const c = study.counts;
  document.getElementById("study-title").textContent =
    `Study ${study.study} (${study.design}, ${study.conditions.length} conditions, plan ${study.plan_sha256})`;
  const balance = document.getElementById("study-balance");
  balance.textContent = `${c.active} active, ${c.paused} paused, ${c.completed} completed, ${c.dropped} dropped out · ` +
    study.balance;
  balance.classList.toggle("balanced", study.balanced && c.completed > 0);
  const body = document.getElementById("study-participants");
  body.replaceChildren();
  // The newest first: the experimenter works with the latest participants.
  for (const p of [...study.participants].reverse()) {
    const row = document.createElement("tr");
    row.className = p.state;
    row.dataset.participant = p.id;
    const cell = (text) => { const td = document.createElement("td"); td.textContent = text; row.appendChild(td); return td; };
    cell(p.id);
    cell(p.state + (p.replaces ? ` (took ${p.replaces}'s sequence)` : ""));
    const order = cell("");
    order.className = "order";
    const per = p.games / Math.max(1, p.order.length);
    p.order.forEach((name, i) => {
      if (i) order.appendChild(document.createTextNode(" → "));
      const span = document.createElement("span");
      span.textContent = name;
      const done = p.completed >= (i + 1) * per;
      span.className = done ? "done" : (p.completed >= i * per && p.next_condition === name ? "now" : "");
      order.appendChild(span);
    });
    cell(`${p.completed} of ${p.games} games` + (p.attempts > p.completed ? ` (${p.attempts} started)` : ""));
    cell(p.next_condition || "");
    cell(p.place || "").className = "place";
    cell(p.last_text || "").className = "wrote";  // typed by the participant: text, never markup
    cell(participantNotes(p)).className = "notes";
    const actions = cell("");
    actions.className = "actions";
    const button = (label, action) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.dataset.action = action;
      b.addEventListener("click", () => {
        if (action === "drop" && !confirm(`Mark ${p.id} as dropped out? Their sequence goes to the next participant.`)) return;
        send({type: "study", action, participant: p.id, who: who()});
      });
      actions.appendChild(b);
    };
    if (p.state === "active") button("Pause", "pause");
    if (p.state === "paused") button("Resume", "resume");
    if (p.state === "active" || p.state === "paused") button("Drop out", "drop");
    body.appendChild(row);
  }
}

// ---------------------------------------------------------------- clocks

function tick() {
  const now = performance.now();
  for (const g of games.values()) {
    const r = currentReview(g);
    if (r) {
      const d = g.deadlines.get(r.id);
      const left = d ? Math.max(0, (d.at - now) / 1000) : 0;
      const cd = q(g, ".countdown");
      cd.textContent = left > 0 ? `${left.toFixed(1)} s left` : "time's up: sending the default";
      cd.classList.toggle("low", left < 5);
      q(g, ".countdown-bar div").style.width = d && d.total > 0 ? `${Math.min(100, 100 * left / d.total)}%` : "0%";
    }
    const line = q(g, ".turn-line");
    if (g.turnBase) {
      const elapsed = (now - g.turnBase.at) / 1000;
      line.textContent = `Agent's turn ${g.turnBase.turn}: ${elapsed.toFixed(1)} s of ${g.turnBase.deadline} s`;
    } else {
      line.textContent = g.data.ended ? "" : "Waiting for the game to hand the agent a turn";
    }
  }
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("study-next").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = document.getElementById("study-id");
    const id = input.value.trim();
    if (id) { send({type: "study", action: "next", participant: id, who: who()}); input.value = ""; }
  });
  connect();
  setInterval(tick, 100);
});
