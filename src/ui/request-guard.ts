/**
 * What every request to the ui server must pass before it is routed, and the headers every
 * answer carries: the Host check (DNS rebinding), the token, and the rules for the one
 * state-changing request (POST /revive). Pure decisions on a request's parts.
 *
 * The token is the first segment of every path (`/TOKEN/`, `/TOKEN/run?path=…`): the URL the
 * ui prints is a capability, and the pages link relatively, so each request of the page
 * carries it. There is no cookie: a browser sends the cookies of 127.0.0.1 to every port of
 * 127.0.0.1, so a cookie that authorised anything would reach any local server the user opens
 * (docs/security.md, "The web view"). The POST must also carry the token in a header, which a
 * page of another origin cannot set without a preflight the server never grants.
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Nothing loads or runs but the server's own script, style and connections. */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * Sent with every answer: no framing, no sniffing, no referrer, nothing cached.
 *
 * @example
 * for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
 */
export const SECURITY_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
} as const;

/**
 * The server's own address and secret, as the guard compares requests with them.
 *
 * @example
 * const keys: GuardKeys = { origin: 'http://127.0.0.1:8080', token };
 */
export interface GuardKeys {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  token: string;
}

/**
 * What to do with a request: refuse it (with the status and text to answer), or serve the
 * route `path` (the path after the token, from its `/`).
 *
 * @example
 * const refused: GuardVerdict = { refuse: 403, text: 'forbidden: wrong Host' };
 * const tree: GuardVerdict = { path: '/' };
 */
export type GuardVerdict = { refuse: number; text: string } | { refuse?: undefined; path: string };

/**
 * The verdict on `request` (its URL parsed as `url`): a foreign Host is refused; so is a path
 * that does not start with the token; a POST must also carry the token in the
 * `X-LLM-Agent-Token` header, come from no foreign `Origin`, and be `/revive`. The browser's
 * `/favicon.ico` is let through (it is answered with nothing).
 *
 * @example
 * const verdict = guard(request, url, { origin, token });
 * if (verdict.refuse !== undefined) reply(response, verdict.refuse, 'text/plain', verdict.text);
 */
export function guard(request: IncomingMessage, url: URL, keys: GuardKeys): GuardVerdict {
  const { origin, token } = keys;
  // A page of another host name that resolves to us (DNS rebinding) is not served.
  if (request.headers.host !== origin.slice('http://'.length)) {
    return { refuse: 403, text: 'forbidden: wrong Host' };
  }
  if (url.pathname === '/favicon.ico' && request.method === 'GET') return { path: '/favicon.ico' };
  const [, first = '', ...rest] = url.pathname.split('/');
  if (!same(first, token) || rest.length === 0) {
    return { refuse: 403, text: 'forbidden: open the URL llm-agent ui printed' };
  }
  const path = `/${rest.join('/')}`;
  if (request.method === 'POST') {
    const header = request.headers['x-llm-agent-token'];
    const byHeader = same(typeof header === 'string' ? header : null, token);
    const foreign = request.headers.origin !== undefined && request.headers.origin !== origin;
    if (!byHeader || foreign || path !== '/revive') return { refuse: 403, text: 'forbidden' };
  }
  return { path };
}

/**
 * Answers `body` whole, with its type.
 *
 * @example
 * reply(response, 404, 'text/plain', 'not found');
 */
export function reply(response: ServerResponse, code: number, type: string, body: string): void {
  response.writeHead(code, { 'Content-Type': type });
  response.end(body);
}

/** Compared in constant time; absent never matches. */
function same(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
