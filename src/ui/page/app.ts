/**
 * The script of the ui's pages, run in the browser (never in Node): type-checked against the
 * DOM by `tsconfig.page.json`, linted with the rest, and served by the server as the source
 * text of this module's functions with {@link pageScript} called once (`page-script.ts`). No
 * inline script anywhere; every text from the server is set as text, never as markup. It
 * streams the command's output into the log, and redraws the page (the filter chosen and the
 * folds opened kept) when the server says the runs changed.
 *
 * Self-contained: the functions are served by their source text, so they may use nothing but
 * the browser and each other (each is exported for that), and keep their state in a
 * {@link PageState}.
 *
 * @module
 */

/**
 * What the page's functions share.
 *
 * @example
 * const state: PageState = { token: 'abc', reviving: false, redrawing: false, again: false };
 */
export interface PageState {
  /** The token a Confirm carries in its header. */
  token: string;
  /** A Confirm's command is running: changes are redrawn at its end. */
  reviving: boolean;
  /** A redraw is under way. */
  redrawing: boolean;
  /** A change came during the redraw: one more after it. */
  again: boolean;
}

/**
 * Runs in the page once, when `/app.js` loads (at the end of `<body>`).
 *
 * @example
 * pageScript(); // served as: (function () { 'use strict'; …functions…; pageScript(); })();
 */
export function pageScript(): void {
  const token = document.querySelector('meta[name="llm-agent-token"]')?.getAttribute('content');
  const state: PageState = { token: token ?? '', reviving: false, redrawing: false, again: false };
  listen(state);
  bindConfirm(state);
  localTimes();
}

/**
 * Shows every `<time>` of the page in the viewer's zone, the exact UTC time on hover (the
 * server writes UTC: it does not know the viewer's zone).
 *
 * @example
 * localTimes();
 */
export function localTimes(): void {
  for (const time of document.querySelectorAll('time[datetime]')) {
    const exact = (time as HTMLTimeElement).dateTime;
    const date = new Date(exact);
    if (Number.isNaN(date.getTime())) continue;
    // A timeline's rows show the time of day only; the exact time is on hover either way.
    time.textContent = time.classList.contains('short')
      ? date.toLocaleTimeString(undefined, { timeStyle: 'medium' })
      : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
    time.setAttribute('title', `${exact} (UTC)`);
  }
}

/**
 * Adds a line of the command's output to the log, as text.
 *
 * @example
 * logLine('revive ended (exit code 0)');
 */
export function logLine(text: string): void {
  const log = document.getElementById('log');
  if (log === null) return;
  const item = document.createElement('div');
  item.textContent = text;
  log.appendChild(item);
  log.scrollTop = log.scrollHeight;
}

/**
 * Says `text` in the activity's status, with a class (`ended`, `failed`) or none.
 *
 * @example
 * showStatus('running…');
 */
export function showStatus(text: string, className?: string): void {
  const shown = document.getElementById('revive-status');
  if (shown === null) return;
  shown.textContent = text;
  if (className !== undefined) shown.className = className;
}

/**
 * Fetches the page again and swaps it in. One redraw at a time: a change announced while one
 * is under way asks for one more after it, however many changes came (a busy tree announces
 * often; each redraw reads it whole).
 *
 * @example
 * redraw(state);
 */
export function redraw(state: PageState): void {
  if (state.redrawing) {
    state.again = true;
    return;
  }
  state.redrawing = true;
  fetch(location.pathname + location.search, { credentials: 'same-origin' })
    .then((response) => response.text())
    .then((html) => swapIn(state, new DOMParser().parseFromString(html, 'text/html')))
    .catch(() => {
      // The page stays as it was until the next change.
    })
    .finally(() => {
      state.redrawing = false;
      if (state.again) {
        state.again = false;
        redraw(state);
      }
    });
}

/**
 * The parts of a fresh page put in place of the old, the filter chosen and the folds opened
 * kept.
 *
 * @example
 * swapIn(state, new DOMParser().parseFromString(html, 'text/html'));
 */
export function swapIn(state: PageState, fresh: Document): void {
  const chosen = document.querySelector<HTMLInputElement>('#filters input:checked');
  const opened: number[] = [];
  document.querySelectorAll('main details').forEach((fold, index) => {
    if ((fold as HTMLDetailsElement).open) opened.push(index);
  });
  for (const selector of ['header', 'main', '#revive']) {
    const now = document.querySelector(selector);
    const next = fresh.querySelector(selector);
    if (now !== null && next !== null) now.replaceWith(document.adoptNode(next));
  }
  if (chosen !== null) {
    const same = document.getElementById(chosen.id);
    if (same instanceof HTMLInputElement) same.checked = true;
  }
  const folds = document.querySelectorAll('main details');
  for (const index of opened) {
    const fold = folds[index];
    if (fold instanceof HTMLDetailsElement) fold.open = true;
  }
  bindConfirm(state);
  localTimes();
  document.body.setAttribute('data-refreshed', String(Date.now()));
}

/**
 * The Confirm button, if the page has one: a POST of /revive with the token in its header.
 *
 * @example
 * bindConfirm(state);
 */
export function bindConfirm(state: PageState): void {
  const button = document.getElementById('confirm');
  if (!(button instanceof HTMLButtonElement)) return;
  const refused = (text: string): void => {
    state.reviving = false;
    showStatus(text);
    button.disabled = false;
  };
  button.addEventListener('click', () => {
    button.disabled = true;
    state.reviving = true;
    showStatus('running…');
    fetch('revive', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'X-LLM-Agent-Token': state.token },
    })
      .then((response) =>
        response.ok ? undefined : response.text().then((text) => refused(`refused: ${text}`)),
      )
      .catch(() => refused('the server could not be reached: nothing was started'));
  });
}

/**
 * The server's event stream: the command's output into the log, its end into the status, and
 * a redraw when the runs changed (after a dropped stream too: a change may have been missed).
 *
 * @example
 * listen(state);
 */
export function listen(state: PageState): void {
  const events = new EventSource('events');
  let connected = false;
  events.addEventListener('open', () => {
    if (connected) redraw(state);
    connected = true;
    document.body.setAttribute('data-events', 'open');
  });
  events.addEventListener('progress', (event) => logLine((event as MessageEvent<string>).data));
  events.addEventListener('done', (event) => {
    const end = JSON.parse((event as MessageEvent<string>).data) as { line: string; ok: boolean };
    state.reviving = false;
    logLine(end.line);
    showStatus(end.line, end.ok ? 'ended' : 'failed');
    redraw(state);
  });
  events.addEventListener('tree-changed', () => {
    if (!state.reviving) redraw(state);
  });
}
