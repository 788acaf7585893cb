// Swagger UI over the generated schema. A static file (no inline script):
// the schema URL comes from the container's data attribute.
(function () {
  "use strict";
  var node = document.getElementById("swagger-ui");
  var csrf = document.cookie.match(/(?:^|; )csrftoken=([^;]*)/);
  window.ui = SwaggerUIBundle({
    url: node.dataset.schemaUrl,
    domNode: node,
    deepLinking: true,
    // "Try it out" with a browser session: unsafe methods need the CSRF token.
    requestInterceptor: function (req) {
      if (csrf) {
        req.headers["X-CSRFToken"] = decodeURIComponent(csrf[1]);
      }
      return req;
    },
  });
})();
