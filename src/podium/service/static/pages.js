// podium's pages: local times beside UTC, and uploads sent as the request body (as the API takes them), with live status;
// without JavaScript the upload form posts as a plain form.
(function () {
  function localTimes(root) {
    root.querySelectorAll("time[datetime]:not([data-local])").forEach(function (el) {
      var when = new Date(el.getAttribute("datetime"));
      if (isNaN(when)) return;
      el.dataset.local = "1";
      el.title = when.toString();
      el.insertAdjacentText("afterend", " (" + when.toLocaleString([], { dateStyle: "medium", timeStyle: "short" }) + " your time)");
    });
  }
  function describe(answer) {
    if (answer.status === "queued") return "Submission #" + answer.id + " is queued for scoring.";
    var problems = (answer.problems || []).map(function (p) {
      return p.message + (p.file ? " (" + p.file + (p.line ? ":" + p.line : "") + ")" : "");
    });
    return (answer.detail || "Submission #" + answer.id + " was " + answer.status + ".") + (problems.length ? " " + problems.join("; ") : "");
  }
  function uploads() {
    var form = document.getElementById("upload");
    if (!form) return;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var file = form.querySelector("input[type=file]").files[0];
      var entry = form.querySelector("input[name=entry]");
      var track = form.querySelector("select[name=track]");
      var out = document.getElementById("upload-result");
      if (!file) return;
      out.textContent = "Sending " + file.name + "…";
      var query = "?filename=" + encodeURIComponent(file.name) + (entry && entry.value.trim() ? "&entry=" + encodeURIComponent(entry.value.trim()) : "") + (track ? "&track=" + encodeURIComponent(track.value) : "");
      ["method", "description", "paper_url", "code_url"].forEach(function (name) {  // the method, given with the file
        var field = form.querySelector("[name=" + name + "]");
        if (field && field.value.trim()) query += "&" + name + "=" + encodeURIComponent(field.value.trim());
      });
      var shown = form.querySelector("input[name=shown]");
      if (shown && shown.checked) query += "&shown=true";
      fetch(form.getAttribute("action") + query, {
        method: "POST", body: file, credentials: "same-origin",
        headers: { "X-CSRF-Token": document.body.dataset.csrf || "", "Accept": "application/json" },
      }).then(function (response) {
        return response.json().catch(function () { return { detail: "the server answered " + response.status }; });
      }).then(function (answer) {
        out.textContent = describe(answer);
        out.className = answer.status === "queued" ? "done" : "error";
        if (window.htmx) htmx.ajax("GET", form.dataset.rows, { target: "#rows", swap: "innerHTML" });
      }).catch(function (e) { out.textContent = "The upload failed: " + e; out.className = "error"; });
    });
  }
  document.addEventListener("DOMContentLoaded", function () { localTimes(document); uploads(); });
  document.addEventListener("htmx:afterSwap", function (event) { localTimes(event.target); });
})();
