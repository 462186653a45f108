// Follows the batches a page shows while any runs: it asks Hearth's own API (the page's
// `data-poll`: GET /v1/batches or /v1/batches/{id}) with the page's session (its cookie, and the
// page's CSRF token in x-hearth-csrf), moves each batch's progress bar and counts, and reloads
// the page when a batch's status changes (its files and its Cancel button change with it).
(() => {
  const root = document.querySelector("[data-poll]");
  if (!root) return;
  const csrf = document.querySelector('meta[name="hearth-csrf"]').content;
  const errorBox = root.querySelector(".follow-error");
  const OPEN = ["validating", "in_progress", "finalizing", "cancelling"];
  const EVERY_MS = 2000;

  const statuses = () => [...root.querySelectorAll("[data-status]")];
  const running = () => statuses().some((el) => OPEN.includes(el.dataset.status));

  /** Shows the batch's counts; whether its status is still the one the page was drawn with. */
  function update(batch) {
    const status = statuses().find((el) => el.dataset.batch === batch.id);
    if (!status) return true;
    if (status.dataset.status !== batch.status) return false;
    const progress = root.querySelector(`.batch-progress[data-batch="${CSS.escape(batch.id)}"]`);
    const { total, completed, failed } = batch.request_counts;
    const bar = progress.querySelector("progress");
    bar.max = Math.max(total, 1);
    if (total > 0) bar.value = completed + failed;
    for (const [name, n] of Object.entries({ total, completed, failed })) {
      const data = progress.querySelector(`data.${name}`);
      data.value = String(n);
      data.textContent = String(n);
    }
    return true;
  }

  async function follow() {
    if (!running()) return;
    try {
      const res = await fetch(root.dataset.poll, {
        credentials: "same-origin",
        headers: { accept: "application/json", "x-hearth-csrf": csrf },
      });
      const body = await res.json().catch(() => null);
      if (!res.ok) throw new Error(body?.error?.message || `HTTP ${res.status}`);
      const batches = Array.isArray(body.data) ? body.data : [body];
      if (!batches.every(update)) {
        location.reload();
        return;
      }
    } catch (error) {
      errorBox.textContent = `This page stopped following the batches: ${error.message} Reload it to try again.`;
      errorBox.hidden = false;
      return;
    }
    setTimeout(follow, EVERY_MS);
  }
  setTimeout(follow, EVERY_MS);
})();
