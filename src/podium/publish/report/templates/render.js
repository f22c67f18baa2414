// Renders every <div class="vega" data-spec="..."> with the vendored Vega-Lite and Vega, as SVG.
// Vega's expressions are interpreted from their syntax trees (vega-interpreter), never compiled with Function:
// the pages' Content-Security-Policy has no 'unsafe-eval'.
// A chart that rendered gets data-rendered="true"; one that failed shows why and gets data-rendered="error".
(function () {
  function renderAll(root) {
    root.querySelectorAll("div.vega:not([data-rendered])").forEach(function (el) {
      el.dataset.rendered = "pending";
      try {
        var compiled = vegaLite.compile(JSON.parse(el.dataset.spec)).spec;
        var options = { expr: vega.expressionInterpreter, renderer: "svg", container: el, hover: true };
        new vega.View(vega.parse(compiled, null, { ast: true }), options)
          .runAsync()
          .then(function () { el.dataset.rendered = "true"; })
          .catch(function (e) { el.textContent = "chart failed: " + e; el.dataset.rendered = "error"; });
      } catch (e) { el.textContent = "chart failed: " + e; el.dataset.rendered = "error"; }
    });
  }
  renderAll(document);
  document.addEventListener("htmx:afterSwap", function (event) { renderAll(event.target); });
})();
