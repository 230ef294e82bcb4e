/* Copy buttons (GitHub-style): a button with data-copy puts that text on the clipboard and says
 * "Copied" for a moment. Hidden without JavaScript, where the text stays selectable in its box.
 * Where the clipboard is refused (an insecure origin, an old browser), the text is selected in
 * a box so Ctrl/⌘+C copies it. */
(function () {
  "use strict";

  function fallback(text) {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    let ok = false;
    try { ok = document.execCommand("copy"); } catch (_) { /* not copied */ }
    area.remove();
    return ok;
  }

  async function copy(text) {
    try {
      if (navigator.clipboard && window.isSecureContext) { await navigator.clipboard.writeText(text); return true; }
    } catch (_) { /* refused: the fallback below */ }
    return fallback(text);
  }

  document.addEventListener("click", async (e) => {
    const button = e.target.closest && e.target.closest("button[data-copy]");
    if (!button) return;
    const label = button.dataset.label || button.textContent;
    button.dataset.label = label;
    const ok = await copy(button.dataset.copy);
    button.textContent = ok ? "Copied ✓" : "Select and copy (Ctrl/⌘+C)";
    button.classList.toggle("copied", ok);
    setTimeout(() => { button.textContent = label; button.classList.remove("copied"); }, 2000);
  });

  document.querySelectorAll("button[data-copy]").forEach((b) => { b.hidden = false; });
})();
