// The compare page of a best-of-N or ranking item (#work[data-task]): the
// keys and drag and drop that fill its plain form (templates/annotate/
// _slots_form.html), whose selects and radios post the same thing without
// this script. Positions are the displayed ones (1 = response A, shown
// first); the server maps them to canonical slots (annotate.loop.rules).
//
// Ranking: a digit places that response next; `=` then a digit places it
// tied with the previous place; Backspace takes the last placement back
// (with nothing placed it falls through to work.js: undo the last vote).
// Best of N: a digit picks that response, 0 none of them (where the
// project allows "none").
// Per-response answers where the domain asks them: y / n / u, then a
// response's number: that response is correct / incorrect / unsure; z / c / v,
// then a number: its grade is A / B / C (any other key cancels the first).
// Every change is announced in the #rank-live region.
// Bound once on document (capture phase, before work.js's keys), so it keeps
// working after htmx swaps in the next item.
(function () {
  "use strict";

  var NAMES = "ABCDEFGHI";
  // The ranking as places (arrays of positions, best first) and the order
  // positions were placed in (Backspace takes the last one back).
  var state = { work: null, places: [], placed: [], tieNext: false };

  function work() {
    var w = document.getElementById("work");
    return w && w.dataset.task ? w : null;
  }
  function n() { return parseInt(work().dataset.n, 10); }
  function name(position) { return NAMES.charAt(position - 1); }
  function live(text) {
    var region = document.getElementById("rank-live");
    if (!region) return;
    // A change of text is what a live region announces: clear, then set.
    region.textContent = "";
    setTimeout(function () { region.textContent = text; }, 30);
  }
  function select(position) { return document.getElementById("rank_" + position); }

  // The state of a freshly shown item: read from its selects (a revision,
  // or a refused form, comes back with its places filled in).
  function load() {
    var w = work();
    state.work = w;
    state.places = [];
    state.placed = [];
    state.tieNext = false;
    if (!w || w.dataset.task !== "ranking") return;
    var byRank = {};
    for (var p = 1; p <= n(); p++) {
      var s = select(p);
      if (s && s.value) (byRank[s.value] = byRank[s.value] || []).push(p);
    }
    Object.keys(byRank).map(Number).sort(function (a, b) { return a - b; }).forEach(function (rank) {
      state.places.push(byRank[rank]);
      state.placed = state.placed.concat(byRank[rank]);
    });
    render();
  }
  function current() {
    if (state.work !== work()) load();
    return state;
  }

  // Places -> the selects (competition ranks: a place after a tie of two
  // is 3rd) and the list shown under the responses.
  function rankOf(placeIndex) {
    var before = 0;
    for (var i = 0; i < placeIndex; i++) before += state.places[i].length;
    return before + 1;
  }
  function render() {
    var w = work();
    if (!w) return;
    for (var p = 1; p <= n(); p++) { var s = select(p); if (s) s.value = ""; }
    w.querySelectorAll(".response[data-position]").forEach(function (card) { card.removeAttribute("data-rank"); });
    state.places.forEach(function (place, i) {
      var rank = rankOf(i);
      place.forEach(function (position) {
        var s = select(position);
        if (s) s.value = String(rank);
        var card = w.querySelector('.response[data-position="' + position + '"]');
        if (card) card.setAttribute("data-rank", String(rank));
      });
    });
    var list = document.getElementById("places");
    if (!list) return;
    list.textContent = "";
    state.places.forEach(function (place, i) {
      var li = document.createElement("li");
      li.className = "place";
      li.dataset.place = String(i);
      var rank = document.createElement("span");
      rank.className = "place-rank";
      rank.textContent = ordinal(rankOf(i)) + (place.length > 1 ? " (tie)" : "");
      li.appendChild(rank);
      place.forEach(function (position) {
        var chip = document.createElement("span");
        chip.className = "chip";
        chip.draggable = true;
        chip.dataset.position = String(position);
        chip.textContent = "Response " + name(position);
        li.appendChild(chip);
      });
      list.appendChild(li);
    });
    var unplaced = [];
    for (var q = 1; q <= n(); q++) if (state.placed.indexOf(q) < 0) unplaced.push(q);
    if (unplaced.length) {
      var next = document.createElement("li");
      next.className = "place next";
      next.dataset.place = "next";
      next.textContent = "Next place (" + ordinal(state.placed.length + 1) + "): press " +
        unplaced.map(String).join(", ") + (state.tieNext ? " — tied with the previous place" : "") +
        ", or drop a response here";
      list.appendChild(next);
    }
  }
  function ordinal(k) {
    var s = ["th", "st", "nd", "rd"], v = k % 100;
    return k + (s[(v - 20) % 10] || s[v] || s[0]);
  }
  function describe() {
    return state.places.map(function (place, i) {
      return ordinal(rankOf(i)) + ": " + place.map(name).join(" = ");
    }).join("; ");
  }

  function remove(position) {
    state.places = state.places
      .map(function (place) { return place.filter(function (p) { return p !== position; }); })
      .filter(function (place) { return place.length; });
    state.placed = state.placed.filter(function (p) { return p !== position; });
  }
  // Place `position` next, or (tie) in the last place; a response already
  // placed moves.
  function place(position, tie) {
    remove(position);
    if (tie && state.places.length) state.places[state.places.length - 1].push(position);
    else state.places.push([position]);
    state.placed.push(position);
    render();
    var i = state.places.length - 1;
    var tied = state.places[i].length > 1;
    live("Response " + name(position) + (tied ? " tied " : " placed ") + ordinal(rankOf(i)) +
      (state.placed.length === n() ? ". Every response is placed: " + describe() + ". Enter submits." : "."));
  }
  function takeBack() {
    var position = state.placed[state.placed.length - 1];
    remove(position);
    state.tieNext = false;
    render();
    live("Response " + name(position) + " taken back." + (state.places.length ? " " + describe() + "." : " Nothing placed."));
  }
  // Drop `position` on a place (tie with it), on the next place, or back
  // among the unplaced (anywhere else in the ranking box).
  function dropOn(position, target) {
    if (target === "next") { place(position, false); return; }
    var i = parseInt(target, 10);
    if (isNaN(i) || !state.places[i]) return;
    var others = state.places[i].filter(function (p) { return p !== position; });
    if (!others.length) return;  // dropped on its own place
    remove(position);
    var index = state.places.findIndex(function (place) { return place.indexOf(others[0]) >= 0; });
    state.places[index].push(position);
    state.placed.push(position);
    render();
    live("Response " + name(position) + " tied " + ordinal(rankOf(index)) + ".");
  }

  function isTyping(el) {
    if (!el) return false;
    if (el.isContentEditable) return true;
    var tag = el.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    return tag === "INPUT" && !/^(radio|checkbox|button|submit|hidden)$/.test(el.type);
  }
  function pick(value) {
    var input = document.querySelector('#work input[name="pick"][value="' + value + '"]');
    if (!input) return;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    live(value === "none" ? "None is acceptable." : "Response " + name(parseInt(value, 10)) + " picked as the best.");
  }

  // A per-response answer's first key (annotate.loop.slots_page.LABEL_KEYS):
  // the radio group and value it fills with the next digit's response.
  var LABELS = {
    y: ["correct", "yes"], n: ["correct", "no"], u: ["correct", "unsure"],
    z: ["grade", "A"], c: ["grade", "B"], v: ["grade", "C"]
  };
  var pending = null;
  function labelInput(label, position) {
    return document.getElementById(label[0] + "_" + position + "-" + label[1]);
  }
  function answer(label, position) {
    var input = labelInput(label, position);
    if (!input) return;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    var text = input.parentNode.textContent.trim();
    live((label[0] === "grade" ? "Grade " : "") + text + ": response " + name(position) + ".");
  }

  document.addEventListener("keydown", function (e) {
    var w = work();
    if (!w || e.altKey || e.metaKey || e.ctrlKey || isTyping(e.target)) return;
    var digit = /^[0-9]$/.test(e.key) ? parseInt(e.key, 10) : -1;
    var handled = false;
    if (pending) {
      var label = pending;
      pending = null;
      if (digit >= 1 && digit <= n()) {
        answer(label, digit);
        e.preventDefault(); e.stopImmediatePropagation();
        return;
      }
      live("Cancelled.");
      if (e.key === "Escape") { e.preventDefault(); e.stopImmediatePropagation(); return; }
    } else if (LABELS[e.key] && labelInput(LABELS[e.key], 1)) {
      pending = LABELS[e.key];
      live((pending[0] === "grade" ? "Grade " + pending[1] : labelInput(pending, 1).parentNode.textContent.trim()) + ": which response? Press its number, 1 to " + n() + ".");
      e.preventDefault(); e.stopImmediatePropagation();
      return;
    }
    if (w.dataset.task === "best_of_n") {
      if (digit === 0) { pick("none"); handled = true; }
      else if (digit >= 1 && digit <= n()) { pick(String(digit)); handled = true; }
    } else {
      var s = current();
      if (digit >= 1 && digit <= n()) {
        place(digit, s.tieNext);
        s.tieNext = false;
        render();
        handled = true;
      } else if (e.key === "=") {
        if (!s.places.length) live("Place a response first: = ties the next one with it.");
        else { s.tieNext = true; render(); live("Tie: the next response you place shares the " + ordinal(rankOf(s.places.length - 1)) + " place."); }
        handled = true;
      } else if (e.key === "Backspace" && s.placed.length) {
        takeBack();
        handled = true;
      }
    }
    if (handled) { e.preventDefault(); e.stopImmediatePropagation(); }
  }, true);

  // The selects, chosen by hand: the ranking follows them.
  document.addEventListener("change", function (e) {
    if (work() && e.target.matches && e.target.matches('select[name^="rank_"]')) {
      var keep = e.target.value;
      load();
      live(keep ? "Response " + name(parseInt(e.target.dataset.position, 10)) + " set to place " + keep + "." : "Place cleared.");
    }
  });

  // --- drag and drop: a response card or a chip, onto a place (tie with
  // it), the next place, or back onto the responses (unplaced) -------------
  document.addEventListener("dragstart", function (e) {
    var w = work();
    if (!w || w.dataset.task !== "ranking") return;
    var source = e.target.closest && e.target.closest(".response[data-position], .chip[data-position]");
    if (!source) return;
    current();
    e.dataTransfer.setData("text/plain", source.dataset.position);
    e.dataTransfer.effectAllowed = "move";
  });
  function dropTarget(e) {
    return e.target.closest && e.target.closest("#places .place, #places, .slots-form .responses.slots");
  }
  document.addEventListener("dragover", function (e) {
    if (work() && dropTarget(e)) { e.preventDefault(); e.dataTransfer.dropEffect = "move"; }
  });
  document.addEventListener("drop", function (e) {
    var target = dropTarget(e);
    if (!work() || !target) return;
    e.preventDefault();
    var position = parseInt(e.dataTransfer.getData("text/plain"), 10);
    if (!(position >= 1 && position <= n())) return;
    current();
    if (target.classList.contains("place")) dropOn(position, target.dataset.place);
    else if (target.id === "places") place(position, false);
    else { remove(position); render(); live("Response " + name(position) + " taken back."); }
  });

  // Each item as it is shown (page load, htmx swap, the item kept ready).
  function init() { pending = null; var w = work(); if (w) { w.querySelectorAll(".response[data-position]").forEach(function (c) { if (w.dataset.task === "ranking") c.draggable = true; }); load(); } }
  document.addEventListener("DOMContentLoaded", init);
  document.addEventListener("htmx:afterSwap", init);
  document.addEventListener("work:shown", init);
  if (document.readyState !== "loading") init();
})();
