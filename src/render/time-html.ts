/**
 * Times on a page: exact UTC in the markup, shown in the viewer's zone by the ui's script.
 *
 * @module
 */
import { escapeHtml } from './escape-html.ts';

/** An exact UTC time of the ISO form the session writes. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/**
 * A time as the page shows it: `<time>` with the exact UTC time as its `datetime` and title
 * (the ui's script shows it in the viewer's zone; `show --html`'s page, which has no script,
 * shows UTC). A string not of the session's exact form is shown as text only, never put in an
 * attribute. `short`: the script shows the time of day only (a timeline's rows).
 *
 * @example
 * timeHtml('2026-01-01T09:00:07.000Z'); // '<time datetime="2026-01-01T09:00:07.000Z" …>2026-01-01 09:00:07 UTC</time>'
 */
export function timeHtml(at: string, short = false): string {
  if (!ISO_TIME.test(at)) return escapeHtml(at);
  const shown = at.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
  return `<time datetime="${at}" title="${at} (UTC)"${short ? ' class="short"' : ''}>${short ? shown.slice(11) : shown}</time>`;
}
