/**
 * The server-sent events of the ui: every open page's stream, and the last command's events,
 * numbered, so that a page that connects later is sent them all and one that reconnects (its
 * EventSource says the last id it saw) only what it missed.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The open event streams and the kept log of the last command.
 *
 * @example
 * const events = new EventStream();
 * events.open(request, response);
 * events.send('progress', 'revive started', true);
 */
export class EventStream {
  readonly #clients = new Set<ServerResponse>();
  #logged: { id: number; frame: string }[] = [];
  #lastId = 0;

  /** How many pages listen now. */
  get listeners(): number {
    return this.#clients.size;
  }

  /**
   * Sends `event` with `data` (a line each) to every page; `keep` numbers it and keeps it in
   * the log a later page is sent.
   */
  send(event: string, data: string, keep = false): void {
    if (keep) this.#lastId += 1;
    const id = keep ? this.#lastId : 0;
    const frame = `${keep ? `id: ${id}\n` : ''}event: ${event}\n${data
      .split(/\r\n|\r|\n/)
      .map((part) => `data: ${part}`)
      .join('\n')}\n\n`;
    if (keep) this.#logged.push({ id, frame });
    for (const client of this.#clients) client.write(frame);
  }

  /** A new command's log starts: the last one's is forgotten. */
  clearLog(): void {
    this.#logged = [];
  }

  /** Answers `request` with a stream: the kept log it has not seen, then every event sent. */
  open(request: IncomingMessage, response: ServerResponse): void {
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    response.write(': connected\n\n');
    const seenId = Number(request.headers['last-event-id'] ?? 0);
    for (const { id, frame } of this.#logged) {
      if (!(id <= seenId)) response.write(frame);
    }
    this.#clients.add(response);
    response.on('close', () => this.#clients.delete(response));
  }

  /** Ends every stream. */
  endAll(): void {
    for (const client of this.#clients) client.end();
    this.#clients.clear();
  }
}
