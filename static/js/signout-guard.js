/* Sign-out asks first when this browser still holds answers the reader submitted that the
 * server has not acknowledged (offline, a server error being retried, or the reader left the
 * reading page before they went). Sign-out clears the site's storage (Clear-Site-Data), so
 * without this question they would be lost without a word.
 *
 * The count is ReaderStore.unsentCount's (reader-store.js): the outbox format lives there.
 */
(function () {
  "use strict";
  function wire() {
    const user = document.body && document.body.dataset.user;
    document.querySelectorAll("form[data-signout]").forEach((form) => {
      form.addEventListener("submit", (event) => {
        const count = window.ReaderStore ? window.ReaderStore.unsentCount(null, user) : 0;
        if (count === 0) return;
        const what = count === 1 ? "1 answer you submitted has" : `${count} answers you submitted have`;
        const ok = window.confirm(
          `${what} not reached the server yet. Signing out now deletes ${count === 1 ? "it" : "them"} ` +
          "from this browser.\n\nCancel, then open the study again while connected: " +
          `${count === 1 ? "it is" : "they are"} sent by itself.\n\nSign out anyway?`
        );
        if (!ok) event.preventDefault();
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire);
  else wire();
})();
