// The participant's page: consent, then each game of their sequence in turn, then the completion.
// The link's code (the last part of the address) names the participant; each game gets its own
// ticket, handed to the game's frame in the address's fragment (never sent to the server as a URL).
"use strict";

(function () {
  const code = window.location.pathname.split("/").pop();
  const card = document.getElementById("card");
  const title = document.getElementById("title");
  const text = document.getElementById("text");
  const buttons = document.getElementById("buttons");
  const frame = document.getElementById("game");
  const progress = document.getElementById("progress");
  const gameNumber = document.getElementById("game-number");
  const proceed = document.getElementById("continue");
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
      show(await call("/api/visit"));
    } catch (err) {
      say("Something went wrong", [String(err.message || err)]);
    } finally {
      busy = false;
    }
  }

  function show(visit) {
    if (visit.stage === "consent") {
      say("Before you start", visit.consent.text.split(/\n\s*\n/));
      button(visit.consent.agree, true, async () => { await call("/api/consent", { given: true }); step(); });
      button(visit.consent.decline, false, async () => { await call("/api/consent", { given: false }); step(); });
    } else if (visit.stage === "play") {
      play(visit);
    } else if (visit.stage === "done") {
      done(visit);
    } else if (visit.stage === "refused") {
      say("Thank you", ["You did not agree to take part, so no game was played. You may close this page."]);
    } else if (visit.stage === "paused") {
      say("Please wait", ["The study is paused for you. Reload this page in a little while."]);
    } else {
      say("This link has ended", ["This link no longer takes part in the study. You may close this page."]);
    }
  }

  async function play(visit) {
    const game = await call("/api/game");
    if (!game.ticket) { show(game.visit); return; }
    ticket = game.ticket;
    card.hidden = true;
    gameNumber.textContent = "Game " + game.game + " of " + game.games;
    proceed.hidden = true;
    progress.hidden = false;
    frame.hidden = false;
    frame.src = "/play#t=" + encodeURIComponent(ticket);
    frame.focus();
  }

  function done(visit) {
    const lines = ["You have played every game of the study. Thank you for taking part!"];
    say("Thank you", lines);
    if (visit.completion_code) {
      const p = document.createElement("p");
      p.textContent = "Your completion code: ";
      const c = document.createElement("span");
      c.className = "code";
      c.id = "completion-code";
      c.textContent = visit.completion_code;
      p.appendChild(c);
      text.appendChild(p);
    }
    if (visit.completion_url) {
      const p = document.createElement("p");
      p.textContent = "You will be taken back in a few seconds. ";
      const a = document.createElement("a");
      a.href = visit.completion_url;
      a.rel = "noreferrer";
      a.textContent = "Go back now";
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
    say("Saving...", ["One moment."]);
    try {
      await call("/api/finished", { ticket: finished, exit: code, how: how });
    } catch (err) {
      if (err.notPlayed) {
        say("The game is not over yet", [String(err.message)]);
        button("Back to the game", true, step);
      } else {
        say("Something went wrong", [String(err.message || err)]);
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
    } else if (event.data.kind === "taken-over") {
      stopGame();
      say("This game continues elsewhere", ["Your game was opened in another window or tab, which now plays it. "
        + "Reload this page to play here instead."]);
    } else if (event.data.kind === "failed") {
      say("The game could not start", [String(event.data.text || ""), "Please try a recent Chrome, Edge or Firefox."]);
    }
  });

  window.addEventListener("pagehide", () => {
    if (ticket !== null) navigator.sendBeacon("/api/leave", new Blob([JSON.stringify({ code: code })], { type: "application/json" }));
  });

  step();
})();
