/*
 * A long-lived worker process for the race tests: it revives transcripts, or plays a live run
 * that keeps writing, on its parent's command (over the IPC channel), so that a test can race
 * separate processes for hundreds of rounds without spawning a process per round.
 */
import { Revival } from '../../../src/revival/index.ts';
import type { Session } from '../../../src/transcript/session.ts';
import { Session as SessionClass } from '../../../src/transcript/session.ts';

export type WorkerCommand =
  | { type: 'revive'; round: number; path: string; agentId: string }
  | { type: 'release'; round: number }
  | { type: 'hold'; path: string }
  | { type: 'stop' }
  | { type: 'exit' };

export type WorkerReply =
  | { type: 'revived'; round: number; pid: number; ok: boolean; reason?: string }
  | { type: 'released'; round: number }
  | { type: 'holding'; pid: number }
  | { type: 'stopped'; appended: number }
  | { type: 'error'; message: string };

let held: Session | null = null;
let writing = false;
let writer: Promise<number> | null = null;

function send(reply: WorkerReply): void {
  process.send?.(reply);
}

process.on('message', (command: WorkerCommand) => {
  void handle(command).catch((error: unknown) => send({ type: 'error', message: String(error) }));
});

async function handle(command: WorkerCommand): Promise<void> {
  switch (command.type) {
    case 'revive': {
      const revived = await Revival.revive({
        path: command.path,
        agentId: command.agentId,
        maxRevivals: 1000,
      });
      if (revived.ok) held = revived.session;
      send(
        revived.ok
          ? { type: 'revived', round: command.round, pid: process.pid, ok: true }
          : {
              type: 'revived',
              round: command.round,
              pid: process.pid,
              ok: false,
              reason: revived.reason,
            },
      );
      return;
    }
    case 'release':
      await held?.close();
      held = null;
      send({ type: 'released', round: command.round });
      return;
    case 'hold': {
      const session = await SessionClass.open(command.path, { durability: 'flush' });
      held = session;
      writing = true;
      writer = (async () => {
        let appended = 0;
        while (writing) {
          await session.append({
            type: 'message',
            role: 'user',
            content: [{ type: 'text', text: `still working ${appended}` }],
          });
          appended += 1;
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        return appended;
      })();
      send({ type: 'holding', pid: process.pid });
      return;
    }
    case 'stop': {
      writing = false;
      const appended = (await writer) ?? 0;
      await held?.close();
      held = null;
      send({ type: 'stopped', appended });
      return;
    }
    case 'exit':
      await held?.close();
      process.disconnect();
      return;
  }
}
