// Suspected label errors. Queue: s starts reviewing from the top. Review page:
// c confirm (saves at once), o overturn (then type the reason, Ctrl+Enter
// saves), r reason, n skip to the next suspect, b back to the queue.
(function () {
  "use strict";
  function form() { return document.getElementById("review-decision"); }
  function pick(value) {
    var input = form() && form().querySelector('input[name="action"][value="' + value + '"]');
    if (input) input.checked = true;
    return !!input;
  }
  function reason() { var r = form() && form().querySelector('textarea[name="reason"]'); if (r) r.focus(); }
  function save() {
    var f = form();
    if (!f || f.querySelector('button[type="submit"]:disabled')) return; // conflict of interest
    if (typeof f.requestSubmit === "function") f.requestSubmit(); else f.submit();
  }
  function isTyping(el) {
    var tag = el && el.tagName;
    return tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && !/^(radio|checkbox)$/.test(el.type));
  }
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.metaKey) return;
    var queue = document.getElementById("suspects");
    var head = document.getElementById("review");
    if (e.key === "Enter" && e.ctrlKey && head) { e.preventDefault(); save(); return; }
    if (isTyping(e.target)) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    if (e.ctrlKey) return;
    var handled = true;
    if (queue) {
      if (e.key === "s" && queue.dataset.first) window.location.href = queue.dataset.first;
      else handled = false;
    } else if (head) {
      switch (e.key) {
        case "c": if (pick("confirm")) save(); break;
        case "o": if (pick("overturn")) reason(); break;
        case "r": reason(); break;
        case "n": if (head.dataset.next) window.location.href = head.dataset.next; break;
        case "b": window.location.href = head.dataset.queue; break;
        default: handled = false;
      }
    } else handled = false;
    if (handled) e.preventDefault();
  });
})();
