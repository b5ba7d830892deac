// Queue tabs that do not fit scroll sideways; a fade and an arrow show on each side that has more
// (classes more-left / more-right on #queue-scroller), and the current tab is scrolled into view.
(function () {
  "use strict";
  const scroller = document.getElementById("queue-scroller");
  const tabs = document.getElementById("queue-tabs");
  if (!scroller || !tabs) return;

  function update() {
    const rest = tabs.scrollWidth - tabs.clientWidth - tabs.scrollLeft;
    scroller.classList.toggle("more-left", tabs.scrollLeft > 1);
    scroller.classList.toggle("more-right", rest > 1);
  }

  scroller.addEventListener("click", (event) => {
    const arrow = event.target.closest("[data-scroll]");
    if (arrow) tabs.scrollBy({ left: Number(arrow.dataset.scroll) * tabs.clientWidth * 0.7, behavior: "smooth" });
  });
  tabs.addEventListener("scroll", update, { passive: true });
  new ResizeObserver(update).observe(tabs);
  const current = tabs.querySelector("[aria-current='page']");
  if (current && current.offsetLeft + current.offsetWidth > tabs.clientWidth) {
    tabs.scrollLeft = current.offsetLeft - tabs.clientWidth / 3;
  }
  update();
})();
