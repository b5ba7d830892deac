// The workflow picture: mermaid (from npm, served as a static file) draws the <pre class="mermaid">
// text as a diagram. Without mermaid the text stays, readable, with the path listed above it.
// Drawn with mermaid's "dark" theme when the page is dark (theme.js's html[data-theme], or the
// device's prefers-color-scheme under "auto") and drawn again when the theme changes.
(function () {
  "use strict";
  const pre = document.getElementById("workflow-picture");
  if (!pre || !window.mermaid) return;
  const root = document.documentElement;
  const darkQuery = window.matchMedia("(prefers-color-scheme: dark)");
  const source = pre.textContent;
  let drawnDark = null;

  function isDark() {
    return root.dataset.theme === "dark" || (root.dataset.theme !== "light" && darkQuery.matches);
  }

  function draw() {
    const dark = isDark();
    if (dark === drawnDark) return;
    drawnDark = dark;
    window.mermaid.initialize({
      startOnLoad: false,
      securityLevel: "strict",
      theme: dark ? "dark" : "neutral",
      flowchart: { htmlLabels: false },
    });
    pre.removeAttribute("data-processed");
    pre.classList.remove("drawn", "failed");
    pre.textContent = source;
    pre.dataset.pictureTheme = dark ? "dark" : "light";
    window.mermaid
      .run({ nodes: [pre] })
      .then(() => pre.classList.add("drawn"))
      .catch(() => pre.classList.add("failed"));
  }

  draw();
  darkQuery.addEventListener("change", draw);
  new MutationObserver(draw).observe(root, { attributes: true, attributeFilter: ["data-theme"] });
})();
