// Boots the Godot web engine (index.js, loaded before this file) with the game's main pack.
// Everything the engine prints goes to this page's console panel and to the browser's console.
"use strict";

(function () {
  const MAX_LINES = 2000;
  const canvas = document.getElementById("game");
  const status = document.getElementById("status");
  const panel = document.getElementById("console");
  const toggle = document.getElementById("toggle");
  const params = new URLSearchParams(window.location.search);

  function show(text, isError) {
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
    status.hidden = false;
  }

  function log(text, isError) {
    const line = document.createElement("div");
    line.textContent = text;
    if (isError) line.className = "err";
    panel.appendChild(line);
    while (panel.childElementCount > MAX_LINES) panel.removeChild(panel.firstElementChild);
    panel.scrollTop = panel.scrollHeight;
  }

  toggle.addEventListener("click", () => { panel.hidden = !panel.hidden; });
  if (params.get("console") === "1") panel.hidden = false;

  // Only these engine flags may come from the address (?verbose=1&fps=1), for looking into a slow game.
  function engineArgs() {
    const args = [];
    if (params.get("verbose") === "1") args.push("--verbose");
    if (params.get("fps") === "1") args.push("--print-fps");
    return args;
  }

  function fail(text) {
    show(text, true);
    log(text, true);
    panel.hidden = false;
  }

  async function boot() {
    if (typeof Engine === "undefined") {
      fail("The engine (index.js) did not load.");
      return;
    }
    let build;
    try {
      const response = await fetch("webgame.json", { cache: "no-store" });
      build = await response.json();
    } catch (err) {
      fail("Cannot read webgame.json: " + err);
      return;
    }
    const missing = Engine.getMissingFeatures({ threads: Boolean(build.threads) });
    if (missing.length) {
      fail("This browser lacks what the game needs: " + missing.join(", "));
      return;
    }
    const engine = new Engine({
      executable: build.executable,
      mainPack: build.mainPack,
      fileSizes: build.fileSizes,
      canvas: canvas,
      canvasResizePolicy: 0, // the canvas stays 1920 x 1080; CSS scales it to the window
      args: engineArgs(),
      focusCanvas: true,
      ensureCrossOriginIsolationHeaders: false,
      experimentalVK: false,
      gdextensionLibs: [],
      onPrint: (...parts) => { const t = parts.join(" "); console.log(t); log(t, false); },
      onPrintError: (...parts) => { const t = parts.join(" "); console.error(t); log(t, true); },
      onProgress: (current, total) => {
        if (total > 0) show("Loading the game... " + Math.round((100 * current) / total) + " %");
      },
      onExit: (code) => { show("The game has ended (exit code " + code + "). Reload the page to play again."); },
    });
    try {
      await engine.startGame();
      status.hidden = true;
      canvas.focus();
    } catch (err) {
      fail("The game could not start: " + err);
    }
  }

  boot();
})();
