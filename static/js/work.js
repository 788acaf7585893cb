// The compare page: keyboard shortcuts, image zoom/pan, time on task.
// Bound once on document; every handler looks up the current #work, so it
// keeps working after htmx swaps in the next item.
(function () {
  "use strict";

  var state = { scale: 1, x: 0, y: 0, drag: null, active: 0, lastInput: 0, lastTick: 0, timer: null };

  function work() { return document.getElementById("work"); }
  function form() { return document.getElementById("judge-form"); }
  function q(sel) { var w = work(); return w ? w.querySelector(sel) : null; }

  function setRadio(name, value) {
    var input = q('input[name="' + name + '"][value="' + value + '"]');
    if (input) { input.checked = true; input.dispatchEvent(new Event("change", { bubbles: true })); }
    return !!input;
  }
  function radioValue(name) {
    var input = q('input[name="' + name + '"]:checked');
    return input ? input.value : "";
  }
  function stepConfidence(delta) {
    var v = parseInt(radioValue("confidence") || "2", 10) + delta;
    setRadio("confidence", String(Math.min(3, Math.max(1, v))));
  }
  function toggle(id) {
    var panel = document.getElementById(id);
    if (panel) panel.hidden = !panel.hidden;
  }
  function submit() {
    var f = form();
    if (!f || !f.querySelector('button[type="submit"]')) return;
    var seconds = f.querySelector('input[name="active_seconds"]');
    if (seconds) seconds.value = Math.round(state.active);
    // One vote at a time: a vote still in the background is answered first
    // (its answer also decides what the next claim returns).
    if (pendingVote) { afterVote(submit); return; }
    var w = work();
    if (ahead && ahead.holding === w.dataset.assignment && w.dataset.submitted === "0" && complete()) {
      showAhead(f);
      return;
    }
    if (typeof f.requestSubmit === "function") f.requestSubmit(); else f.submit();
  }

  // --- the next item, kept ready ----------------------------------------------
  // While the annotator works, the page leases the next item (POST
  // data-ahead-url: annotate.views.work_ahead), parses its #work and decodes
  // its image. A complete vote then shows it at once and sends the vote in
  // the background; the server's answer names the same item (its oldest
  // open lease) or, if anything went otherwise, its answer is shown instead:
  // the errors of the item just left (with its URL back), another item, or
  // on failure the item just left, as it was.
  var ahead = null;
  function csrfToken() {
    var input = q('input[name="csrfmiddlewaretoken"]');
    return input ? input.value : "";
  }
  function parseWork(html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html.trim();
    var node = tpl.content.firstElementChild;
    return node && node.id === "work" ? node : null;
  }
  function prefetch() {
    var w = work();
    if (!w || w.dataset.submitted !== "0" || w.dataset.errors || !w.dataset.aheadUrl) return;
    var holding = w.dataset.assignment;
    if (ahead && ahead.holding === holding) return;
    ahead = null;
    fetch(w.dataset.aheadUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), "HX-Request": "true" },
      body: new URLSearchParams({ holding: holding })
    }).then(function (r) {
      if (r.status !== 200) return null;
      var url = r.headers.get("X-Item-Url");
      return r.text().then(function (html) { return { url: url, node: parseWork(html) }; });
    }).then(function (got) {
      if (!got || !got.node || !got.url) return;
      // Formulas typeset now, off the path from keypress to paint.
      if (window.studioMath) window.studioMath.render(got.node);
      // Videos and audio (issue 35): posters decoded and the first seconds
      // buffered before the item goes in (its own players, adopted into this
      // document so they load while detached), so both are ready to play.
      if (got.node.querySelector("video.clip, audio.clip")) {
        got.node = document.adoptNode(got.node);
        return clipsReady(got.node).then(function () {
          var w2 = work();
          if (w2 && w2.dataset.assignment === holding) ahead = { holding: holding, url: got.url, node: got.node };
        });
      }
      // The prompt's image, or every image part (issue 24), decoded before the
      // item goes in, so that the keypress paints decoded pictures.
      var imgs = got.node.querySelectorAll("#viewer-img, img.part-img");
      if (!imgs.length) { ahead = { holding: holding, url: got.url, node: got.node }; return; }
      return Promise.all(Array.prototype.map.call(imgs, function (img) {
        var ready = new Image();
        Array.prototype.forEach.call(img.attributes, function (a) { ready.setAttribute(a.name, a.value); });
        return (ready.decode ? ready.decode() : Promise.resolve()).catch(function () {}).then(function () {
          img.replaceWith(ready);  // the decoded image goes in with the item
        });
      })).then(function () {
        var w2 = work();
        if (w2 && w2.dataset.assignment === holding) ahead = { holding: holding, url: got.url, node: got.node };
      });
    }).catch(function () { ahead = null; });
  }
  function clipsReady(node) {
    var waits = [];
    Array.prototype.forEach.call(node.querySelectorAll("video.clip[poster]"), function (v) {
      var poster = new Image();
      poster.src = v.getAttribute("poster");
      waits.push(poster.decode ? poster.decode().catch(function () {}) : Promise.resolve());
    });
    Array.prototype.forEach.call(node.querySelectorAll("video.clip, audio.clip"), function (m) {
      waits.push(new Promise(function (done) {
        if (m.readyState >= 3) { done(); return; }
        m.addEventListener("canplay", done, { once: true });
        m.addEventListener("error", done, { once: true });
        setTimeout(done, 5000);  // a slow file does not hold the next item back for ever
        m.preload = "auto";
        m.load();
      }));
    });
    return Promise.all(waits);
  }
  // What the server would refuse, checked here so that only a vote it will
  // take is sent in the background.
  function complete() {
    var w = work();
    if (w.dataset.task) return completeSlots(w);
    var graded = w.dataset.scale && w.dataset.scale !== "ab";
    var choice = graded ? radioValue("strength") : radioValue("choice");
    if (!choice) return false;
    if (graded && choice === "0") choice = "tie";
    if (w.dataset.grades === "1" && (!radioValue("grade_left") || !radioValue("grade_right"))) return false;
    if (w.dataset.correctness === "1" && (!radioValue("correct_left") || !radioValue("correct_right"))) return false;
    var r = q('textarea[name="rationale"]');
    if (r && !r.value.trim() && (choice === "tie" || w.dataset.requireRationale === "1")) return false;
    var flag = q('input[name="flagged_problem"]');
    if (flag && flag.checked && !q('input[name="problem_reason"]').value.trim()) return false;
    return true;
  }
  // A best-of-N pick or a ranking (templates/annotate/_slots_form.html):
  // picked, or every place chosen (static/js/ranking.js fills them), and
  // each response's label and grade where the domain asks.
  function completeSlots(w) {
    var n = parseInt(w.dataset.n, 10);
    for (var p = 1; p <= n; p++) {
      if (w.dataset.task === "ranking" && !q("#rank_" + p).value) return false;
      if (w.dataset.correctness === "1" && !radioValue("correct_" + p)) return false;
      if (w.dataset.grades === "1" && !radioValue("grade_" + p)) return false;
    }
    if (w.dataset.task === "best_of_n" && !radioValue("pick")) return false;
    var r = q('textarea[name="rationale"]');
    if (r && !r.value.trim() && w.dataset.requireRationale === "1") return false;
    var flag = q('input[name="flagged_problem"]');
    return !(flag && flag.checked && !q('input[name="problem_reason"]').value.trim());
  }
  function bump(node, selector, delta) {
    var el = node.querySelector(selector);
    if (el) el.textContent = String(Math.max(0, parseInt(el.textContent, 10) + delta));
  }
  // The page's messages ("Your judgement was revised", …) are about what
  // happened before the item they came with: once another item is shown
  // they are stale and go (issue 31).
  var messagesItem = null;
  function dropStaleMessages(node) {
    var box = document.querySelector('body > section[aria-label="Messages"]');
    if (box && node && node.dataset.assignment !== messagesItem) box.remove();
  }
  // For benches and tests: a new item is in the page (`ready`: the one kept
  // ready, without waiting for the network).
  function shown(node, ready) {
    dropStaleMessages(node);
    document.dispatchEvent(new CustomEvent("work:shown", { detail: { work: node, ready: !!ready } }));
  }
  function showAhead(f) {
    var old = work();
    var oldUrl = location.pathname + location.search;
    var next = ahead;
    ahead = null;
    var data = new URLSearchParams(new FormData(f));
    // The figures the server will send back, shown at once.
    bump(next.node, "#progress span:nth-of-type(1) strong", 1);
    bump(next.node, "#progress span:nth-of-type(2) strong", -1);
    var progress = next.node.querySelector("#progress progress");
    if (progress) progress.value = progress.value + 1;
    bump(next.node, "#progress span:nth-of-type(3) strong", 1);
    old.replaceWith(next.node);
    if (window.htmx) window.htmx.process(next.node);
    if (window.studioMath) window.studioMath.render(next.node);  // if KaTeX came late
    history.pushState({ htmx: true }, "", next.url);
    window.scrollTo(0, 0);
    init();
    shown(next.node, true);
    // Sent once the next item is painted (the frame comes first), in the
    // background; saved even if the page is left at once (keepalive).
    // If the page is left before that frame, it goes at once.
    var token = csrfToken(), sent = null;
    function send() {
      window.removeEventListener("pagehide", send);
      if (!sent) {
        sent = fetch(f.getAttribute("action"), {
          method: "POST",
          credentials: "same-origin",
          keepalive: true,
          headers: { "X-CSRFToken": token, "HX-Request": "true" },
          body: data
        });
      }
      return sent;
    }
    window.addEventListener("pagehide", send);
    pendingVote = new Promise(function (resolve) {
      requestAnimationFrame(function () { setTimeout(resolve, 0); });
    }).then(send).then(function (r) {
      return r.text().then(function (html) {
        var still = work() === next.node;
        if (r.status === 200 && r.headers.get("HX-Push-Url") === next.url) {
          // As expected: take the server's figures, keep the next item ready.
          var fresh = parseWork(html);
          var line = fresh && fresh.querySelector("#progress");
          var current = document.getElementById("progress");
          if (still && line && current) current.replaceWith(line);
          if (still) prefetch();
          return;
        }
        if (r.status === 204 && r.headers.get("HX-Redirect")) { location.assign(r.headers.get("HX-Redirect")); return; }
        var node = parseWork(html);
        if (!node || [200, 400, 422].indexOf(r.status) < 0) throw new Error(String(r.status));
        if (!still) return;
        work().replaceWith(node);
        if (window.htmx) window.htmx.process(node);
        history.replaceState({ htmx: true }, "", r.status === 200 ? r.headers.get("HX-Push-Url") : oldUrl);
        init();
        if (node.dataset.errors) showErrors(); else prefetch();
      });
    }).catch(function (err) {
      if (work() !== next.node) { alertFailure("Your last vote could not be saved (" + err.message + "); open your history to check it."); return; }
      next.node.replaceWith(old);
      history.replaceState({ htmx: true }, "", oldUrl);
      init();
      alertFailure("The server could not save this (" + err.message + "); nothing was saved. Press Enter to try again.");
    }).then(function () { pendingVote = null; });
  }
  // A vote sent in the background is answered before the page is left by
  // a link or the undo key, so what the next page shows includes it.
  var pendingVote = null;
  function afterVote(go) {
    if (pendingVote) pendingVote.then(go, go); else go();
  }
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a[href]");
    if (!a || !pendingVote || e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    afterVote(function () { location.assign(a.href); });
  });
  function openSkip() {
    var details = q(".skip details");
    if (!details) return;
    details.open = true;
    details.querySelector('input[name="reason"]').focus();
  }
  function flagProblem() {
    var box = q('input[name="flagged_problem"]');
    if (!box) return;
    box.checked = !box.checked;
    if (box.checked) q('input[name="problem_reason"]').focus();
  }

  // --- zoom and pan ---------------------------------------------------------
  function applyTransform() {
    var img = q("#viewer-img");
    if (img) img.style.transform = "translate(" + state.x + "px," + state.y + "px) scale(" + state.scale + ")";
    var viewer = q("#viewer");
    if (viewer) viewer.classList.toggle("zoomed", state.scale > 1);
  }
  function zoom(factor, cx, cy) {
    var vp = q("#viewer .viewport");
    if (!vp) return;
    var rect = vp.getBoundingClientRect();
    if (cx === undefined) { cx = rect.width / 2; cy = rect.height / 2; }
    var next = Math.min(16, Math.max(1, state.scale * factor));
    // keep the point under the cursor fixed
    state.x = cx - (cx - state.x) * (next / state.scale);
    state.y = cy - (cy - state.y) * (next / state.scale);
    state.scale = next;
    if (next === 1) { state.x = 0; state.y = 0; }
    applyTransform();
  }
  function resetZoom() { state.scale = 1; state.x = 0; state.y = 0; applyTransform(); }
  function fullSize() {
    var viewer = q("#viewer");
    if (viewer) { viewer.classList.toggle("fullsize"); resetZoom(); }
  }

  document.addEventListener("wheel", function (e) {
    var vp = e.target.closest && e.target.closest("#viewer .viewport");
    if (!vp) return;
    e.preventDefault();
    var rect = vp.getBoundingClientRect();
    zoom(e.deltaY < 0 ? 1.2 : 1 / 1.2, e.clientX - rect.left, e.clientY - rect.top);
  }, { passive: false });
  document.addEventListener("pointerdown", function (e) {
    if (!(e.target.closest && e.target.closest("#viewer .viewport")) || state.scale === 1) return;
    state.drag = { x: e.clientX - state.x, y: e.clientY - state.y };
    e.target.setPointerCapture && e.target.setPointerCapture(e.pointerId);
  });
  document.addEventListener("pointermove", function (e) {
    if (!state.drag) return;
    state.x = e.clientX - state.drag.x; state.y = e.clientY - state.drag.y; applyTransform();
  });
  document.addEventListener("pointerup", function () { state.drag = null; });
  document.addEventListener("dblclick", function (e) {
    if (e.target.closest && e.target.closest("#viewer .viewport")) resetZoom();
  });

  // --- buttons --------------------------------------------------------------
  var ACTIONS = {
    "guidelines": function () { toggle("guidelines"); },
    "keys": function () { toggle("keys"); },
    "zoom-in": function () { zoom(1.25); },
    "zoom-out": function () { zoom(0.8); },
    "zoom-reset": resetZoom,
    "fullsize": fullSize,
    "pic-zoom-in": function () { pictures("zoomIn"); },
    "pic-zoom-out": function () { pictures("zoomOut"); },
    "pic-zoom-reset": function () { pictures("fit"); },
    "flicker": function () { pictures("flicker"); },
    "side-by-side": function () { pictures("sideBySide"); },
    "clip-play": function () { clips("play"); },
    "clip-back": function () { clips("step", -1); },
    "clip-forward": function () { clips("step", 1); },
    "clip-slower": function () { clips("speed", -1); },
    "clip-faster": function () { clips("speed", 1); },
    "clip-loop": function () { clips("loop"); },
    "clip-switch": function () { clips("switch"); },
  };
  // Items with videos or audio files: their one transport (static/js/clips.js).
  function clips(name, arg) {
    return window.studioClips ? window.studioClips[name](arg) : undefined;
  }
  var CLIP_KEYS = {
    " ": "clip-play", ",": "clip-step", ".": "clip-step", "[": "clip-speed", "]": "clip-speed",
    "{": "confidence", "}": "confidence", "l": "clip-loop", "t": "clip-switch"
  };
  // Items shown part by part: their pictures (static/js/pictures.js).
  function pictures(name, arg) {
    return window.studioPictures ? window.studioPictures[name](arg) : undefined;
  }
  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest("[data-action]");
    if (button && ACTIONS[button.dataset.action]) { e.preventDefault(); ACTIONS[button.dataset.action](); }
  });

  // --- keyboard -------------------------------------------------------------
  // Each key's action; a key acts only when its action is in #work's
  // data-actions, the list the `?` panel shows (annotate.views._keymap).
  var KEYS = {
    "1": "left", "ArrowLeft": "left", "2": "right", "ArrowRight": "right", "0": "tie",
    "q": "a-yes", "w": "a-no", "e": "a-unsure", "o": "b-yes", "p": "b-no", "u": "b-unsure",
    "[": "confidence", "]": "confidence", "r": "rationale", "Enter": "submit", "s": "skip",
    "Backspace": "undo", "x": "flag", "+": "zoom", "=": "zoom", "-": "zoom", ".": "zoom",
    "f": "fullsize", "g": "guidelines", "?": "keys", "Escape": "close", "t": "flicker"
  };
  var LABEL = { "a": "correct_left", "b": "correct_right" };
  // Graded projects: digits pick the scale's points in displayed order,
  // arrows move one point; letter grades of each response (annotate.loop.page).
  var GRADE_KEYS = { "z": "left-A", "c": "left-B", "v": "left-C", "n": "right-A", "m": "right-B", ",": "right-C" };
  function actionFor(key, w, shift) {
    // Shift+arrows pan the pictures where the item has them (else as arrows).
    if (shift && /^Arrow/.test(key) && (" " + w.dataset.actions + " ").indexOf(" pan ") >= 0) return "pan";
    if (w.dataset.scale && w.dataset.scale !== "ab") {
      if (/^[1-9]$/.test(key)) return "point-" + key;
      if (key === "ArrowLeft" || key === "ArrowRight") return "point-step";
    }
    if (w.dataset.clips && CLIP_KEYS[key]) return CLIP_KEYS[key];
    if (GRADE_KEYS[key]) return "grade-" + GRADE_KEYS[key];
    return KEYS[key];
  }
  function stepPoint(delta) {
    var points = Array.prototype.slice.call(work().querySelectorAll('input[name="strength"]'));
    if (!points.length) return;
    var at = points.findIndex(function (p) { return p.checked; });
    var next = at < 0 ? (delta < 0 ? 0 : points.length - 1) : Math.min(points.length - 1, Math.max(0, at + delta));
    setRadio("strength", points[next].value);
  }
  function isTyping(el) {
    if (!el) return false;
    if (el.isContentEditable) return true;
    var tag = el.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    return tag === "INPUT" && !/^(radio|checkbox|button|submit|hidden)$/.test(el.type);
  }
  // Enter submits only from the decision form (a radio or checkbox in it) or
  // with nothing focused; on a link, button or summary it does what the
  // browser does, anywhere else nothing.
  function enterSubmits(el) {
    if (!el || el === document.body || el === document.documentElement) return true;
    if (el.closest("a, button, summary, [role=button]")) return false;
    return !!el.closest("#judge-form");
  }
  function undo() {
    var w = work();
    var next = location.pathname + location.search;
    afterVote(function () { location.assign(w.dataset.undoUrl + "?next=" + encodeURIComponent(next)); });
  }
  document.addEventListener("keydown", function (e) {
    var w = work();
    if (!w) return;
    document.documentElement.classList.add("keys-used");
    state.lastInput = Date.now();
    if (e.altKey || e.metaKey) return;
    if (isTyping(e.target)) {
      if (e.key === "Escape") { e.target.blur(); e.preventDefault(); }
      else if (e.key === "Enter" && e.ctrlKey && e.target.closest("#judge-form")) { e.preventDefault(); submit(); }
      return;
    }
    if (e.ctrlKey) return;
    var action = actionFor(e.key, w, e.shiftKey);
    var active = (" " + (w.dataset.actions || "") + " ");
    if (!action || active.indexOf(" " + action + " ") < 0) return;
    if (e.key === "Enter" && !enterSubmits(e.target)) return;
    switch (action) {
      case "left": case "right": case "tie": setRadio("choice", action); break;
      case "point-step": stepPoint(e.key === "ArrowLeft" ? -1 : 1); break;
      case "a-yes": case "a-no": case "a-unsure": case "b-yes": case "b-no": case "b-unsure":
        setRadio(LABEL[action[0]], action.slice(2)); break;
      case "confidence": stepConfidence(e.key === "[" || e.key === "{" ? -1 : 1); break;
      case "clip-play": clips("play"); break;
      case "clip-step": clips("step", e.key === "," ? -1 : 1); break;
      case "clip-speed": clips("speed", e.key === "[" ? -1 : 1); break;
      case "clip-loop": clips("loop"); break;
      case "clip-switch": clips("switch"); break;
      case "rationale": var r = q('textarea[name="rationale"]'); if (r) r.focus(); break;
      case "submit": submit(); break;
      case "skip": openSkip(); break;
      case "undo": undo(); break;
      case "flag": flagProblem(); break;
      case "guidelines": toggle("guidelines"); break;
      case "keys": toggle("keys"); break;
      case "zoom":
        if (!q("#viewer")) pictures(e.key === "." ? "fit" : e.key === "-" ? "zoomOut" : "zoomIn");
        else if (e.key === ".") resetZoom(); else zoom(e.key === "-" ? 0.8 : 1.25);
        break;
      case "pan": pictures("pan", e.key); break;
      case "flicker": pictures("flicker"); break;
      case "fullsize": fullSize(); break;
      case "close":
        ["guidelines", "keys"].forEach(function (id) { var p = document.getElementById(id); if (p) p.hidden = true; });
        var v = q("#viewer.fullsize"); if (v) fullSize();
        pictures("sideBySide");
        clips("sideBySide");
        break;
      default:
        if (action.indexOf("point-") === 0) {
          var point = q("#strength-" + action.slice(6));
          if (point) setRadio("strength", point.value);
        } else if (action.indexOf("grade-") === 0) {
          var parts = action.split("-");
          setRadio("grade_" + parts[1], parts[2]);
        }
        break;
    }
    e.preventDefault();
  });

  // --- errors ---------------------------------------------------------------
  // A rejected submit or skip comes back as #work with the messages beside
  // their fields: focus the first invalid field and announce the summary.
  function showErrors() {
    var w = work();
    if (!w || !w.dataset.errors) return;
    var summary = document.getElementById("error-summary");
    var announce = document.getElementById("announce");
    if (announce && summary) {
      // A change of text is what a live region announces: clear, then set.
      announce.textContent = "";
      setTimeout(function () {
        var items = Array.prototype.map.call(summary.querySelectorAll("li"), function (li) { return li.textContent; });
        announce.textContent = summary.querySelector("h2").textContent + ": " + items.join(" ");
      }, 50);
    }
    var first = w.querySelector('[aria-invalid="true"]');
    if (first) {
      var details = first.closest("details"); if (details) details.open = true;
      first.focus({ preventScroll: true });
      first.scrollIntoView({ block: "center" });
    } else if (summary) {
      summary.setAttribute("tabindex", "-1"); summary.focus();
    }
  }
  function alertFailure(text) {
    var box = document.getElementById("work-alert");
    if (!box) return;
    box.textContent = text;
    box.hidden = false;
  }
  document.addEventListener("htmx:beforeRequest", function () {
    var box = document.getElementById("work-alert");
    if (box) { box.hidden = true; box.textContent = ""; }
  });
  document.addEventListener("htmx:responseError", function (e) {
    var status = e.detail.xhr ? e.detail.xhr.status : 0;
    alertFailure(status === 403 || status === 404
      ? "This item is no longer yours (answer " + status + "); nothing was saved. Reload the page to go on."
      : "The server could not save this (answer " + status + "); nothing was saved. Press Enter to try again.");
  });
  document.addEventListener("htmx:sendError", function () {
    alertFailure("The server could not be reached; nothing was saved. Check the connection and press Enter to try again.");
  });
  document.addEventListener("htmx:timeout", function () {
    alertFailure("The server took too long to answer; nothing was saved. Press Enter to try again.");
  });

  // --- time on task ---------------------------------------------------------
  ["pointermove", "scroll", "pointerdown"].forEach(function (type) {
    document.addEventListener(type, function () { state.lastInput = Date.now(); }, { passive: true });
  });
  function tick() {
    var now = Date.now();
    // Active = page visible and some input in the last 60 s.
    if (document.visibilityState === "visible" && now - state.lastInput < 60000) {
      state.active += (now - state.lastTick) / 1000;
    }
    state.lastTick = now;
    var t = document.getElementById("timer");
    if (t) {
      var s = Math.round(state.active);
      t.textContent = Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
    }
  }
  function init() {
    state.scale = 1; state.x = 0; state.y = 0; state.active = 0;
    state.lastInput = state.lastTick = Date.now();
    if (state.timer) clearInterval(state.timer);
    state.timer = setInterval(tick, 1000);
    applyTransform();
    pictures("reset");
    clips("reset");
  }
  document.addEventListener("DOMContentLoaded", function () {
    messagesItem = work() ? work().dataset.assignment : null;
    init();
    if (work() && work().dataset.errors) showErrors(); else prefetch();
  });
  // htmx gives focus back to the element with the focused one's id: on a new
  // item that would leave the keys typing into its text box instead (blurred
  // in the swap's own task, before any key can reach it).
  document.addEventListener("htmx:afterSwap", function (e) {
    var w = work();
    if (!w || !e.detail.target || e.detail.target.id !== "work") return;
    if (!w.dataset.errors && document.activeElement && w.contains(document.activeElement)) document.activeElement.blur();
    pictures("reset");  // at one scale before the first paint, not after the settle
    shown(w);
  });
  // Back and Forward: the address must name what is on screen. When the
  // entry is one this page pushed (htmx or the item kept ready) and the item
  // shown is not the one it names, load it.
  window.addEventListener("popstate", function () {
    var w = work();
    var m = location.pathname.match(/\/a\/(\d+)\/$/);
    if (w && (!m || m[1] !== w.dataset.assignment)) location.reload();
  });
  document.addEventListener("htmx:afterSettle", function () {
    var w = work();
    if (!w) return;
    init();
    if (w.dataset.errors) showErrors(); else prefetch();
  });
})();
