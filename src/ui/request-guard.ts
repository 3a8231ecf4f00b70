/**
 * What every request to the ui server must pass before it is routed, and the headers every
 * answer carries: the Host check (DNS rebinding), the token, and the rules for the one
 * state-changing request (POST /revive). Pure decisions on a request's parts.
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
 * const keys: GuardKeys = { origin: 'http://127.0.0.1:8080', token, cookieName: 'llm_agent_ui_8080' };
 */
export interface GuardKeys {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  token: string;
  cookieName: string;
}

/**
 * What to do with a request: refuse it (with the status and text to answer), or serve it —
 * with a cookie to set when the token came in the query.
 *
 * @example
 * const refused: GuardVerdict = { refuse: 403, text: 'forbidden: wrong Host' };
 */
export type GuardVerdict =
  | { refuse: number; text: string }
  | { refuse?: undefined; setCookie?: string };

/**
 * The verdict on `request` (its URL parsed as `url`): a foreign Host is refused; so is a
 * request without the token (in the query, the cookie or the header); a POST must carry the
 * token in the `X-LLM-Agent-Token` header, come from no foreign `Origin`, and be `/revive`.
 *
 * @example
 * const verdict = guard(request, url, { origin, token, cookieName });
 * if (verdict.refuse !== undefined) reply(response, verdict.refuse, 'text/plain', verdict.text);
 */
export function guard(request: IncomingMessage, url: URL, keys: GuardKeys): GuardVerdict {
  const { origin, token, cookieName } = keys;
  // A page of another host name that resolves to us (DNS rebinding) is not served.
  if (request.headers.host !== origin.slice('http://'.length)) {
    return { refuse: 403, text: 'forbidden: wrong Host' };
  }
  const byQuery = same(url.searchParams.get('token'), token);
  const byCookie = same(cookieOf(request, cookieName), token);
  const header = request.headers['x-llm-agent-token'];
  const byHeader = same(typeof header === 'string' ? header : null, token);
  if (!byQuery && !byCookie && !byHeader) {
    return { refuse: 403, text: 'forbidden: open the URL llm-agent ui printed' };
  }
  if (request.method === 'POST') {
    const foreign = request.headers.origin !== undefined && request.headers.origin !== origin;
    if (!byHeader || foreign || url.pathname !== '/revive')
      return { refuse: 403, text: 'forbidden' };
  }
  return byQuery && !byCookie
    ? { setCookie: `${cookieName}=${token}; HttpOnly; SameSite=Strict; Path=/` }
    : {};
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

function cookieOf(request: IncomingMessage, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return null;
}
