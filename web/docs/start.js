// Renders /v1/openapi.json with Swagger UI (served from the swagger-ui-dist package, no CDN).
// "Authorize" takes an access token or an API key for the bearer scheme; "Try it out" calls this origin.
/* global window, SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#api-reference',
  deepLinking: true,
  persistAuthorization: false,
  tryItOutEnabled: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
