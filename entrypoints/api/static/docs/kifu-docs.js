// Starts Swagger UI on this server's own contract (GET /docs, entrypoints/api/spec.py).
// Nothing leaves this origin: no validator badge (validatorUrl: null), no URL box, no config from the query.
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.spec,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    queryConfigEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
