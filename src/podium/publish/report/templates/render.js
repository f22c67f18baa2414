// Renders every <div class="vega" data-spec="..."> with the vendored Vega-Lite and Vega, as SVG.
// A chart that rendered gets data-rendered="true"; one that failed shows why and gets data-rendered="error".
(function () {
  function renderAll(root) {
    root.querySelectorAll("div.vega:not([data-rendered])").forEach(function (el) {
      el.dataset.rendered = "pending";
      try {
        var compiled = vegaLite.compile(JSON.parse(el.dataset.spec)).spec;
        new vega.View(vega.parse(compiled), { renderer: "svg", container: el, hover: true })
          .runAsync()
          .then(function () { el.dataset.rendered = "true"; })
          .catch(function (e) { el.textContent = "chart failed: " + e; el.dataset.rendered = "error"; });
      } catch (e) { el.textContent = "chart failed: " + e; el.dataset.rendered = "error"; }
    });
  }
  renderAll(document);
  document.addEventListener("htmx:afterSwap", function (event) { renderAll(event.target); });
})();
