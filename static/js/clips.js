// The compare page's videos and audio files (issue 35): one transport for
// every response (two on the pair page, N on the slots page), so all show (or
// sound) the same moment. Play/pause, seek, frame step, speed and a loop
// drive every player of the item; the first is the clock the others follow
// (re-seeked when they drift by more than half a frame). Videos flicker in
// one place at the same position, A, B, C… in turn; audio plays every take
// together with all but one muted, so switching is instant at the same
// position, as listening tests do. work.js calls window.studioClips.
(function () {
  "use strict";

  var SPEEDS = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 2];
  var st = null;  // the current item's state (reset() makes it)

  function work() { return document.getElementById("work"); }
  function $(id) { return document.getElementById(id); }
  function fmt(t) {
    if (!isFinite(t)) t = 0;
    var m = Math.floor(t / 60), s = t - m * 60;
    return m + ":" + (s < 10 ? "0" : "") + s.toFixed(2);
  }
  function players() { return st ? (st.flicker ? st.flicker.players : st.players) : []; }
  function master() { return players()[0]; }
  function duration() {
    var d = 0;
    players().forEach(function (p) { if (isFinite(p.duration)) d = Math.max(d, p.duration); });
    return d;
  }
  // Response A, B, C… in display order (the players are in page order).
  function letter(k) { return String.fromCharCode(65 + k); }
  function say(text) { var s = $("clip-state"); if (s) s.textContent = text; }
  function describe() {
    if (!st) return;
    var m = master(), loop = st.loop;
    var text = (st.playing ? "Playing" : "Paused") + " at " + SPEEDS[st.speed] + "×, " + fmt(m ? m.currentTime : 0);
    if (loop.end !== null) text += ", looping " + fmt(loop.start) + "–" + fmt(loop.end);
    else if (loop.start !== null) text += ", loop starts at " + fmt(loop.start) + " (l marks its end)";
    if (st.kind === "audio") text += ", listening to " + letter(st.listen);
    say(text);
  }
  function showTime() {
    var m = master();
    if (!m) return;
    var d = duration(), t = m.currentTime;
    var seek = $("clip-seek"), out = $("clip-time");
    if (seek && !st.seeking) {
      seek.value = d ? Math.round(t / d * 1000) : 0;
      seek.setAttribute("aria-valuetext", fmt(t) + " of " + fmt(d));
    }
    if (out) out.textContent = fmt(t) + " / " + fmt(d);
  }
  // Every player to `t` (seconds); resolves when all have seeked.
  function seek(t) {
    var d = duration();
    if (d) t = Math.min(Math.max(0, t), d);
    return Promise.all(players().map(function (p) {
      return new Promise(function (done) {
        if (Math.abs(p.currentTime - t) < 1e-4) { done(); return; }
        var off = function () { p.removeEventListener("seeked", off); done(); };
        p.addEventListener("seeked", off);
        p.currentTime = t;
        setTimeout(off, 1500);  // a player that cannot seek does not hold the others
      });
    })).then(function () { showTime(); describe(); });
  }
  function play() {
    st.playing = true;
    var t = master().currentTime;
    players().forEach(function (p) { if (Math.abs(p.currentTime - t) > 1e-3) p.currentTime = t; });
    players().forEach(function (p) {
      p.playbackRate = SPEEDS[st.speed];
      var started = p.play();
      if (started && started.catch) started.catch(function () {});
    });
    mark();
  }
  function pause() {
    st.playing = false;
    players().forEach(function (p) { p.pause(); });
    var m = master();
    mark();
    return m ? seek(m.currentTime) : Promise.resolve();
  }
  function mark() {
    var b = $("clip-play");
    if (b) {
      b.setAttribute("aria-pressed", st.playing ? "true" : "false");
      b.firstChild.textContent = st.playing ? "Pause " : "Play ";
    }
    describe();
  }
  // Followers re-seek when they drift more than half a frame from the clock.
  function follow() {
    var m = master();
    if (!m) return;
    var t = m.currentTime;
    if (st.loop.end !== null && t >= st.loop.end) { seek(st.loop.start); return; }
    if (st.playing) {
      players().slice(1).forEach(function (p) {
        if (Math.abs(p.currentTime - t) > 0.5 / st.fps) p.currentTime = t;
      });
    }
    showTime();
  }
  function tick() {
    if (!st) return;
    follow();
    st.raf = requestAnimationFrame(tick);
  }

  var api = {
    reset: function () {
      if (st && st.raf) cancelAnimationFrame(st.raf);
      if (st) st.players.forEach(function (p) { p.pause(); });
      st = null;
      var w = work();
      if (!w || !w.dataset.clips) return;
      var list = Array.prototype.slice.call(w.querySelectorAll(".responses.clips video.clip, .responses.clips audio.clip"));
      if (!list.length) return;
      var video = w.querySelector(".responses.clips video.clip");
      st = {
        players: list, playing: false, speed: 3, seeking: false, flicker: null,
        kind: video ? "video" : "audio", listen: 0,
        fps: video ? parseFloat(video.dataset.fps) || 25 : 100,
        loop: { start: null, end: null }, raf: 0
      };
      if (st.kind === "audio") {
        // All play; only the listened-to one sounds.
        list.forEach(function (p, k) { p.muted = k !== st.listen; });
        marksSounding();
      }
      list.forEach(function (p) {
        p.addEventListener("loadedmetadata", showTime);
        p.addEventListener("ended", function () { if (st && p === master() && st.playing) { st.playing = false; mark(); } });
      });
      var seekBar = $("clip-seek");
      if (seekBar) {
        seekBar.addEventListener("input", function () {
          st.seeking = true;
          seek(seekBar.value / 1000 * duration()).then(function () { st.seeking = false; });
        });
      }
      showTime();
      describe();
      st.raf = requestAnimationFrame(tick);
    },
    active: function () { return !!st; },
    play: function () { if (!st) return; if (st.playing) pause(); else play(); },
    step: function (dir) {
      if (!st) return;
      var m = master();
      st.playing = false;
      players().forEach(function (p) { p.pause(); });
      mark();
      // The middle of the next (or previous) frame: never between two.
      var frame = Math.floor(m.currentTime * st.fps + 1e-6) + dir;
      seek((Math.max(0, frame) + 0.5) / st.fps);
    },
    speed: function (dir) {
      if (!st) return;
      st.speed = Math.min(SPEEDS.length - 1, Math.max(0, st.speed + dir));
      players().forEach(function (p) { p.playbackRate = SPEEDS[st.speed]; });
      var out = $("clip-speed");
      if (out) out.textContent = SPEEDS[st.speed] + "×";
      describe();
    },
    loop: function () {
      if (!st) return;
      var t = master().currentTime, loop = st.loop, b = $("clip-loop");
      if (loop.start === null) { loop.start = t; }
      else if (loop.end === null && t > loop.start) { loop.end = t; }
      else { loop.start = loop.end = null; }
      if (b) {
        b.setAttribute("aria-pressed", loop.end !== null ? "true" : "false");
        b.firstChild.textContent = loop.end !== null ? "Loop " + fmt(loop.start) + "–" + fmt(loop.end) + " " : loop.start !== null ? "Loop from " + fmt(loop.start) + " " : "Loop ";
      }
      describe();
    },
    // Audio: listen to the other response at the same moment. Videos: A and
    // B in one place, at the same position (copies of the two players).
    switch: function () {
      if (!st) return;
      var b = $("clip-switch");
      if (st.kind === "audio") {
        st.listen = (st.listen + 1) % st.players.length;
        st.players.forEach(function (p, k) { p.muted = k !== st.listen; });
        marksSounding();
        if (b) { b.firstChild.textContent = "Listening to " + letter(st.listen) + " "; b.setAttribute("aria-pressed", st.listen !== 0 ? "true" : "false"); }
        describe();
        return;
      }
      if (st.flicker) { st.flicker.side = (st.flicker.side + 1) % st.flicker.panes.length; showSide(); return; }
      startFlicker();
    },
    sideBySide: function () { if (st && st.flicker) stopFlicker(); },
    // For tests and benches: every player's position.
    times: function () { return players().map(function (p) { return p.currentTime; }); }
  };

  // The response whose take sounds is outlined (the button and the status say it too).
  function marksSounding() {
    st.players.forEach(function (p, k) {
      var r = p.closest(".response");
      if (r) r.classList.toggle("sounding", k === st.listen);
    });
  }
  function showSide() {
    var f = st.flicker;
    f.panes.forEach(function (pane, k) { pane.hidden = k !== f.side; });
    var label = $("clip-flicker-side");
    if (label) label.textContent = "Response " + letter(f.side);
  }
  function startFlicker() {
    var figure = $("clip-flicker");
    if (!figure) return;
    var frame = figure.querySelector(".clip-flicker-frame");
    var t = master().currentTime, was = st.playing;
    st.players.forEach(function (p) { p.pause(); });
    // Each response's first video, in display order (A, B, C…).
    var shown = [];
    Array.prototype.forEach.call(work().querySelectorAll(".responses.clips .response"), function (r) {
      var v = r.querySelector("video.clip");
      if (v) shown.push(v);
    });
    if (shown.length < 2) return;
    var panes = shown.map(function (p, k) {
      var pane = document.createElement("div");
      pane.className = "clip-flicker-pane";
      var copy = p.cloneNode(false);
      copy.removeAttribute("id");
      copy.setAttribute("aria-label", "Response " + letter(k) + ", video, in one place");
      copy.preload = "auto";
      pane.appendChild(copy);
      frame.appendChild(pane);
      return pane;
    });
    st.flicker = { panes: panes, players: panes.map(function (pane) { return pane.firstChild; }), side: 0 };
    figure.hidden = false;
    work().classList.add("clips-flickering");
    var b = $("clip-switch");
    if (b) b.setAttribute("aria-pressed", "true");
    showSide();
    seek(t).then(function () { if (was) play(); });
  }
  function stopFlicker() {
    var f = st.flicker, t = master().currentTime, was = st.playing;
    f.players.forEach(function (p) { p.pause(); });
    f.panes.forEach(function (pane) { pane.remove(); });
    st.flicker = null;
    $("clip-flicker").hidden = true;
    work().classList.remove("clips-flickering");
    var b = $("clip-switch");
    if (b) b.setAttribute("aria-pressed", "false");
    seek(t).then(function () { if (was) play(); });
  }

  window.studioClips = api;  // work.js resets it with every item it shows
})();
