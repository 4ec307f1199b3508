// The participant's page: consent, the study's questionnaires and each game of their sequence in
// the flow's order, then the completion. The link's code (the last part of the address) names the
// participant; each game gets its own ticket, handed to the game's frame in the address's fragment
// (never sent to the server as a URL). Every text the study gives is shown as text, never as HTML.
"use strict";

(function () {
  const code = window.location.pathname.split("/").pop();
  const WORDS = {
    en: {
      language: "Language", next: "Next", required: "(required)", optional: "(optional)",
      problems: "Please check these answers:", saving: "Saving...", oneMoment: "One moment.",
      withdraw: "Stop and delete my data", withdrawTitle: "Stop and delete your data?",
      withdrawText: "If you stop now, everything you answered and played in this study is deleted. "
        + "You cannot undo this.", withdrawYes: "Yes, stop and delete my data", withdrawNo: "No, go back",
      withdrawnTitle: "Your data has been deleted",
      withdrawnText: "You have left the study and your answers and games were deleted. If you came from Prolific, "
        + "please return your submission there. You may close this page.",
      thanks: "Thank you", done: "You have completed the study. Thank you for taking part!",
      code: "Your completion code: ", back: "You will be taken back in a few seconds. ", goBack: "Go back now",
      screenedTitle: "Thank you",
      screened: "Your participation has ended here, because some answers did not match the study's checks.",
      other: "Other:", otherText: "Please say what", game: "Game", of: "of", before: "Before you start",
      wrong: "Something went wrong", refused: "You did not agree to take part, so no game was played. You may close this page.",
      paused: "The study is paused for you. Reload this page in a little while.", wait: "Please wait",
      ended: "This link no longer takes part in the study. You may close this page.", endedTitle: "This link has ended",
      notOver: "The game is not over yet", backToGame: "Back to the game", continueGame: "I pressed Finish: continue",
      chosen: "chosen", notMoved: "not answered yet", invalidNumber: "a number",
      labPlay: "Play this game in the game window on this computer. When the game has ended, this page goes on "
        + "by itself.",
      idleWarn: "Are you still there? Without any activity your participation ends in about {s} seconds.",
      stillHere: "I am still here", timedOutTitle: "Your time ran out",
      timedOut: "Your participation ended because the page was left without activity for too long. If you came "
        + "from Prolific, please return your submission there. You may close this page.",
    },
    pt: {
      language: "Língua", next: "Seguinte", required: "(obrigatória)", optional: "(opcional)",
      problems: "Por favor verifique estas respostas:", saving: "A guardar...", oneMoment: "Um momento.",
      withdraw: "Parar e apagar os meus dados", withdrawTitle: "Parar e apagar os seus dados?",
      withdrawText: "Se parar agora, tudo o que respondeu e jogou neste estudo é apagado. Não é possível desfazer.",
      withdrawYes: "Sim, parar e apagar os meus dados", withdrawNo: "Não, voltar",
      withdrawnTitle: "Os seus dados foram apagados",
      withdrawnText: "Saiu do estudo e as suas respostas e jogos foram apagados. Se veio do Prolific, devolva lá a "
        + "sua participação (return). Pode fechar esta página.",
      thanks: "Obrigado", done: "Concluiu o estudo. Obrigado por ter participado!",
      code: "O seu código de conclusão: ", back: "Vai ser reencaminhado dentro de segundos. ", goBack: "Voltar agora",
      screenedTitle: "Obrigado",
      screened: "A sua participação termina aqui, porque algumas respostas não corresponderam às verificações do estudo.",
      other: "Outra:", otherText: "Diga qual", game: "Jogo", of: "de", before: "Antes de começar",
      wrong: "Algo correu mal", refused: "Não aceitou participar, por isso nenhum jogo foi jogado. Pode fechar esta página.",
      paused: "O estudo está em pausa para si. Recarregue esta página daqui a pouco.", wait: "Aguarde, por favor",
      ended: "Esta ligação já não faz parte do estudo. Pode fechar esta página.", endedTitle: "Esta ligação terminou",
      notOver: "O jogo ainda não terminou", backToGame: "Voltar ao jogo", continueGame: "Carreguei em Finish: continuar",
      chosen: "escolhido", notMoved: "ainda sem resposta", invalidNumber: "um número",
      labPlay: "Jogue este jogo na janela do jogo neste computador. Quando o jogo terminar, esta página avança "
        + "sozinha.",
      idleWarn: "Ainda está aí? Sem atividade, a sua participação termina dentro de cerca de {s} segundos.",
      stillHere: "Ainda estou aqui", timedOutTitle: "O seu tempo esgotou-se",
      timedOut: "A sua participação terminou porque a página ficou demasiado tempo sem atividade. Se veio do "
        + "Prolific, devolva lá a sua participação (return). Pode fechar esta página.",
    },
  };
  const fromLink = new URLSearchParams(window.location.search).get("lang");
  let language = fromLink && /^[a-z]{2,3}$/.test(fromLink) ? fromLink : null;
  let languages = [];
  function t(key) { return (WORDS[language] || WORDS.en)[key] || WORDS.en[key]; }
  const card = document.getElementById("card");
  const title = document.getElementById("title");
  const text = document.getElementById("text");
  const buttons = document.getElementById("buttons");
  const frame = document.getElementById("game");
  const progress = document.getElementById("progress");
  const gameNumber = document.getElementById("game-number");
  const proceed = document.getElementById("continue");
  const stopInGame = document.getElementById("withdraw-game");
  let ticket = null;
  let busy = false;

  async function call(path, body) {
    const response = await fetch(path, {
      method: "POST", cache: "no-store", credentials: "omit",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(Object.assign({ code: code }, body || {})),
    });
    if (response.status === 429) throw new Error("The study's server is busy; please wait a moment and reload.");
    if (response.status === 409) {  // the server did not see the game played: back to it
      const refused = await response.json();
      const err = new Error(refused.message || "The game has not been played yet.");
      err.notPlayed = true;
      throw err;
    }
    if (!response.ok) throw new Error((await response.text()) || ("error " + response.status));
    return response.json();
  }

  function say(heading, paragraphs) {
    clearTimeout(labTimer);
    card.querySelectorAll(".extras").forEach((bar) => bar.remove());
    frame.hidden = true;
    progress.hidden = true;
    card.hidden = false;
    title.textContent = heading;
    text.replaceChildren(...paragraphs.map((p) => {
      const el = document.createElement("p");
      el.textContent = p;
      return el;
    }));
    buttons.replaceChildren();
  }

  function button(label, primary, onClick) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    if (primary) b.className = "primary";
    b.addEventListener("click", () => { buttons.querySelectorAll("button").forEach((x) => { x.disabled = true; }); onClick(); });
    buttons.appendChild(b);
  }

  function stopGame() {
    ticket = null;
    frame.src = "about:blank";
    frame.hidden = true;
  }

  async function step() {
    if (busy) return;
    busy = true;
    try {
      show(await call("/api/visit", language ? { language: language } : {}));
    } catch (err) {
      say(t("wrong"), [String(err.message || err)]);
    } finally {
      busy = false;
    }
  }

  function show(visit) {
    clearTimeout(labTimer);
    armIdle(visit.idle);
    if (visit.language) language = visit.language;
    if (visit.languages) languages = visit.languages;
    document.documentElement.lang = language || "en";
    proceed.textContent = t("continueGame");
    if (visit.stage === "consent") {
      say(t("before"), visit.consent.text.split(/\n\s*\n/));
      button(visit.consent.agree, true, async () => { await call("/api/consent", { given: true }); step(); });
      button(visit.consent.decline, false, async () => { await call("/api/consent", { given: false }); step(); });
    } else if (visit.stage === "questionnaire") {
      questionnaire(visit.page);
    } else if (visit.stage === "play" && visit.lab) {
      labGame(visit);
    } else if (visit.stage === "play") {
      play(visit);
    } else if (visit.stage === "done") {
      done(visit, t("thanks"), t("done"));
    } else if (visit.stage === "screened_out") {
      done(visit, t("screenedTitle"), t("screened"));
    } else if (visit.stage === "withdrawn") {
      withdrawn();
    } else if (visit.stage === "timed_out") {
      say(t("timedOutTitle"), [t("timedOut")]);
    } else if (visit.stage === "refused") {
      say(t("thanks"), [t("refused")]);
    } else if (visit.stage === "paused") {
      say(t("wait"), [t("paused")]);
    } else {
      say(t("endedTitle"), [t("ended")]);
    }
    if (["questionnaire", "consent", "done", "screened_out"].includes(visit.stage) || (visit.stage === "play" && visit.lab)) {
      extras(visit.stage);
    }
  }

  // ---- in the lab: the game is played in the lab's game window; this page waits for it to be recorded

  let labTimer = null;

  function labGame(visit) {
    say(t("game") + " " + visit.game + " " + t("of") + " " + visit.games, [t("labPlay")]);
    const waitFor = async () => {
      try {
        const now = await call("/api/visit", {});
        if (now.stage !== "play" || now.game !== visit.game) { show(now); return; }
      } catch (err) { /* the agent may be restarting: ask again */ }
      labTimer = setTimeout(waitFor, 2000);
    };
    labTimer = setTimeout(waitFor, 2000);
  }

  // ---- the idle warning: the server times a participant out (the study's limits); this only warns

  let idleTimer = null;
  let idle = null;

  function armIdle(limits) {
    clearTimeout(idleTimer);
    const shown = document.getElementById("idle-warning");
    if (shown) shown.remove();
    idle = limits || null;
    if (idle) idleTimer = setTimeout(warnIdle, Math.max(0, idle.limit_s - idle.warn_s) * 1000);
  }

  function activity() { if (idle) armIdle(idle); }

  function warnIdle() {
    const box = field("div", { id: "idle-warning", className: "idle-warning" });
    box.setAttribute("role", "alertdialog");
    box.setAttribute("aria-labelledby", "idle-text");
    box.appendChild(field("p", { id: "idle-text", textContent: t("idleWarn").replace("{s}", String(Math.round(idle.warn_s))) }));
    const here = field("button", { type: "button", className: "primary", id: "still-here", textContent: t("stillHere") });
    here.addEventListener("click", async () => {
      box.remove();
      try {
        const now = await call("/api/visit", {});  // a sign of life the server counts
        if (now.stage !== "questionnaire" && now.stage !== "play" && now.stage !== "consent") { show(now); return; }
        armIdle(now.idle);
      } catch (err) { say(t("wrong"), [String(err.message || err)]); }
    });
    box.appendChild(here);
    document.body.appendChild(box);
    here.focus();
  }

  // ---- the language chooser and "stop and delete my data", on every page of the flow

  function extras(stage) {
    const bar = document.createElement("div");
    bar.className = "extras";
    if (languages.length > 1) {
      const label = document.createElement("label");
      label.textContent = t("language") + " ";
      const select = document.createElement("select");
      select.id = "language";
      for (const lang of languages) {
        const option = document.createElement("option");
        option.value = lang;
        option.textContent = { en: "English", pt: "Português" }[lang] || lang;
        option.selected = lang === language;
        select.appendChild(option);
      }
      select.addEventListener("change", () => { language = select.value; saveDraftNow().then(step); });
      label.appendChild(select);
      bar.appendChild(label);
    }
    if (stage !== "consent") {
      const stop = document.createElement("button");
      stop.type = "button";
      stop.id = "withdraw";
      stop.className = "quiet";
      stop.textContent = t("withdraw");
      stop.addEventListener("click", confirmWithdraw);
      bar.appendChild(stop);
    }
    card.appendChild(bar);
  }

  function confirmWithdraw() {
    stopGame();
    say(t("withdrawTitle"), [t("withdrawText")]);
    button(t("withdrawYes"), false, async () => {
      try {
        await call("/api/withdraw", { confirm: true });
        withdrawn();
      } catch (err) {
        say(t("wrong"), [String(err.message || err)]);
      }
    });
    button(t("withdrawNo"), true, step);
  }

  function withdrawn() {
    say(t("withdrawnTitle"), [t("withdrawnText")]);
  }

  // ---- a questionnaire page: one fieldset per item, saved as a draft as it is filled in

  let page = null;
  let draftTimer = null;

  function field(tag, props) {
    const el = document.createElement(tag);
    Object.assign(el, props || {});
    return el;
  }

  function questionnaire(view) {
    page = view;
    const draft = view.draft || { answers: {}, other: {} };
    say(view.title, view.intro ? view.intro.split(/\n\s*\n/) : []);
    const form = field("form", { id: "page", noValidate: true });
    const errors = field("div", { id: "problems", className: "problems", tabIndex: -1 });
    errors.setAttribute("role", "alert");
    errors.hidden = true;
    form.appendChild(errors);
    view.items.forEach((item, n) => form.appendChild(itemField(item, n, draft)));
    const submit = field("button", { type: "submit", className: "primary", textContent: t("next") });
    form.appendChild(submit);
    form.addEventListener("input", scheduleDraft);
    form.addEventListener("change", scheduleDraft);
    form.addEventListener("submit", (event) => { event.preventDefault(); submitPage(form, submit); });
    text.appendChild(form);
    const first = form.querySelector("input, textarea, select");
    if (first) first.focus();
  }

  function itemField(item, n, draft) {
    const id = "q-" + item.id;
    const set = field("fieldset", { className: "item " + item.kind, id: id });
    set.dataset.item = item.id;
    set.dataset.kind = item.kind;
    const legend = field("legend");
    legend.appendChild(field("span", { textContent: item.text }));
    legend.appendChild(field("span", { className: "req", textContent: " " + (item.required ? t("required") : t("optional")) }));
    set.appendChild(legend);
    const saved = draft.answers ? draft.answers[item.id] : undefined;
    const choice = (type, value, label, checked) => {
      const wrap = field("label", { className: "choice" });
      const input = field("input", { type: type, name: id, value: value, checked: checked });
      if (item.required && type === "radio") input.required = true;
      wrap.appendChild(input);
      wrap.appendChild(field("span", { textContent: label }));
      return wrap;
    };
    if (item.kind === "likert") {
      const row = field("div", { className: "points" });
      for (let p = 1; p <= item.points; p++) {
        let label = item.labels ? item.labels[p - 1] : String(p);
        if (!item.labels && p === 1) label = "1 " + item.ends[0];
        if (!item.labels && p === item.points) label = p + " " + item.ends[1];
        row.appendChild(choice("radio", String(p), label, saved === p));
      }
      set.appendChild(row);
    } else if (item.kind === "single" || item.kind === "multiple") {
      const type = item.kind === "single" ? "radio" : "checkbox";
      const chosen = Array.isArray(saved) ? saved : [saved];
      for (const option of item.options) set.appendChild(choice(type, option.value, option.text, chosen.includes(option.value)));
      if (item.other) {
        set.appendChild(choice(type, "other", item.other, chosen.includes("other")));
        const input = field("input", { type: "text", maxLength: 200, className: "other", id: id + "-other",
          value: (draft.other && draft.other[item.id]) || "" });
        input.setAttribute("aria-label", item.other + ": " + t("otherText"));
        set.appendChild(input);
      }
    } else if (item.kind === "slider") {
      const row = field("div", { className: "slider" });
      const input = field("input", { type: "range", min: 0, max: 100, step: 1, id: id + "-input",
        value: typeof saved === "number" ? saved : 50 });
      input.dataset.moved = typeof saved === "number" ? "1" : "";
      input.setAttribute("aria-label", item.text);
      const out = field("output", { textContent: typeof saved === "number" ? String(saved) : t("notMoved") });
      out.setAttribute("for", input.id);
      input.addEventListener("input", () => { input.dataset.moved = "1"; out.textContent = input.value; });
      row.appendChild(field("span", { textContent: item.ends[0] }));
      row.appendChild(input);
      row.appendChild(field("span", { textContent: item.ends[1] }));
      set.appendChild(row);
      set.appendChild(out);
    } else if (item.kind === "number") {
      const input = field("input", { type: "number", id: id + "-input", min: item.min, max: item.max,
        step: item.integer ? 1 : "any", value: typeof saved === "number" ? saved : "" });
      input.setAttribute("aria-labelledby", id + "-label");
      legend.id = id + "-label";
      set.appendChild(input);
    } else {
      const long = item.kind === "long_text";
      const input = field(long ? "textarea" : "input", { id: id + "-input", maxLength: item.max_chars,
        value: typeof saved === "string" ? saved : "" });
      if (!long) input.type = "text";
      else input.rows = 5;
      legend.id = id + "-label";
      input.setAttribute("aria-labelledby", id + "-label");
      set.appendChild(input);
    }
    return set;
  }

  function collect(form) {
    const answers = {};
    const other = {};
    for (const set of form.querySelectorAll("fieldset.item")) {
      const item = set.dataset.item;
      const kind = set.dataset.kind;
      let value = null;
      if (kind === "likert") {
        const c = set.querySelector("input:checked");
        value = c ? Number(c.value) : null;
      } else if (kind === "single") {
        const c = set.querySelector("input[type=radio]:checked");
        value = c ? c.value : null;
      } else if (kind === "multiple") {
        value = Array.from(set.querySelectorAll("input[type=checkbox]:checked")).map((c) => c.value);
      } else if (kind === "slider") {
        const input = set.querySelector("input[type=range]");
        value = input.dataset.moved ? Number(input.value) : null;
      } else if (kind === "number") {
        const input = set.querySelector("input");
        value = input.value === "" ? null : Number(input.value);
        if (value !== null && !Number.isFinite(value)) value = input.value;
      } else {
        const input = set.querySelector("input, textarea");
        value = input.value === "" ? null : input.value;
      }
      const otherInput = set.querySelector("input.other");
      if (otherInput && otherInput.value) other[item] = otherInput.value;
      if (value !== null) answers[item] = value;
    }
    return { answers: answers, other: other };
  }

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST", cache: "no-store", credentials: "omit",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(Object.assign({ code: code }, body)),
    });
    const type = response.headers.get("Content-Type") || "";
    return { status: response.status, body: type.includes("json") ? await response.json() : await response.text() };
  }

  function scheduleDraft() {
    activity();
    clearTimeout(draftTimer);
    draftTimer = setTimeout(saveDraftNow, 400);
  }

  async function saveDraftNow() {
    clearTimeout(draftTimer);
    const form = document.getElementById("page");
    if (!form || !page) return;
    const step = page.step;
    const data = collect(form);
    try {
      await post("/api/draft", { step: step, answers: data.answers, other: data.other });
    } catch (err) { /* the answers are sent again with the page */ }
  }

  async function submitPage(form, submit) {
    clearTimeout(draftTimer);
    submit.disabled = true;
    const data = collect(form);
    let got;
    try {
      got = await post("/api/answers", { step: page.step, language: language, answers: data.answers, other: data.other });
    } catch (err) {
      submit.disabled = false;
      return;
    }
    if (got.status === 422) {
      const box = document.getElementById("problems");
      box.replaceChildren(field("p", { textContent: t("problems") }));
      const list = field("ul");
      for (const line of got.body.problems) {
        const li = field("li");
        const item = line.split(":")[0];
        const target = document.getElementById("q-" + item);
        const what = target ? target.querySelector("legend span").textContent : item;
        li.textContent = what + " - " + line.slice(item.length + 1).trim();
        list.appendChild(li);
        if (target) target.classList.add("wrong");
      }
      box.appendChild(list);
      box.hidden = false;
      box.focus();
      submit.disabled = false;
      return;
    }
    page = null;
    if (got.status === 200) { show(got.body); return; }
    if (got.status === 409) { step(); return; }
    say(t("wrong"), [typeof got.body === "string" ? got.body : JSON.stringify(got.body)]);
  }

  async function play(visit) {
    const game = await call("/api/game");
    if (!game.ticket) { show(game.visit); return; }
    ticket = game.ticket;
    card.hidden = true;
    gameNumber.textContent = t("game") + " " + game.game + " " + t("of") + " " + game.games;
    proceed.hidden = true;
    progress.hidden = false;
    frame.hidden = false;
    frame.src = "/play#t=" + encodeURIComponent(ticket);
    frame.focus();
  }

  function done(visit, heading, line) {
    say(heading, [line]);
    if (visit.completion_code) {
      const p = document.createElement("p");
      p.textContent = t("code");
      const c = document.createElement("span");
      c.className = "code";
      c.id = "completion-code";
      c.textContent = visit.completion_code;
      p.appendChild(c);
      text.appendChild(p);
    }
    if (visit.completion_url) {
      const p = document.createElement("p");
      p.textContent = t("back");
      const a = document.createElement("a");
      a.href = visit.completion_url;
      a.rel = "noreferrer";
      a.textContent = t("goBack");
      p.appendChild(a);
      text.appendChild(p);
      setTimeout(() => { window.location.assign(visit.completion_url); }, 5000);
    }
  }

  // The game ends by quitting its engine (Finish, then its closing form's Submit). Builds whose closing
  // form cannot be submitted never quit: once the agent has ended a turn, "Continue" ends the game here.
  async function endGame(how, code) {
    const finished = ticket;
    stopGame();
    say(t("saving"), [t("oneMoment")]);
    try {
      await call("/api/finished", { ticket: finished, exit: code, how: how });
    } catch (err) {
      if (err.notPlayed) {
        say(t("notOver"), [String(err.message)]);
        button(t("backToGame"), true, step);
      } else {
        say(t("wrong"), [String(err.message || err)]);
      }
      return;
    }
    step();
  }

  proceed.addEventListener("click", () => { if (ticket !== null) endGame("continue", 0); });

  window.addEventListener("message", async (event) => {
    if (event.origin !== window.location.origin || !event.data || ticket === null) return;
    if (event.data.kind === "exit") {
      endGame("exit", Number(event.data.code) || 0);
    } else if (event.data.kind === "turn-ended") {
      proceed.hidden = false;
      activity();
    } else if (event.data.kind === "taken-over") {
      stopGame();
      say("This game continues elsewhere", ["Your game was opened in another window or tab, which now plays it. "
        + "Reload this page to play here instead."]);
    } else if (event.data.kind === "failed") {
      say("The game could not start", [String(event.data.text || ""), "Please try a recent Chrome, Edge or Firefox."]);
    }
  });

  stopInGame.addEventListener("click", confirmWithdraw);

  window.addEventListener("pagehide", () => {
    const form = document.getElementById("page");
    if (form && page) {
      const data = collect(form);
      navigator.sendBeacon("/api/draft", new Blob([JSON.stringify({ code: code, step: page.step, answers: data.answers,
        other: data.other })], { type: "application/json" }));
    }
    if (ticket !== null) navigator.sendBeacon("/api/leave", new Blob([JSON.stringify({ code: code })], { type: "application/json" }));
  });

  step();
})();
