// The game's frame: points the game's fixed socket address at this origin with the game's ticket,
// boots the Godot engine, and tells the participant's page when the engine quits (the game's end).
"use strict";

(function () {
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const ticket = new URLSearchParams(window.location.hash.slice(1)).get("t") || "";
  const status = document.getElementById("status");
  const canvas = document.getElementById("canvas");
  const GAME_ADDRESS = /^ws:\/\/localhost:5000\/?$/;
  const target = (window.location.protocol === "https:" ? "wss://" : "ws://") + window.location.host
    + "/ws?ticket=" + encodeURIComponent(ticket);
  const tell = (message) => window.parent.postMessage(message, window.location.origin);

  // Before the engine loads: its WebSocket dials ws://localhost:5000 (fixed in the game); ours goes here.
  const Native = window.WebSocket;
  function Socket(url, protocols) {
    const address = typeof url === "string" && GAME_ADDRESS.test(url) ? target : url;
    const ws = protocols === undefined ? new Native(address) : new Native(address, protocols);
    ws.addEventListener("close", (event) => { if (event.code === 4001) tell({ kind: "taken-over" }); });
    // The agent's finish ends an AI turn: the participant's page offers "Continue" once one has.
    ws.addEventListener("message", (event) => {
      if (typeof event.data === "string" && event.data.length < 1000 && /"type":\s*"finish"/.test(event.data)) {
        tell({ kind: "turn-ended" });
      }
    });
    return ws;
  }
  Socket.prototype = Native.prototype;
  for (const name of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) {
    Object.defineProperty(Socket, name, { value: Native[name] });
  }
  window.WebSocket = Socket;

  const script = document.createElement("script");
  script.src = boot.executable + ".js";
  script.onerror = () => tell({ kind: "failed", text: "The engine did not load." });
  script.onload = async () => {
    const missing = Engine.getMissingFeatures({ threads: false });
    if (missing.length) {
      tell({ kind: "failed", text: "This browser lacks " + missing.join(", ") });
      return;
    }
    const engine = new Engine({
      executable: boot.executable, mainPack: boot.mainPack, fileSizes: boot.fileSizes, canvas: canvas,
      canvasResizePolicy: 0, args: [], focusCanvas: true, ensureCrossOriginIsolationHeaders: false,
      experimentalVK: false, gdextensionLibs: [],
      onProgress: (current, total) => {
        if (total > 0) status.textContent = "Loading the game... " + Math.round((100 * current) / total) + " %";
      },
      onExit: (code) => tell({ kind: "exit", code: code }),
    });
    try {
      await engine.startGame();
      status.hidden = true;
      canvas.focus();
    } catch (err) {
      tell({ kind: "failed", text: String(err) });
    }
  };
  document.body.appendChild(script);
})();
