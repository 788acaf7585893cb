// Adjudication page keyboard: 1/2 resolve for a response, x exclude, c the
// exclusion category, m more votes, o reopen, r reason, Ctrl+Enter save,
// n next contested, b queue. Every key leaves focus where the next key
// belongs: after a decision key that is the reason box (the reason is what
// comes next and it is required), so a typed reason never lands in the
// category list or anywhere else (issue 31).
(function () {
  "use strict";
  function form() { return document.getElementById("decision"); }
  function pick(name, value) {
    var input = form() && form().querySelector('input[name="' + name + '"][value="' + value + '"]');
    if (input) { input.checked = true; }
    return !!input;
  }
  function reason() { var r = form() && form().querySelector('textarea[name="reason"]'); if (r) r.focus(); }
  function category() { return form() && form().querySelector('select[name="category"]'); }
  // Ctrl+Enter saves the form being typed in (the decision, or the
  // check/qualification item form below it).
  function save(target) {
    var own = target && target.closest && target.closest("form");
    var f = own && own.method === "post" ? own : form();
    if (!f || f.querySelector('button[type="submit"]:disabled')) return; // e.g. conflict of interest
    if (typeof f.requestSubmit === "function") f.requestSubmit(); else f.submit();
  }
  function isTyping(el) {
    var tag = el && el.tagName;
    return tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && !/^(radio|checkbox)$/.test(el.type));
  }
  // Choosing a category (mouse or keys) means excluding.
  document.addEventListener("change", function (e) {
    if (e.target === category()) pick("action", "exclude");
  });
  document.addEventListener("keydown", function (e) {
    var head = document.getElementById("adjudicate");
    if (!head || e.altKey || e.metaKey) return;
    if (e.key === "Enter" && e.ctrlKey) { e.preventDefault(); save(e.target); return; }
    // In the category list the arrows choose; Enter or r goes on to the
    // reason (letters would otherwise jump between categories).
    if (e.target === category() && !e.ctrlKey && (e.key === "Enter" || e.key === "r")) {
      e.preventDefault(); pick("action", "exclude"); reason(); return;
    }
    if (isTyping(e.target)) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    if (e.ctrlKey) return;
    var handled = true;
    switch (e.key) {
      case "1": case "2":
        if (pick("action", "resolve")) { pick("choice", e.key); reason(); }
        break;
      case "0":
        if (form().querySelector('input[name="choice"][value="tie"]') && pick("action", "resolve")) {
          pick("choice", "tie"); reason();
        } else handled = false;
        break;
      case "x": if (pick("action", "exclude")) reason(); break;
      case "c": var c = category(); if (c && pick("action", "exclude")) c.focus(); else handled = false; break;
      case "m": if (pick("action", "more_votes")) reason(); break;
      case "o": if (pick("action", "reopen")) reason(); break;
      case "r": reason(); break;
      case "n": if (head.dataset.next) window.location.href = head.dataset.next; break;
      case "b": window.location.href = head.dataset.queue; break;
      default: handled = false;
    }
    if (handled) e.preventDefault();
  });
})();
