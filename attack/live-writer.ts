import { Session } from '../src/transcript/session.ts';
import { TranscriptError } from '../src/transcript/transcript-error.ts';

/*
 * A live run, as far as the file is concerned: a process that holds one transcript's Session
 * open and appends on command (IPC). `{ id, op: 'open', path }`, `{ id, op: 'append', text }`
 * (one message record, then a barrier), `{ id, op: 'close' }`; each is answered
 * `{ id, ok, code?, message?, lastSeq? }`.
 */

let session: Session | null = null;

async function handle(command: { op: string; path?: string; text?: string }) {
  try {
    if (command.op === 'open') {
      session = await Session.open(command.path ?? '', { durability: 'fsync' });
      return { ok: true, lastSeq: session.lastSeq };
    }
    if (session === null) return { ok: false, code: 'no-session', message: 'nothing open' };
    if (command.op === 'append') {
      await session.append({
        type: 'message',
        role: 'user',
        content: [{ type: 'text', text: command.text ?? 'live writer' }],
      });
      await session.barrier();
      return { ok: true, lastSeq: session.lastSeq };
    }
    if (command.op === 'close') {
      await session.close();
      session = null;
      return { ok: true };
    }
    return { ok: false, code: 'unknown-op', message: command.op };
  } catch (error) {
    return {
      ok: false,
      code: TranscriptError.isInstance(error) ? error.code : 'threw',
      message: String(error).split('\n')[0],
    };
  }
}

process.on('message', (message: { id: number; op: string; path?: string; text?: string }) => {
  void handle(message).then((reply) => process.send?.({ id: message.id, ...reply }));
});
process.on('disconnect', () => process.exit(0));
process.send?.({ id: 0, ok: true });
