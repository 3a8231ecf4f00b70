import { Revival } from '../src/revival/index.ts';
import type { Session } from '../src/transcript/session.ts';

/*
 * One reviver of the race test, a long-lived process driven over IPC: `revive` revives the
 * transcript it names (after a short busy wait, to vary who comes first) and holds the session
 * as a real reviver would while its run goes on; `release` closes it.
 */

let held: Session | null = null;

process.on('message', async (message: { type: string; path?: string; spin?: number }) => {
  if (message.type === 'revive' && message.path !== undefined) {
    const until = performance.now() + (message.spin ?? 0);
    while (performance.now() < until) {
      // Spin: a timer would be far coarser than the race.
    }
    try {
      const revived = await Revival.revive({ path: message.path, agentId: 'main', maxRevivals: 3 });
      if (revived.ok) held = revived.session;
      process.send?.(
        revived.ok
          ? { ok: true, ordinal: revived.revival.ordinal }
          : { ok: false, reason: revived.reason, detail: revived.detail },
      );
    } catch (error) {
      process.send?.({ ok: false, reason: 'threw', detail: String(error) });
    }
  } else if (message.type === 'release') {
    await held?.close();
    held = null;
    process.send?.({ released: true });
  } else if (message.type === 'exit') {
    process.exit(0);
  }
});
process.send?.({ ready: true });
