// The API reference follows the pages' theme (docs/web.md "Theming"): the choice of the theme
// switcher kept in this origin's localStorage ("theme": "light" or "dark"), else the system's
// prefers-color-scheme. Swagger UI's own dark styles apply under <html class="dark-mode">.
// Loaded in <head>, before the first paint; it follows a change of either while the page is open.
/* global window, document */
(function followTheme() {
  var media = window.matchMedia('(prefers-color-scheme: dark)');
  function stored() {
    try {
      return window.localStorage.getItem('theme');
    } catch {
      return null; // storage refused: the system's setting decides
    }
  }
  function apply() {
    var theme = stored();
    var dark = theme === 'dark' || (theme !== 'light' && media.matches);
    document.documentElement.classList.toggle('dark-mode', dark);
  }
  apply();
  media.addEventListener('change', apply);
  window.addEventListener('storage', function (event) {
    if (event.key === 'theme' || event.key === null) apply();
  });
})();
