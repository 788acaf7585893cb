// Swagger UI over the generated schema. A static file (no inline script):
// the schema URL comes from the container's data attribute.
(function () {
  "use strict";
  var node = document.getElementById("swagger-ui");
  // From the page, not document.cookie: the CSRF cookie is HttpOnly.
  var csrf = node.dataset.csrfToken;
  window.ui = SwaggerUIBundle({
    url: node.dataset.schemaUrl,
    domNode: node,
    deepLinking: true,
    // "Try it out" with a browser session: unsafe methods need the CSRF token.
    requestInterceptor: function (req) {
      if (csrf) {
        req.headers["X-CSRFToken"] = csrf;
      }
      return req;
    },
  });
})();
