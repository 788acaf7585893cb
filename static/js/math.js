// Typesets the TeX that annotate/rendering.py leaves in .math-inline and
// .math-display elements, on page load and on content htmx swaps in.
// No inline script: load with <script src=… defer> after katex.min.js.
// If KaTeX is missing or fails, the escaped TeX source stays readable.
(function () {
  "use strict";

  var SELECTOR = ".math-inline, .math-display";
  var DONE = "math-rendered";
  // KaTeX (~300 KB) is loaded only when a page actually has math: the script
  // tag names it in data-katex-js / data-katex-css.
  var self = document.currentScript;
  var KATEX_JS = self && self.getAttribute("data-katex-js");
  var KATEX_CSS = self && self.getAttribute("data-katex-css");
  var waiting = null;

  function withKatex(callback) {
    if (typeof window.katex !== "undefined") {
      callback();
      return;
    }
    if (!KATEX_JS) {
      return;
    }
    if (waiting === null) {
      waiting = [];
      if (KATEX_CSS) {
        var link = document.createElement("link");
        link.rel = "stylesheet";
        link.href = KATEX_CSS;
        document.head.appendChild(link);
      }
      var script = document.createElement("script");
      script.src = KATEX_JS;
      script.onload = function () {
        waiting.forEach(function (fn) { fn(); });
        waiting = [];
      };
      document.head.appendChild(script);
    }
    waiting.push(callback);
  }

  function renderMath(root) {
    if (!root || !root.querySelectorAll) {
      return;
    }
    var hasMath = root.querySelector(SELECTOR) || (root.matches && root.matches(SELECTOR));
    if (!hasMath) {
      return;
    }
    withKatex(function () { typeset(root); });
  }

  function typeset(root) {
    var nodes = Array.prototype.slice.call(root.querySelectorAll(SELECTOR));
    if (root.matches && root.matches(SELECTOR)) {
      nodes.push(root);
    }
    nodes.forEach(function (el) {
      if (el.classList.contains(DONE)) {
        return;
      }
      var tex = el.textContent;
      try {
        // throwOnError: true, because KaTeX's own error rendering sets a
        // style attribute, which a CSP without 'unsafe-inline' styles blocks.
        window.katex.render(tex, el, {
          displayMode: el.classList.contains("math-display"),
          throwOnError: true,
          trust: false, // no \href, \url, \includegraphics, \html… from data
          strict: "ignore",
          maxSize: 10, // em; stops \rule{1e5em}{1e5em} covering the page
          maxExpand: 1000,
        });
        el.classList.add(DONE);
        el.setAttribute("title", tex);
      } catch (err) {
        // katex.render empties the element before parsing: put the source back.
        el.textContent = tex;
        el.classList.add(DONE, "math-error");
        el.setAttribute("title", String(err && err.message ? err.message : err));
      }
    });
  }

  function onSwap(event) {
    renderMath(event.target);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () {
      renderMath(document.body);
    });
  } else {
    renderMath(document.body);
  }
  document.addEventListener("htmx:load", onSwap);
  document.addEventListener("htmx:afterSwap", onSwap);
  // For content put in by other scripts (the compare page's next item, typeset
  // while it waits out of the document); idempotent.
  window.studioMath = { render: renderMath };
})();
