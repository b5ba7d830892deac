// The workflow picture: mermaid (from npm, served as a static file) draws the <pre class="mermaid">
// text as a diagram. Without mermaid the text stays, readable, with the path listed above it.
(function () {
  "use strict";
  const pre = document.getElementById("workflow-picture");
  if (!pre || !window.mermaid) return;
  window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "neutral", flowchart: { htmlLabels: false } });
  window.mermaid
    .run({ nodes: [pre] })
    .then(() => pre.classList.add("drawn"))
    .catch(() => pre.classList.add("failed"));
})();
