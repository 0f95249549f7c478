// Starts Swagger UI or ReDoc on /docs and /redoc from static/vendor (no inline script: our CSP is 'self').
(function () {
  "use strict";
  var root = document.querySelector("[data-api-docs]");
  if (!root) return;
  var spec = root.getAttribute("data-spec");
  if (root.getAttribute("data-api-docs") === "swagger" && window.SwaggerUIBundle) {
    window.SwaggerUIBundle({
      url: spec,
      domNode: root,
      deepLinking: true,
      presets: [window.SwaggerUIBundle.presets.apis],
      layout: "BaseLayout",
    });
  } else if (root.getAttribute("data-api-docs") === "redoc" && window.Redoc) {
    window.Redoc.init(spec, { disableSearch: true }, root);
  }
})();
